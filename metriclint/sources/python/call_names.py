"""How a call is named: its arguments in order and by keyword, the dotted name of its callee,
and the module a file path stands for.

Every walk of the Python source names calls the same way, so that a callee recorded in one
file is found under the same name in another."""

from __future__ import annotations

import ast
from pathlib import PurePosixPath
from typing import NamedTuple, TypeGuard


class Argument(NamedTuple):
    """One argument of a call as written: `keyword` is None for a positional one; `star` marks
    `*args` and `**kwargs`, whose positions and names cannot be told. A named tuple, not a
    frozen dataclass, whose init sets each field through `object.__setattr__`: the walk makes
    one for each argument of most calls it meets."""

    value: ast.expr
    keyword: str | None = None
    star: bool = False
    where: ast.AST | None = None  # the `name=value` node of a keyword argument


def arguments(call: ast.Call) -> list[Argument]:
    """Positional arguments, then keyword ones (CPython keeps them apart)."""
    found = [Argument(a.value, star=True) if isinstance(a, ast.Starred) else Argument(a) for a in call.args]
    return found + [Argument(k.value, k.arg, k.arg is None, k) for k in call.keywords]


def passed_keywords(call: ast.Call) -> tuple[str, ...]:
    """The keywords a call passes; "*" where `**kwargs` or a starred argument may pass any."""
    found = tuple(k.arg or "*" for k in call.keywords) if call.keywords else ()
    return (*found, "*") if any(type(a) is ast.Starred for a in call.args) else found


def called_name(func: ast.expr) -> str:
    """The last name of what a call calls: `print(x)` -> `print`, `logger.info(x)` -> `info`,
    "" for `table[k](x)`."""
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""


def module_name(path: str) -> tuple[str, list[str]]:
    """The dotted module a file path stands for, and its package: `pkg/mod.py` -> `pkg.mod`, [pkg]."""
    parts = [p for p in PurePosixPath(path).with_suffix("").parts if p not in ("/", ".", "..")]
    if parts and parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def looked_up(node: ast.expr | None) -> TypeGuard[ast.Call]:
    """`getattr(obj, name)`: an attribute looked up by its name (a method, where it is called)."""
    return type(node) is ast.Call and called_name(node.func) == "getattr" and len(node.args) == 2 and not node.keywords


def binding(node: ast.expr, binds: frozenset[str]) -> bool:
    """A call that makes a function with some arguments bound (`partial(loss, mask)`,
    rules/dataflow.yaml `binds`): a function value, which the call it is returned to may call."""
    return type(node) is ast.Call and bool(node.args) and called_name(node.func) in binds
