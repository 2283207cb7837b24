"""What a function passes a function it defines itself, for the keys that nested function writes
into a dict of the enclosing one (`def add(counts, tag=""): stats[f"{tag}rate"] = ...`, called
as `add(kept, tag="kept_")` and `add(all_)`): each call's string for the parameter, or its default.
"""

from __future__ import annotations

import ast

from metriclint.sources.python import strings
from metriclint.sources.python.attribute_strings import string_defaults

Function = ast.FunctionDef | ast.AsyncFunctionDef


def passed_strings(outer: Function, nested: Function, param: str, lookup: strings.Lookup) -> tuple[str, ...] | None:
    """The strings the enclosing function `outer` passes for `param` at its calls of `nested`
    by name, a call that passes none giving the default; None when it never calls it there, or
    one call passes what is not known here (or, with no default, nothing)."""
    args = nested.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    default = string_defaults(args).get(param)
    found: list[str] = []
    for call in _calls_of(outer, nested.name):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None  # `add(*parts)`: which argument is the parameter is not told
        given = _argument(call, param, positional)
        texts = strings.values(given, lookup) if given is not None else (default,) if default is not None else None
        if not texts or any("{" in text for text in texts):
            return None
        found.extend(texts)
    return tuple(dict.fromkeys(found)) or None


def _calls_of(outer: Function, name: str) -> list[ast.Call]:
    return [node for node in ast.walk(outer) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name]


def _argument(call: ast.Call, param: str, positional: list[str]) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    index = positional.index(param) if param in positional else -1
    return call.args[index] if 0 <= index < len(call.args) else None
