"""A function that flattens the nested dict it is handed: it walks the dict's items and calls
itself on each value that is a dict, handing on the key so far, and keys every other value by
the keys above it joined with a separator (`flatten_dict({"losses": {"policy": x}})` holds
"losses/policy"). A caller logs what it returns as the dict it passed, each nested dict's keys
joined to the keys above them (model.HeldOptions `flattens`).

Told by the shape of the code, not by the function's name: a loop `for k, v in d.items()` over
a parameter, a call of the function itself on `v` in that loop, and the key it hands on for
another of its parameters written as that parameter, a separator, then `k`.
"""

from __future__ import annotations

import ast
from typing import Mapping

from metriclint.sources.python import strings
from metriclint.sources.python.attribute_strings import string_defaults
from metriclint.sources.python.call_names import called_name

_KEY, _ABOVE = "\x01", "\x02"  # what the loop's key and the keys above it are written as, to find what joins them


def flattened_param(node: ast.FunctionDef | ast.AsyncFunctionDef, params: tuple[str, ...]) -> tuple[str, str] | None:
    """(the parameter, the separator) of a function that flattens the nested dict that parameter
    is; None for any other function. A separator that is a parameter with a string default
    (`sep="/"`) is its placeholder (`{sep}`): each call's string, or the default, fills it."""
    bound, defaults = _bound_in(node), string_defaults(node.args)
    for loop in ast.walk(node):
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        walked = _items_loop(loop, params)
        if walked is None:
            continue
        param, key, value = walked
        for call in ast.walk(loop):
            if isinstance(call, ast.Call) and called_name(call.func) == node.name:
                joiner = _joiner(call, params, param, key, value, bound, defaults)
                if joiner:
                    return param, joiner
    return None


def _items_loop(loop: ast.For | ast.AsyncFor, params: tuple[str, ...]) -> tuple[str, str, str] | None:
    """(parameter, key, value) of `for key, value in param.items()`; None for another loop."""
    over, target = loop.iter, loop.target
    if not (
        isinstance(over, ast.Call)
        and isinstance(over.func, ast.Attribute)
        and over.func.attr == "items"
        and isinstance(over.func.value, ast.Name)
        and over.func.value.id in params
        and isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
    ):
        return None
    key, value = target.elts
    return over.func.value.id, key.id, value.id  # type: ignore[attr-defined]


def _joiner(
    call: ast.Call, params: tuple[str, ...], param: str, key: str, value: str, bound: Mapping[str, ast.expr], defaults: Mapping[str, str]
) -> str | None:
    """The separator the recursive `call` joins the loop's key to the keys above it with: it
    must hand the loop's value on as the dict and, as another parameter, a key written as that
    parameter, a separator and the loop's key (through a name bound to it: `new_key =
    parent_key + sep + k if parent_key else k`)."""
    own = [p for p in params if p not in ("self", "cls")]
    given = {own[i]: arg for i, arg in enumerate(call.args) if i < len(own) and not isinstance(arg, ast.Starred)}
    given |= {k.arg: k.value for k in call.keywords if k.arg is not None}
    dict_given = given.get(param)
    if not (isinstance(dict_given, ast.Name) and dict_given.id == value):
        return None
    for above, written in given.items():
        if above == param:
            continue
        for text in _texts(written, above, key, bound, defaults):
            if text.startswith(_ABOVE) and text.endswith(_KEY) and text.count(_ABOVE) == 1 and text.count(_KEY) == 1:
                joiner = text[1:-1]
                if joiner and ("{" not in joiner or joiner[1:-1] in defaults):
                    return joiner
    return None


def _texts(node: ast.expr, above: str, key: str, bound: Mapping[str, ast.expr], defaults: Mapping[str, str]) -> tuple[str, ...]:
    """The strings the key handed on may be, the keys above written _ABOVE and the loop's key _KEY."""
    return strings.values(node, _Parts(above, key, bound, defaults).part) or ()


class _Parts:
    """What each name in the key handed on stands for (`_texts`). A class, not a closure that
    calls itself: that would be a reference cycle, kept alive until a collection."""

    def __init__(self, above: str, key: str, bound: Mapping[str, ast.expr], defaults: Mapping[str, str]) -> None:
        self.above, self.key, self.bound, self.defaults = above, key, bound, defaults
        self.seen: set[str] = set()

    def part(self, name: str) -> tuple[str, ...] | None:
        if name == self.above:
            return (_ABOVE,)
        if name == self.key:
            return (_KEY,)
        if name in self.defaults:
            return (f"{{{name}}}",)  # a parameter with a string default: each call's, filled where it is read
        if name in self.bound and name not in self.seen:  # a name bound once, to the key made in the loop
            self.seen.add(name)
            return strings.values(self.bound[name], self.part)
        return None


def _bound_in(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """The names the function binds once, each to what: a key made in the loop and handed on by name."""
    bound: dict[str, ast.expr] = {}
    twice: set[str] = set()
    for statement in ast.walk(node):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if name in bound:
                twice.add(name)
            bound[name] = statement.value
    return {name: value for name, value in bound.items() if name not in twice}
