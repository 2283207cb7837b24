"""The fields of a dataclass, for `dataclasses.asdict(self)` in one of its methods: a dict of
each field under its own name (Python docs, dataclasses.asdict), so a record of rates that
turns itself into a dict for a tracker logs one key per field."""

from __future__ import annotations

import ast
from typing import Callable

_DECORATORS = frozenset({"dataclasses.dataclass"})
AS_DICT = frozenset({"dataclasses.asdict"})
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
