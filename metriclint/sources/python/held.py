"""What holds across a class's methods (issue 30, flow across methods): the objects it keeps
on `self`, and the methods it calls only after stepping its scheduler.

A timer group made in `__init__` (`self.timers = Timers()`) and read in another method
(`self.timers("step").elapsed()`) is the same object wherever it is read. The walk visits one
method at a time, so it asks this module first, at the class: each attribute whose every
assignment in the class's methods makes the same knowledge-base object (rules/code/, a chain
such as `pkg.Timers()`), which then resolves in every method as a local holding it would.

A method that reads the learning rate (`self.scheduler.get_last_lr()`) and that the class
calls only after `self.scheduler.step()` reads the next step's rate, as a read after the step in
the same method does.

Only statements are searched, not expressions, unless a method steps a scheduler: an attribute
is assigned by a statement, and a class's statements are a small part of its nodes.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Mapping

from metriclint.sources.python.code_shapes import block_fields, statement_blocks

Method = tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.stmt]]


def methods_of(node: ast.ClassDef) -> list[Method]:
    """The class's methods, each with its statements (`_statements`): searched once for what
    the class's methods write (`class_writes`) and for a scheduler step (`stepped_callees`)."""
    return [(m, _statements(m.body)) for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]


def class_writes(methods: list[Method]) -> list[tuple[str, ast.expr | None]]:
    """Every write of an attribute of `self` in the class's methods (`attribute_writes`)."""
    return [write for method, statements in methods for write in attribute_writes(method, statements)]


def held_objects(
    writes: list[tuple[str, ast.expr | None]],
    chain: Callable[[ast.expr], str | None],
    objects: frozenset[str],
    inherited: Mapping[str, str],
) -> dict[str, str]:
    """`self.X` -> the knowledge-base object every assignment of it in the class's methods
    (`writes`, from `class_writes`) makes (`chain`: what an expression is as the file's imports
    name it; `objects`: the chains worth following). `inherited`: what the class's bases in the
    same module hold, unless the class assigns the attribute itself. An attribute also assigned
    anything else, or set in a way other than a plain assignment (`self.a, self.b = pair`,
    `self.t += 1`), holds nothing known."""
    assigned: dict[str, set[str | None]] = {}
    for target, value in writes:
        if not (isinstance(value, ast.Constant) and value.value is None):  # `None` until it is set
            assigned.setdefault(target, set()).add(chain(value) if value is not None else None)
    held = {name: made for name, made in inherited.items() if name not in assigned}
    for name, made in assigned.items():
        (only,) = made if len(made) == 1 else (None,)
        if only is not None and only in objects:
            held[name] = only
    return held


def attribute_writes(
    method: ast.FunctionDef | ast.AsyncFunctionDef, statements: list[ast.stmt] | None = None
) -> Iterator[tuple[str, ast.expr | None]]:
    """(attribute of the method's own object, the value assigned, or None when not plainly
    assigned: `self.a, self.b = pair`, `self.t += 1`) for each write in the method
    (`statements`: its statements, when known)."""
    if not method.args.args:
        return
    own = method.args.args[0].arg
    for statement in _statements(method.body) if statements is None else statements:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                yield from _targets(target, statement.value, own)
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            plain = statement.value if isinstance(statement, ast.AnnAssign) else None
            yield from _targets(statement.target, plain, own)


def _targets(target: ast.expr, value: ast.expr | None, own: str) -> Iterator[tuple[str, ast.expr | None]]:
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == own:
        yield target.attr, value
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _targets(element, None, own)


def stepped_callees(methods_found: list[Method], step: str, words: tuple[str, ...]) -> dict[str, tuple[str, ast.Call, str]]:
    """Methods that the class's methods call (`self.report()`) only after they stepped a
    scheduler kept on `self` (`self.scheduler.step()` earlier in the same block or an enclosing
    one), where a rate read is the next step's: method -> (the scheduler as written, its step
    call, the calling method). A method also called where no step came before is left out.
    Calls from outside the class are not seen."""
    if not any(_step_call(s, step, words) for _, statements in methods_found for s in statements):
        return {}  # most classes step no scheduler: only their statements are read
    methods = [method for method, _ in methods_found]
    names = frozenset(m.name for m in methods)
    after: dict[str, tuple[str, ast.Call, str]] = {}
    before: set[str] = set()
    for method in methods:
        for called, stepped in _self_calls(method.body, None, names, step, words):
            if stepped is None:
                before.add(called)
            else:
                after.setdefault(called, (*stepped, method.name))
    return {name: found for name, found in after.items() if name not in before}


def _statements(body: list[ast.stmt], found: list[ast.stmt] | None = None) -> list[ast.stmt]:
    """Every statement in `body` and the blocks inside it, in source order, but not in a nested
    class (whose `self` is another object). A list, not a generator: a generator's items pass
    through every level of the nesting, and each class's statements are read twice."""
    found = [] if found is None else found
    for statement in body:
        kind = type(statement)
        if kind is ast.ClassDef:
            continue
        found.append(statement)
        bodies, branches = block_fields(kind)
        for name in bodies:
            inner = getattr(statement, name)
            if inner:
                _statements(inner, found)
        for name in branches:
            for branch in getattr(statement, name):
                _statements(branch.body, found)
    return found


def _step_call(statement: ast.stmt, step: str, words: tuple[str, ...]) -> tuple[str, ast.Call] | None:
    """`self.scheduler.step(...)` as a statement: (`self.scheduler`, the call)."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr != step:
        return None
    receiver = call.func.value
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        if any(word in receiver.attr.lower() for word in words):
            return f"self.{receiver.attr}", call
    return None


def _self_calls(
    body: list[ast.stmt], stepped: tuple[str, ast.Call] | None, names: frozenset[str], step: str, words: tuple[str, ...]
) -> Iterator[tuple[str, tuple[str, ast.Call] | None]]:
    """(method called on self, the step that came before it in this block or an enclosing one, or None)."""
    for statement in body:
        nested = statement_blocks(statement)
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue  # run later, or by another object
        heads = [statement] if not any(nested) else [v for v in ast.iter_child_nodes(statement) if isinstance(v, ast.expr)]
        for head in heads:
            for found in ast.walk(head):
                if isinstance(found, ast.Call) and isinstance(found.func, ast.Attribute) and found.func.attr in names:
                    if isinstance(found.func.value, ast.Name) and found.func.value.id == "self":
                        yield found.func.attr, stepped
        for inner in nested:
            yield from _self_calls(inner, stepped, names, step, words)
        stepped = _step_call(statement, step, words) or stepped
