"""What an annotation tells of the name it declares: a parameter's (`tracker: Tracker`) or a
local's (`groups: list[list[Sample]] = gather()`). The class of what it holds, of the items of a
list it holds (a loop over it binds each, bindings.py), the keys of a TypedDict of the module,
or that it is a dict a caller hands over, which the function may fill (bags.py). An optional
`None` (`Sample | None`) says nothing of the class of what is there when anything is.

A TypedDict each of whose fields is a dict of numbers by name (`weight_rms: dict[str, float]`)
declares families of metrics: the field names them, and the names under each are made at run
time (a module's, a layer's), so a key built from both names a family (bags.names_family).
"""

from __future__ import annotations

import ast
from typing import Callable, Collection, Mapping

from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.flow import Scope

_SEQUENCE_TYPES = frozenset({"list", "List", "Sequence", "Iterable", "tuple", "Tuple"})
_DICT_TYPES = frozenset({"dict", "Dict", "MutableMapping", "defaultdict", "DefaultDict", "OrderedDict", "Counter"})
_MAPPINGS = frozenset({"Mapping"})  # read-only: no dict a function fills, but its values are typed alike
_NUMBERS = frozenset({"float", "int", "Tensor"})


def annotated(
    scope: Scope,
    name: str,
    annotation: ast.expr,
    instance: Callable[[ast.expr], str | None],
    typed_dicts: Mapping[str, tuple[str, ...]],
    families: Collection[str] = (),
) -> None:
    """Record in `scope` what `annotation` says `name` holds; `instance` reads a class's name as
    the file imports it, `typed_dicts` are the module's TypedDicts with their fields, `families`
    those of them whose fields are each a dict of numbers by name (`family_table`)."""
    annotation = _without_none(unquoted(annotation))
    declared = annotation.id if type(annotation) is ast.Name else ""
    fields = typed_dicts.get(declared)
    if fields:
        scope.collections[name] = fields
        if declared in families:
            scope.family_tables.add(name)
    made = instance(annotation)
    if made is not None:
        scope.instances[name] = made
    item = sequence_item(annotation)
    if item is not None:
        element = instance(item)
        inner = sequence_item(item)
        nested = instance(inner) if inner is not None else None
        if element is not None:
            scope.elements[name] = element
        if nested is not None:
            scope.nested[name] = nested
    if called_name(annotation.value if isinstance(annotation, ast.Subscript) else annotation) in _DICT_TYPES:
        scope.containers.add(name)


def family_table(node: ast.ClassDef) -> bool:
    """Whether each field a class declares is a dict of numbers by name (`dict[str, float]`)."""
    declared = [s.annotation for s in node.body if isinstance(s, ast.AnnAssign)]
    return bool(declared) and all(_numbers_by_name(_without_none(unquoted(a))) for a in declared)


def _numbers_by_name(annotation: ast.expr) -> bool:
    pair = _mapping_pair(annotation)
    return pair is not None and called_name(pair[0]) == "str" and called_name(_without_none(pair[1])) in _NUMBERS


def sequence_item(annotation: ast.expr) -> ast.expr | None:
    """What a sequence's annotation says each item is (`list[Sample]`, a tuple's first type);
    None for any other annotation."""
    if not (isinstance(annotation, ast.Subscript) and called_name(annotation.value) in _SEQUENCE_TYPES):
        return None
    inner = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts else annotation.slice
    return _without_none(inner)


def unquoted(annotation: ast.expr) -> ast.expr:
    """A forward reference written as a string (`trainer: "pl.Trainer"`, for an import made only
    under TYPE_CHECKING) read as the annotation it spells; any other annotation as it is."""
    if not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
        return annotation
    try:
        return ast.parse(annotation.value.strip(), mode="eval").body
    except SyntaxError:
        return annotation


def mapping_value(annotation: ast.expr) -> ast.expr | None:
    """What a dict's annotation says each value is (`dict[str, Meter]`); None for any other."""
    pair = _mapping_pair(annotation)
    return _without_none(pair[1]) if pair is not None else None


def _mapping_pair(annotation: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """A dict's annotation's key and value types (`dict[str, Meter]`); None for any other."""
    if not (isinstance(annotation, ast.Subscript) and called_name(annotation.value) in _DICT_TYPES | _MAPPINGS):
        return None
    pair = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    return (pair[0], pair[1]) if len(pair) == 2 else None


def _without_none(annotation: ast.expr) -> ast.expr:
    """`X | None`, `None | X`, `Optional[X]`: X."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        if isinstance(annotation.left, ast.Constant) and annotation.left.value is None:
            return _without_none(annotation.right)
        if isinstance(annotation.right, ast.Constant) and annotation.right.value is None:
            return _without_none(annotation.left)
    if isinstance(annotation, ast.Subscript) and called_name(annotation.value) == "Optional":
        return annotation.slice
    return annotation
