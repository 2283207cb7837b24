"""The fields of a dataclass, for `dataclasses.asdict(self)` in one of its methods: a dict of
each field under its own name (Python docs, dataclasses.asdict), so a record of rates that
turns itself into a dict for a tracker logs one key per field. So does a record made elsewhere
and turned into a dict where it is logged (`asdict(stats)`, a named tuple's `stats._asdict()`,
a pydantic model's `stats.model_dump()`): the fields of the record's class, of the module
(`record_fields`, or a named tuple made by a call, `functional_fields`)."""

from __future__ import annotations

import ast
from typing import Callable

_DECORATORS = frozenset({"dataclasses.dataclass"})
AS_DICT = frozenset({"dataclasses.asdict"})
# The methods that return a record's fields as a dict, each under its own name: a named tuple's
# `_asdict()` (Python docs, collections.namedtuple) and a pydantic model's `model_dump()`
# (pydantic docs, Serialization).
AS_DICT_METHODS = frozenset({"_asdict", "model_dump"})
# how a module that turns a dataclass or a model into a dict writes it
AS_DICT_CALLS = ("asdict(", "model_dump(")
# A named tuple's class, made by a call (`namedtuple("Stats", ["loss", "lr"])`) or extended
# (`class Stats(NamedTuple)`), whose fields are its items in order (Python docs).
_NAMED_TUPLES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
# `fields(record)` (Python docs, dataclasses.fields): a tuple of Field objects, whose `.name`
# is each field's name, in the order the class declares them.
FIELDS = frozenset({"dataclasses.fields"})
# A pydantic model's declared fields, a dict keyed by their names (pydantic docs: `model_fields`,
# `__fields__` before version 2), and a dataclass's (`__dataclass_fields__`).
FIELD_TABLES = frozenset({"model_fields", "__fields__", "__dataclass_fields__"})
_MODELS = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel"})
# Annotations that make no field (ClassVar) or one asdict leaves out (InitVar, an argument of __init__ only).
_NO_FIELD = frozenset({"ClassVar", "InitVar"})
# Annotations of a field that holds no measurement: its key is logged, but `init` drafts no metric for it.
_NOT_MEASURED = frozenset({"str", "bool"})


def fields(node: ast.ClassDef, resolve: Callable[[ast.expr], str | None]) -> list[tuple[ast.Name, bool]]:
    """The class's own fields, each with whether it holds a measurement; none when no decorator
    of the class resolves to `dataclasses.dataclass` (bare or called)."""
    if not any(resolve(d.func if isinstance(d, ast.Call) else d) in _DECORATORS for d in node.decorator_list):
        return []
    found = []
    for statement in node.body:
        if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
            continue
        annotation = _outer(statement.annotation)
        if annotation not in _NO_FIELD:
            found.append((statement.target, annotation not in _NOT_MEASURED))
    return found


def _outer(annotation: ast.expr) -> str:
    """The annotation's outermost name: `ClassVar` for `typing.ClassVar[int]`."""
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def names(node: ast.ClassDef, resolve: Callable[[ast.expr], str | None]) -> tuple[str, ...]:
    """The fields' names of a dataclass, or of a pydantic model that extends `BaseModel` itself,
    as a loop over them reads them (`for f in fields(Stats)`, `for name in Stats.model_fields`);
    none for another class."""
    if any(resolve(base) in _MODELS for base in node.bases):
        return tuple(
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and _outer(s.annotation) not in _NO_FIELD
        )
    return tuple(target.id for target, _ in fields(node, resolve))


def record_fields(node: ast.ClassDef, resolve: Callable[[ast.expr], str | None], named_tuples_only: bool = False) -> tuple[str, ...]:
    """The fields of a record class, in the order a call passes them by position: a named
    tuple's (`class Stats(NamedTuple)`), and unless `named_tuples_only` a dataclass's or a
    pydantic model's (`names`); none for another class."""
    if not any(isinstance(s, ast.AnnAssign) for s in node.body):
        return ()  # no field declared: most classes (a model, a trainer), told apart without resolving a name
    if any(resolve(base) in _NAMED_TUPLES for base in node.bases):
        return tuple(s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
    return () if named_tuples_only else names(node, resolve)


def functional_fields(call: ast.expr, resolve: Callable[[ast.expr], str | None]) -> tuple[str, ...]:
    """The fields of a named tuple's class made by a call: `namedtuple("Stats", ["loss", "lr"])`
    or `"loss lr"` (commas allowed), `NamedTuple("Stats", [("loss", float), ...])`; none for
    another expression."""
    if not (isinstance(call, ast.Call) and len(call.args) >= 2 and resolve(call.func) in _NAMED_TUPLES):
        return ()
    written = call.args[1]
    if isinstance(written, ast.Constant) and isinstance(written.value, str):
        return tuple(written.value.replace(",", " ").split())
    if not isinstance(written, (ast.List, ast.Tuple)):
        return ()
    items = [item.elts[0] if isinstance(item, ast.Tuple) and item.elts else item for item in written.elts]
    found = tuple(item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str))
    return found if len(found) == len(items) else ()
