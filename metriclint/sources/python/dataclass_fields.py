"""The fields of a dataclass, for `dataclasses.asdict(self)` in one of its methods: a dict of
each field under its own name (Python docs, dataclasses.asdict), so a record of rates that
turns itself into a dict for a tracker logs one key per field."""

from __future__ import annotations

import ast
from typing import Callable

_DECORATORS = frozenset({"dataclasses.dataclass"})
AS_DICT = frozenset({"dataclasses.asdict"})
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
