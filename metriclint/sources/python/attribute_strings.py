"""The strings a class's own attributes hold, for keys built in its methods: `f"device{self.
separator}mfu"` with `separator: str = "/"` stored by `__init__` is `device/mfu`.

An attribute is known when every assignment the class makes to it is: a string in the class
body (`SEPARATOR = "/"`), or in a method `self.sep = "/"` or `self.sep = sep` of a parameter
whose default is a string (what the class logs unless a caller passes another); a property is
known when all it does is return a string written out. Any other assignment of it, or another
property of its name, anywhere in the class, leaves it unknown. Read only when a key asks for one.
"""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.held import attribute_writes


def attribute_strings(node: ast.ClassDef) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    unknown: set[str] = set()
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            _add(found, unknown, statement.targets[0].id, _string(statement.value))
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if is_property(statement):
                returned = property_value(statement)
                _add(found, unknown, statement.name, _string(returned) if returned is not None else None)
            defaults = string_defaults(statement.args)
            for attribute, value in attribute_writes(statement):
                _add(found, unknown, attribute, assigned_text(value, defaults.get))
    return {name: tuple(dict.fromkeys(texts)) for name, texts in found.items() if name not in unknown}


def assigned_text(value: ast.expr | None, default: Callable[[str], str | None]) -> str | None:
    """The string one assignment of an attribute stores: a string written out, or a parameter
    whose default (`default`) is one; None for anything else (`value` None: changed in place).
    The walk's note of a class's strings for other modules (bindings.py) reads it alike."""
    if value is None:
        return None
    text = _string(value)
    return default(value.id) if text is None and isinstance(value, ast.Name) else text


def is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a method is read as an attribute: decorated `@property` or `@cached_property`."""
    return any(called_name(d) in _PROPERTIES for d in node.decorator_list)


_PROPERTIES = frozenset({"property", "cached_property"})


def property_value(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """What a property returns when returning it is all it does (a docstring aside): the
    attribute it stands for holds that. None for any other body."""
    body = node.body[1:] if ast.get_docstring(node, clean=False) is not None else node.body
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def _add(found: dict[str, list[str]], unknown: set[str], name: str, text: str | None) -> None:
    if text is None:
        unknown.add(name)
    else:
        found.setdefault(name, []).append(text)


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def string_defaults(args: ast.arguments) -> dict[str, str]:
    """Each parameter whose default is a string written out, in the order they are declared."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    pairs += [(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults) if default is not None]
    return {arg.arg: text for arg, default in pairs if (text := _string(default)) is not None}
