"""Methods whose return a framework logs, for the walk (rules/code/frameworks.yaml
`logged_returns`): which methods of a class are such hooks, and which keys of what they return
the class's own override of the framework's logging method consumes instead of passing on.

A class is asked only when one of its bases resolves, through the file's imports, to a base the
knowledge names: most classes name none, and for them nothing here runs."""

from __future__ import annotations

import ast
from typing import Callable, Iterable

from metriclint.knowledge.logged_returns import LoggedReturn
from metriclint.sources.python import strings

Methods = dict[str, "ast.FunctionDef | ast.AsyncFunctionDef"]
# A hook of the class: what the knowledge says of it, and the keys the class's logging method reads by name.
Hooked = dict[str, tuple[LoggedReturn, frozenset[str]]]


def hooked_methods(node: ast.ClassDef, bases: Iterable[str], known: Callable[[str], tuple[LoggedReturn, ...]]) -> Hooked:
    """The methods of the class `node` whose return the framework of one of its `bases` (full
    import paths) logs. A class that overrides how the framework keeps the dict logs nothing
    from it; one that overrides the logging method logs only if that method hands its logs on to
    the framework's, and then not the keys it reads by name."""
    hooks = [hook for base in bases for hook in known(base)]
    if not hooks:
        return {}
    methods: Methods = {s.name: s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: Hooked = {}
    for hook in hooks:
        if hook.method not in methods or hook.overrides & methods.keys():
            continue
        logging = methods.get(hook.logged_by) if hook.logged_by else None
        if logging is not None and not _hands_on(logging, hook.logged_by):
            continue
        found[hook.method] = (hook, read_by_name(logging) if logging is not None else frozenset())
    return found


def returned_part(value: ast.expr, element: int | None) -> ast.expr | None:
    """What a `return` hands the framework: its tuple's `element`, or the value itself."""
    if element is None:
        return value
    if isinstance(value, ast.Tuple) and element < len(value.elts) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return value.elts[element]
    return None


def _hands_on(method: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether the override calls the framework's method of its own name (`super().log(logs)`,
    `Trainer.log(self, logs)`): without it, nothing kept reaches the framework's logging."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name for node in ast.walk(method))


def read_by_name(method: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The keys a method reads, deletes or tests by name (`kept[f"{key}/{split}_sum"]`,
    `del kept["count/chosen"]`, `"count/chosen" in kept`, `kept.pop("kl")`), each string the
    key may be, with the names bound in the method to strings or looped over literal lists."""
    bound: dict[str, tuple[str, ...]] = {}

    def lookup(name: str) -> tuple[str, ...] | None:
        return bound.get(name)

    for node in ast.walk(method):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            found = strings.literal_collection(node.iter)
            if found:
                bound[node.target.id] = found
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found = strings.values(node.value, lookup)
            if found:
                bound[node.targets[0].id] = found
    named: set[str] = set()
    for node in ast.walk(method):
        for key in _named_keys(node):
            named.update(strings.values(key, lookup) or ())
    return frozenset(named)


def _named_keys(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Store) and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
        return [node.slice]
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return [node.left]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop") and node.args:
        return [node.args[0]]
    return []
