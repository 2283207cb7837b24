"""Flags: which `if` tests read one, and where the project defines one with its default.

A value that is a constant placeholder unless a flag is set (`stat = 0.0`, then `if
args.track: stat = max(...)`) is that constant on the default path only if the flag is off
unless given; the walk records both halves and the checks join them across the project.
"""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.model import FlagDefault, Span


def flag_test(test: ast.expr) -> str:
    """The flag an `if` test reads by itself, as written (`args.track`, `self.cfg.track`,
    `track`); "" for anything else (a comparison, a negation, several flags)."""
    node = test
    while isinstance(node, ast.Attribute):
        node = node.value
    return ast.unparse(test) if isinstance(node, ast.Name) else ""


def option(node: ast.Call, where: Callable[[ast.AST], Span]) -> FlagDefault | None:
    """An argparse option, `parser.add_argument("--track-x", action="store_true")`: off unless
    given when it stores True, or its default is False, None or 0 (or left out). `where` gives
    the option's span, asked of an option only: the walk asks about every call, and a span
    made for each of Megatron-LM's 126,511 calls cost 0.27 CPU s."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
        return None
    names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = next((n for n in names if n.startswith("--")), None)
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    dest = keywords.get("dest")
    name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else long[2:].replace("-", "_") if long else None
    if not name:
        return None
    action = keywords.get("action")
    stores = action.value if isinstance(action, ast.Constant) else None if action is None else "?"
    default = keywords.get("default")
    off = stores in ("store_true", None) and (default is None or _falsy(default))
    return FlagDefault(name, off, where(node))


def field(node: ast.AnnAssign, where: Callable[[ast.AST], Span]) -> FlagDefault | None:
    """A config field, `track: bool = False` in a class body; `where` as for `option`: most
    annotated fields are no flag."""
    if not isinstance(node.target, ast.Name) or node.value is None:
        return None
    if not (isinstance(node.annotation, ast.Name) and node.annotation.id == "bool"):
        return None
    return FlagDefault(node.target.id, _falsy(node.value), where(node))


def _falsy(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, None, 0) and not isinstance(node.value, str)


def off_by_default(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether the parameter `name` defaults to False, None or 0: a flag a call turns on only
    by passing it."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults) :], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    default = next((d for a, d in pairs if a.arg == name), None)
    return isinstance(default, ast.Constant) and default.value in (False, None, 0)
