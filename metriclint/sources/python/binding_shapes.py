"""What one statement binds and reads, which names a body reaches from others, and the shape
of a loop over micro-batches.

Questions about one piece of syntax, asked by the bindings walk (bindings.py): apart from it,
they can be read and tested without a walk."""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.flow import LoopShape
from metriclint.sources.python.state import child_nodes, descendants


def loop_shape(loop: ast.For | ast.AsyncFor, sink_names: frozenset[str]) -> LoopShape:
    """One walk over the loop's body. The changing names are its target, the names counted up
    in it (`i += 1`), and the names assigned from one of these through any number of steps."""
    steps: list[tuple[set[str], set[str]]] = []
    seeds, leaves = bound_names(loop.target), False
    called: set[str] = set()
    logged: set[str] = set()
    for node in descendants(loop.body):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            written = node.targets if isinstance(node, ast.Assign) else [node.target]
            steps.append((set().union(*(bound_names(t) for t in written)), read_names(node.value)))
            if isinstance(node, ast.AugAssign):
                seeds |= bound_names(node.target)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            steps.append((bound_names(node.target), read_names(node.iter)))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            steps.append((bound_names(node.optional_vars), read_names(node.context_expr)))
        elif isinstance(node, (ast.Break, ast.Return, ast.Yield, ast.YieldFrom)):
            leaves = True
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                called.add(node.func.value.id)
            if called_name(node.func) in sink_names:
                given = (g.value if isinstance(g, ast.Starred) else g for g in [*node.args, *(k.value for k in node.keywords)])
                logged.update(g.id for g in given if isinstance(g, ast.Name))
    return LoopShape(frozenset(_reach(steps, seeds)), frozenset(called), frozenset(logged), leaves)


def reached(body: list[ast.stmt], seeds: set[str], sums: bool = True) -> set[str]:
    """`seeds` and the names assigned in `body` from one of them, through any number of steps;
    without `sums`, not through a name added to (`total += x`), which holds every pass's `x`."""
    steps: list[tuple[set[str], set[str]]] = []
    for node in descendants(body):
        if isinstance(node, ast.AugAssign) and not sums:
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            written = node.targets if isinstance(node, ast.Assign) else [node.target]
            steps.append((set().union(*(bound_names(t) for t in written)), read_names(node.value)))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            steps.append((bound_names(node.target), read_names(node.iter)))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            steps.append((bound_names(node.optional_vars), read_names(node.context_expr)))
    return _reach(steps, seeds)


def _reach(steps: list[tuple[set[str], set[str]]], seeds: set[str]) -> set[str]:
    varying = set(seeds)
    grown = True
    while grown:
        grown = False
        for targets, read in steps:
            if read & varying and not targets <= varying:
                varying |= targets
                grown = True
    return varying


def bound_names(target: ast.expr) -> set[str]:
    """The names an assignment to `target` binds: `x`, `x, (y, *z)`; none for `d[k]` or `o.a`."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, ast.Starred):
        return bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(bound_names(t) for t in target.elts))
    return set()


def assigned_name(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    return None


_TYPE_ALIAS = getattr(ast, "TypeAlias", None)


def read_names(node: ast.AST) -> set[str]:
    """Every name under `node`. Asked of every `if` test and of each assigned value in a
    loop's body, so it walks by the fields the walk descends into, not by `ast.walk`'s generic
    ones: 2.4 times as fast over Megatron-LM's tests and values."""
    found = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if type(current) is ast.Name:
            found.add(current.id)
            continue
        if type(current) is _TYPE_ALIAS:  # `type X = ...` (3.12+): its `name` is a Name, not text
            pending.append(current.name)  # type: ignore[attr-defined]
        pending += child_nodes(current)
    return found


def constant_shape(node: ast.expr) -> bool:
    """A shape written as constants: `()`, `[]`, `1`, `(1, 1)`."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(constant_shape(e) for e in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) is int


def ends_window(test: ast.expr, boundaries: frozenset[str]) -> bool:
    """Whether an `if` test holds only where the gradient-accumulation window ends: one of
    `boundaries` called or read (`engine.is_gradient_accumulation_boundary()`,
    `accelerator.sync_gradients`), alone or as a term of an `and`, not negated."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for term in terms:
        read = term.func if isinstance(term, ast.Call) and not term.args and not term.keywords else term
        if isinstance(read, ast.Attribute) and read.attr in boundaries:
            return True
    return False


def added_to(target: ast.Subscript, value: ast.expr, segment: Callable[[ast.AST], str]) -> ast.expr | None:
    """`d[k] = d[k] + x` or `d[k] = d.get(k, 0) + x`, either way round: `x`, what `d[k] += x`
    written out adds to the item (a timer adding each reading to its total). `segment` is the
    source text of a node, so that the item read and the item written compare as written."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for total, added in ((value.left, value.right), (value.right, value.left)):
        if isinstance(total, ast.Subscript) and segment(total) == segment(target):
            return added
        if (
            isinstance(total, ast.Call)
            and isinstance(total.func, ast.Attribute)
            and total.func.attr == "get"
            and total.args
            and segment(total.func.value) == segment(target.value)
            and segment(total.args[0]) == segment(target.slice)
        ):
            return added
    return None


def running_sum(name: str, value: ast.expr) -> ast.BinOp | None:
    """`total = total + x` (either way round), or `x if total is None else total + x` (either
    test): the sum that `total += x` writes out, the second started from None rather than a zero
    (Python reference, "Conditional expressions": `x if C else y` is `y` once C is false, so from
    the second iteration on it adds). The addition, or None for any other value."""
    if isinstance(value, ast.IfExp):
        test = value.test
        if not (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.left, ast.Name)
            and test.left.id == name
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        ):
            return None
        start, value = (value.body, value.orelse) if isinstance(test.ops[0], ast.Is) else (value.orelse, value.body)
        if name in read_names(start):
            return None
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    own = [isinstance(side, ast.Name) and side.id == name for side in (value.left, value.right)]
    term = value.right if own[0] else value.left
    return value if own.count(True) == 1 and name not in read_names(term) else None


def smoothed(name: str, value: ast.BinOp) -> bool:
    """`x = x * 0.9 + 0.1 * y`, `decay * x + (1 - decay) * y`: `name`'s old value weighted, plus a
    weighted new value that does not read it (rules/code/loops.yaml `smoothing`)."""
    if not isinstance(value.op, ast.Add):
        return False
    terms = (value.left, value.right)
    if not all(isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mult) for t in terms):
        return False
    reads = [name in read_names(t) for t in terms]
    if reads.count(True) != 1:
        return False
    old = terms[reads.index(True)]
    assert isinstance(old, ast.BinOp)
    sides = (old.left, old.right)
    return any(isinstance(s, ast.Name) and s.id == name for s in sides) and not all(name in read_names(s) for s in sides)


def optional_of(annotation: ast.expr) -> ast.expr:
    """The type an annotation names when it allows `None` too (`Tracker | None`,
    `Optional[Tracker]`: `Tracker`); any other annotation as it is."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        return sides[0] if len(sides) == 1 else annotation
    if isinstance(annotation, ast.Subscript) and called_name(annotation.value) == "Optional":
        return annotation.slice
    return annotation
