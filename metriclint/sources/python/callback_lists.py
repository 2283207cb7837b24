"""The callbacks a function of the project returns, for `Trainer(callbacks=get_callbacks(args))`:
each named as the file's imports resolve it, so the project-wide step can judge them as if the
call listed them (evidence/callbacks.py).

A function gives its list when every `return` returns a list (or tuple) written out, or a
local name that only ever holds one: bound to a list written out (or an `a if c else b` of
two), grown by `append`, `extend` or `+=` with what is written out, and otherwise only read.
An item is a callback made or named (`Report(path)`, `Report`), or one taken from a dict of
the module written out (`CALLBACKS[name]()`: any of its values). Anything else gives nothing:
the callbacks are not known.
"""

from __future__ import annotations

import ast
from typing import Callable

_GROWN = ("append", "extend")


class _Unknown(Exception):
    """A callback, or a use of the list, that the function does not show."""


def returned_callbacks(
    function: ast.FunctionDef | ast.AsyncFunctionDef, tables: dict[str, ast.Dict], name: Callable[[ast.expr], str | None]
) -> tuple[str, ...] | None:
    """The callbacks `function` returns (`tables`: the module's dicts written out, by name;
    `name` names a class as the file's imports do), or None when they are not known."""
    try:
        return tuple(dict.fromkeys(_Lister(function, tables, name).returned()))
    except _Unknown:
        return None


class _Lister:
    def __init__(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, tables: dict[str, ast.Dict], name: Callable[[ast.expr], str | None]
    ) -> None:
        self.nodes = list(_own_nodes(function))
        self.parents = {child: node for node in self.nodes for child in ast.iter_child_nodes(node)}
        self.tables = tables
        self.name = name
        self.held: dict[str, list[str] | None] = {}  # each local list's callbacks; None while it is followed

    def returned(self) -> list[str]:
        returns = [n for n in self.nodes if isinstance(n, ast.Return)]
        if not returns:
            raise _Unknown
        return [c for r in returns for c in self._listed(r.value)]

    def _listed(self, value: ast.expr | None) -> list[str]:
        """The callbacks a returned (or assigned) value holds."""
        if isinstance(value, (ast.List, ast.Tuple)):
            return [c for item in value.elts for c in self._item(item)]
        if isinstance(value, ast.IfExp):
            return self._listed(value.body) + self._listed(value.orelse)
        if isinstance(value, ast.Name):
            return self._held(value.id)
        raise _Unknown

    def _held(self, local: str) -> list[str]:
        """What a local list holds, from every use of its name (`a = b; b = a` is not known)."""
        if local not in self.held:
            self.held[local] = None
            self.held[local] = self._uses(local)
        found = self.held[local]
        if found is None:
            raise _Unknown
        return found

    def _uses(self, local: str) -> list[str]:
        found: list[str] = []
        for node in self.nodes:
            if not (isinstance(node, ast.Name) and node.id == local):
                continue
            parent = self.parents.get(node)
            if isinstance(parent, ast.Assign) and parent.targets == [node]:
                found += self._listed(parent.value)
            elif isinstance(parent, ast.AugAssign) and parent.target is node and isinstance(parent.op, ast.Add):
                found += self._listed(parent.value)
            elif isinstance(parent, ast.Attribute) and parent.attr in _GROWN:
                found += self._grown(parent)
            elif not isinstance(parent, (ast.Return, ast.Compare, ast.If, ast.UnaryOp)):
                raise _Unknown  # handed on, kept, changed some other way
        return found

    def _grown(self, method: ast.Attribute) -> list[str]:
        call = self.parents.get(method)
        if not isinstance(call, ast.Call) or call.func is not method or len(call.args) != 1 or call.keywords:
            raise _Unknown
        return self._item(call.args[0]) if method.attr == "append" else self._listed(call.args[0])

    def _item(self, item: ast.expr) -> list[str]:
        made = item.func if isinstance(item, ast.Call) else item
        if isinstance(made, ast.Subscript) and isinstance(made.value, ast.Name) and made.value.id in self.tables:
            return [self._named(value) for value in self.tables[made.value.id].values]
        return [self._named(made)]

    def _named(self, node: ast.expr) -> str:
        path = self.name(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
        if path is None or "(" in path:
            raise _Unknown
        return path


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The function's nodes, not those of the functions and classes defined inside it."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def module_tables(tree: ast.Module) -> dict[str, ast.Dict]:
    """The module's names bound once to a dict written out (`CALLBACKS = {...}`) that nothing
    in the module changes (a `register` that sets `CALLBACKS[name]` makes it unknown)."""
    bound: dict[str, list[ast.expr]] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name) and statement.value is not None:
                    bound.setdefault(target.id, []).append(statement.value)
    tables = {
        name: values[0]
        for name, values in bound.items()
        if len(values) == 1 and isinstance(values[0], ast.Dict) and None not in values[0].keys
    }
    for node in ast.walk(tree) if tables else ():
        changed = node.value if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load) else None
        if isinstance(node, ast.Attribute) and node.attr not in _READ:
            changed = node.value
        if isinstance(changed, ast.Name):
            tables.pop(changed.id, None)
    return tables


_READ = frozenset({"get", "keys", "values", "items", "copy"})
