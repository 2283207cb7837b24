"""Methods whose return a framework logs, for the walk (rules/code/frameworks.yaml
`logged_returns`): which methods of a class are such hooks, and which keys of what they return
the class's own override of the framework's logging method consumes instead of passing on.

A class is asked only when one of its bases resolves, through the file's imports, to a base the
knowledge names: most classes name none, and for them nothing here runs."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, Iterable

from metriclint.knowledge.logged_returns import LoggedReturn
from metriclint.model import OVERRIDDEN, Held
from metriclint.sources.python import strings
from metriclint.sources.python.code_shapes import statement_blocks

Methods = dict[str, "ast.FunctionDef | ast.AsyncFunctionDef"]
# A hook of the class: what the knowledge says of it, the keys the class's logging method reads
# by name, and the `return` statements (by id) the framework's call reaches (None: every one).
Hook = tuple[LoggedReturn, frozenset[str], "frozenset[int] | None"]
Hooked = dict[str, Hook]


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
        consumed = hook.consumes | (read_by_name(logging) if logging is not None else frozenset())
        found[hook.method] = (hook, consumed, reached_returns(methods[hook.method], hook.called_with))
    return found


def reached_returns(method: ast.FunctionDef | ast.AsyncFunctionDef, given: tuple[tuple[str, str], ...]) -> frozenset[int] | None:
    """The `return` statements (by id) a call that passes these strings for the method's
    parameters reaches: a test of such a parameter against strings (`if mode == "loss":`,
    `elif mode in ("predict", "tensor"):`) takes its one branch, and a branch taken that always
    returns ends the body. None when the method names none of the parameters: every return."""
    args = method.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    known = {name: value for name, value in given if name in params}
    if not known:
        return None
    found: set[int] = set()
    _reach(method.body, known, found)
    return frozenset(found)


def _reach(body: list[ast.stmt], known: dict[str, str], found: set[int]) -> bool:
    """Adds the returns `body` reaches to `found`; whether it always leaves (returns or raises)."""
    for statement in body:
        if isinstance(statement, ast.Return):
            found.add(id(statement))
            return True
        if isinstance(statement, ast.Raise):
            return True
        if isinstance(statement, ast.If):
            truth = _truth(statement.test, known)
            left = _reach(statement.body, known, found) if truth is not False else True
            other = _reach(statement.orelse, known, found) if truth is not True else True
            if left and other:
                return True
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in statement_blocks(statement):
                _reach(inner, known, found)
    return False


def _truth(test: ast.expr, known: dict[str, str]) -> bool | None:
    """What a test of a known parameter against strings is (`mode == "loss"`, `"loss" != mode`,
    `mode in ("loss", "tensor")`); None for any other test."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(right, ast.Name) and isinstance(op, (ast.Eq, ast.NotEq)):
        left, right = right, left
    if not isinstance(left, ast.Name) or left.id not in known:
        return None
    value = known[left.id]
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return (right.value == value) == isinstance(op, ast.Eq)
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        texts = [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(texts) == len(right.elts):
            return (value in texts) == isinstance(op, ast.In)
    return None


def overridden(held: tuple[Held, ...], owner: str, method: str) -> tuple[Held, ...]:
    """What a hook returns of another method of its own class (`return self.compute_loss(x)`):
    the framework calls the hook on an instance of the class or of a subclass of the project,
    so what runs is that method as the instance's class has it (model.Held, "overridden")."""
    own = owner + "."
    return tuple(
        replace(h, kind=OVERRIDDEN, where=method) if h.kind == "result" and h.name.startswith(own) and "." not in h.name[len(own) :] else h
        for h in held
    )


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
