"""A function a function defines itself, and the dicts of the enclosing one it fills
(`def add(counts, tag=""): stats[f"{tag}rate"] = ...`, `stats` bound outside it): the entries
join the enclosing dict as the enclosing function calls it (`add(kept, tag="kept_")` and
`add(all_)` make `kept_rate` and `rate`).
"""

from __future__ import annotations

import ast
from dataclasses import replace

from metriclint.base import keys
from metriclint.model import Bag, CodeFact, ResultOf
from metriclint.sources.python import strings
from metriclint.sources.python.attribute_strings import string_defaults
from metriclint.sources.python.flow import Scope

Function = ast.FunctionDef | ast.AsyncFunctionDef


def enclose(nested: Scope, outer: Scope, lookup: strings.Lookup) -> None:
    """The entries `nested` puts in dicts `outer` binds join them, with the code facts and project
    calls of their values (its own parameters mean nothing out there), each key as the enclosing
    function's calls fill the nested function's parameters in it; `lookup`: the strings a name may
    be in `outer`."""
    if not nested.bags or not outer.bags:
        return
    for name, bag in nested.bags.items():
        if name in outer.bags and name not in nested.params and name not in nested.carries and bag.entries:
            entries = tuple(
                replace(e, key=key, value=frozenset(a for a in e.value if isinstance(a, (CodeFact, ResultOf))))
                for e in bag.entries
                for key in _called_with(e.key, nested, outer, lookup)
            )
            outer.bags[name] = outer.bags[name] | Bag(entries)


def _called_with(key: str, nested: Scope, outer: Scope, lookup: strings.Lookup) -> tuple[str, ...]:
    """The keys a nested function's key names its own parameter in, as the enclosing function
    calls it (`f"{tag}rate"` with `tag=""` and `tag="kept_"`); the key as it is where a call
    passes what is not known here."""
    for placeholder in keys.placeholders(key):
        param = placeholder[1:-1]
        if param not in nested.params or nested.definition is None or outer.definition is None:
            continue
        passed = passed_strings(outer.definition, nested.definition, param, lookup)
        if passed is not None:
            return tuple(dict.fromkeys(k for text in passed for k in _called_with(key.replace(placeholder, text), nested, outer, lookup)))
    return (key,)


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
