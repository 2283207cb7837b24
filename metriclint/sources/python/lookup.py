"""How a Python module looks a key up in one of its tooltip dicts, read from the function that
reads it (the JavaScript counterpart, and the reasons, are in sources/js_lookup.py).

Understood whole, or not at all:
- `T[key]`, `T.get(key)`, `key in T`: exact;
- `for pattern, text in T.items(): if TEST: return/break` and `next((t for p, t in T.items()
  if TEST), default)`: the first match wins, where TEST is `pattern in key` (substring),
  `key.startswith(pattern)` (prefix), `key.endswith(pattern)` (suffix), `re.search(pattern,
  key)` (regex), `fnmatch.fnmatch(key, pattern)` (glob) or `key == pattern` (exact);
- the key is a parameter of the function, perhaps cut after its first "/" (`key.split("/",
  1)[-1]`, `key.partition("/")[2]`) or lower-cased (`key.lower()`), through local assignments.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import replace
from typing import Iterator

from metriclint.model import Lookup
from metriclint.sources.lookup_rules import Key, lookup_rules
from metriclint.sources.python.code_shapes import statement_blocks

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_TRACE_LIMIT = 8


def infer(module: ast.Module, names: set[str], lines: list[str]) -> dict[str, Lookup]:
    """For each table in `names`, the one way the module's functions read it (absent when none,
    or when they disagree). `lines` are the module's source lines."""
    found: dict[str, set[Lookup | None]] = {}
    for function in _functions(module.body, _Lines(lines, names)):
        parents: dict[int, ast.AST] | None = None  # worked out for a function that reads a table only
        for node in _own_nodes(function):
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                parents = _parents(function) if parents is None else parents
                found.setdefault(node.id, set()).add(_reading(function, node, parents))
    inferred = {}
    for name, readings in found.items():
        readings.discard(None)
        kinds = {(r.match, r.first, r.strip_prefix, r.lower) for r in readings if r is not None}
        if len(kinds) == 1:
            inferred[name] = min((r for r in readings if r is not None), key=lambda r: r.line)
    return inferred


class _Lines:
    """The lines a table's name may be read on: those that hold one of the names, and those
    with other than ASCII (an identifier there may be written in a form Python normalizes)."""

    def __init__(self, lines: list[str], names: set[str]) -> None:
        self.lines = [n for n, line in enumerate(lines, 1) if not line.isascii() or any(name in line for name in names)]

    def any_in(self, node: ast.stmt) -> bool:
        at = bisect.bisect_left(self.lines, node.lineno)
        return at < len(self.lines) and self.lines[at] <= (node.end_lineno or node.lineno)


