"""Objects a class keeps on `self` across its methods (issue 30, flow across methods).

A timer group made in `__init__` (`self.timers = Timers()`) and read in another method
(`self.timers("step").elapsed()`) is the same object wherever it is read. The walk visits one
method at a time, so it asks this module first, at the class: each attribute whose every
assignment in the class's methods makes the same knowledge-base object (rules/code/, a chain
such as `pkg.Timers()`), which then resolves in every method as a local holding it would.

Only statements are searched, not expressions: an attribute is assigned by a statement, and a
class's statements are a small part of its nodes.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Mapping

_BODIES = ("body", "orelse", "finalbody")


def held_objects(
    node: ast.ClassDef, chain: Callable[[ast.expr], str | None], objects: frozenset[str], inherited: Mapping[str, str]
) -> dict[str, str]:
    """`self.X` -> the knowledge-base object every assignment of it in the class's methods
    makes (`chain`: what an expression is as the file's imports name it; `objects`: the chains
    worth following). `inherited`: what the class's bases in the same module hold, unless the
    class assigns the attribute itself. An attribute also assigned anything else, or set in a
    way other than a plain assignment (`self.a, self.b = pair`, `self.t += 1`), holds nothing known."""
    assigned: dict[str, set[str | None]] = {}
    for method in node.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
            own = method.args.args[0].arg
            for target, value in _attribute_writes(method.body, own):
                if not (isinstance(value, ast.Constant) and value.value is None):  # `None` until it is set
                    assigned.setdefault(target, set()).add(chain(value) if value is not None else None)
    held = {name: made for name, made in inherited.items() if name not in assigned}
    for name, made in assigned.items():
        (only,) = made if len(made) == 1 else (None,)
        if only is not None and only in objects:
            held[name] = only
    return held


def _attribute_writes(body: list[ast.stmt], own: str) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute of `own`, the value assigned, or None when not plainly assigned) for each write."""
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            continue  # another class's `self`
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                yield from _targets(target, statement.value, own)
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            plain = statement.value if isinstance(statement, ast.AnnAssign) else None
            yield from _targets(statement.target, plain, own)
        for name in _BODIES:
            yield from _attribute_writes(getattr(statement, name, None) or [], own)
        for handler in getattr(statement, "handlers", None) or []:
            yield from _attribute_writes(handler.body, own)
        for case in getattr(statement, "cases", None) or []:
            yield from _attribute_writes(case.body, own)


def _targets(target: ast.expr, value: ast.expr | None, own: str) -> Iterator[tuple[str, ast.expr | None]]:
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == own:
        yield target.attr, value
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _targets(element, None, own)