def _functions(body: list[ast.stmt], lines: _Lines) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions and methods, nested ones too, defined in `body`, less those on whose lines
    no table is named: walking every function's nodes for the names was most of the cost of
    a module with a table."""
    for statement in body:
        if not lines.any_in(statement):
            continue  # nor does any function inside it name one
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
        for block in statement_blocks(statement):
            yield from _functions(block, lines)


def _reading(function: ast.FunctionDef | ast.AsyncFunctionDef, ref: ast.Name, parents: dict[int, ast.AST]) -> Lookup | None:
    rules = lookup_rules("python")
    parent = parents.get(id(ref))
    if isinstance(parent, ast.Subscript) and parent.value is ref:
        return _exact(function, parent.slice, ref, "subscript")
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], ast.In) and parent.comparators[0] is ref:
        return _exact(function, parent.left, ref, "`in`")
    iterated: ast.expr = ref
    pairs = False
    if isinstance(parent, ast.Attribute) and parent.value is ref:
        call = parents.get(id(parent))
        if not isinstance(call, ast.Call) or call.func is not parent:
            return None
        if parent.attr in rules.exact and call.args:
            return _exact(function, call.args[0], ref, f"`{parent.attr}`")
        if parent.attr not in rules.pairs | rules.patterns or call.args:
            return None
        iterated, pairs = call, parent.attr in rules.pairs
    holder = parents.get(id(iterated))
    if isinstance(holder, ast.For) and holder.iter is iterated:
        return _loop(function, holder, pairs, ref)
    if isinstance(holder, ast.comprehension) and holder.iter is iterated:
        return _first_of(function, holder, parents, pairs, ref)
    return None


def _exact(function: ast.FunctionDef | ast.AsyncFunctionDef, subject: ast.expr, ref: ast.Name, how: str) -> Lookup | None:
    if isinstance(subject, ast.Constant):
        return None
    key = _key(function, subject)
    return None if key is None else _lookup(function, ref, "exact", key, how)


def _loop(function: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, pairs: bool, ref: ast.Name) -> Lookup | None:
    """A loop whose one `if` returns or breaks on a match: the first match wins."""
    pattern = _pattern_name(loop.target, pairs)
    branches = [s for s in loop.body if isinstance(s, ast.If)]
    if pattern is None or len(branches) != 1 or branches[0].orelse or not _leaves(branches[0].body):
        return None
    return _tested(function, branches[0].test, pattern, ref, "a loop that returns on a match (first match)")


def _first_of(
    function: ast.FunctionDef | ast.AsyncFunctionDef, generator: ast.comprehension, parents: dict[int, ast.AST], pairs: bool, ref: ast.Name
) -> Lookup | None:
    """`next((t for p, t in T.items() if TEST), None)`: the first match wins."""
    expression = parents.get(id(generator))
    call = parents.get(id(expression)) if isinstance(expression, ast.GeneratorExp) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id != "next" or len(generator.ifs) != 1:
        return None
    if expression is None or len(getattr(expression, "generators", ())) != 1:
        return None
    pattern = _pattern_name(generator.target, pairs)
    if pattern is None:
        return None
    return _tested(function, generator.ifs[0], pattern, ref, "`next` over the matches (first match)")


def _tested(function: ast.FunctionDef | ast.AsyncFunctionDef, test: ast.expr, pattern: str, ref: ast.Name, order: str) -> Lookup | None:
    rules = lookup_rules("python")
    subject, mode, how = None, "", ""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and _is(left, pattern):
            subject, mode, how = right, "substring", "`in`"
        elif isinstance(op, ast.Eq):
            subject = right if _is(left, pattern) else left if _is(right, pattern) else None
            mode, how = "exact", "`==`"
    elif isinstance(test, ast.Call) and not test.keywords:
        name = _dotted(test.func)
        if isinstance(test.func, ast.Attribute) and test.func.attr in rules.tests and len(test.args) == 1 and _is(test.args[0], pattern):
            subject, mode, how = test.func.value, rules.tests[test.func.attr], f"`{test.func.attr}`"
        elif name in rules.tests and len(test.args) == 2:
            regex = rules.tests[name] == "regex"
            given, searched = (test.args[0], test.args[1]) if regex else (test.args[1], test.args[0])
            if _is(given, pattern):
                subject, mode, how = searched, rules.tests[name], f"`{name}`"
    if subject is None:
        return None
    key = _key(function, subject)
    return None if key is None else _lookup(function, ref, mode, key, f"{how} ({mode}), {order}")


def _key(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.expr) -> Key | None:
    """What was done to a parameter of `function` to make `node`, through local assignments."""
    key = Key()
    rules = lookup_rules("python")
    for _ in range(_TRACE_LIMIT):
        if isinstance(node, ast.Name):
            if node.id in _parameters(function):
                return key
            value = _assigned(function, node.id)
            if value is None:
                return None
            node = value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in rules.lower
            and not node.args
            and not key.lower
        ):
            key, node = replace(key, lower=True, how=(*key.how, f"`{node.func.attr}` (lower-case)")), node.func.value
        elif not key.strip_prefix and (inner := _after_first_slash(node)) is not None:
            key, node = replace(key, strip_prefix=True, how=(*key.how, "cut after the first '/' (strip_prefix)")), inner
        else:
            return None
    return None


def _after_first_slash(node: ast.expr) -> ast.expr | None:
    """`x.split("/", 1)[-1]`, `x.split("/", 1)[1]`, `x.partition("/")[2]`: x."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Call):
        return None
    call, index = node.value, _constant(node.slice)
    if not isinstance(call.func, ast.Attribute) or call.keywords or not call.args or _constant(call.args[0]) != "/":
        return None
    method, rest = call.func.attr, [_constant(a) for a in call.args[1:]]
    if method == "split" and rest == [1] and index in (1, -1):
        return call.func.value
    if method == "partition" and not rest and index == 2:
        return call.func.value
    return None


def _lookup(function: ast.FunctionDef | ast.AsyncFunctionDef, ref: ast.Name, match: str, key: Key, how: str) -> Lookup:
    return Lookup(match, match != "exact", key.strip_prefix, key.lower, function.name, ref.lineno, ", ".join((how, *key.how)))


def _pattern_name(target: ast.expr, pairs: bool) -> str | None:
    if pairs:
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
            return target.elts[0].id
        return None
    return target.id if isinstance(target, ast.Name) else None


def _is(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _constant(node: ast.expr) -> object:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return -value if isinstance(value, int) else None
    return node.value if isinstance(node, ast.Constant) else None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    given = function.args
    return {a.arg for a in (*given.posonlyargs, *given.args, *given.kwonlyargs)}


def _assigned(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    """The value of the one assignment to `name` in `function` (outside nested functions)."""
    values = [
        node.value
        for node in _own_nodes(function)
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    ]
    stores = sum(1 for node in _own_nodes(function) if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store))
    return values[0] if len(values) == 1 and stores == 1 else None


def _leaves(body: list[ast.stmt]) -> bool:
    """Whether a branch ends the loop: it returns or breaks (not inside a nested function)."""
    return any(isinstance(node, (ast.Return, ast.Break)) for statement in body for node in _walk_own(statement))


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's body, without those of functions nested in it."""
    return [node for statement in function.body for node in _walk_own(statement)]


def _walk_own(root: ast.AST) -> list[ast.AST]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, _FUNCTIONS) or node is root:
            stack.extend(ast.iter_child_nodes(node))
    return found


def _parents(function: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
