"""A project helper that reduces every value of a dict of metrics the same way, whatever its key.

A rank puts its own max under `x_max` and hands the dict on; a helper gathers every rank's dict
and averages each key over them. Where the key is set the value is a max; what is logged is a
mean of maxima. This module reads such a helper's loop over the keys of the first of the
gathered dicts (`for key in gathered[0]`, `.keys()`, or a name bound to either), which writes
each key's value into the dict the function returns, or its dict comprehension over the keys of
a dict parameter, of what a gather call collected for it (`{k: sum([d[k] for d in everyone]) /
pg.size for k in summary}`):

- `sum(values) / N` or a mean call of `values` (`np.mean(values)`, `torch.stack(values).mean()`),
  where `values = [d[key] for d in gathered]` is the key's value of each rank and N counts them
  (`len(values)`, `len(gathered)`) or is a parameter or a process group's attribute named for
  the number of ranks (rules/dataflow.yaml `per_key`): a mean over the ranks (rules/code/loops.yaml `per-key-mean`);
- a branch on `isinstance(..., tuple)` of a value holds for values that are tuples (a sum and a
  count), never for a number that a code fact is about: only its other branch is read;
- a branch that reads the key (`if key.endswith("_max")`, a reduction looked up by key) may
  reduce a value another way: the value is then unknown, as is any other write of a key's value.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from metriclint.model import CodeFact, Reducer
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.flow import FlowRules

Facts = Callable[[ast.expr], frozenset[CodeFact]]
_STACKS = frozenset({"stack", "tensor", "array", "asarray"})  # the ranks' values as one tensor or array, each still one rank's


def loop_reducers(
    function: ast.FunctionDef | ast.AsyncFunctionDef, params: tuple[str, ...], rules: FlowRules, facts: Facts
) -> list[Reducer]:
    """What each loop over the keys of a gathered parameter does to every value (module doc);
    `facts` makes the facts of a mean written at a node."""
    aliases = _aliases(function.body)
    loops = [
        (n, iterated)
        for n in _own_statements(function)
        if isinstance(n, ast.For) and (iterated := _iterated(n, aliases)) and iterated[0] in params
    ]
    if not loops:
        return []  # most functions: the rest is not worked out
    returned = {n.value.id for n in _own_statements(function) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    found = []
    for loop, iterated in loops:
        body = _Body(iterated[0], iterated[1], returned, params, rules)
        body.read(loop.body)
        if not body.writes:
            continue
        means = [w for w in body.writes if body.mean(w)]
        known = not body.keyed and len(means) == len(body.writes)
        found.append(Reducer(iterated[0], known, facts(means[0]) if known else frozenset(), rules.replaced_per_key))
    return found


def comprehension_reducers(
    function: ast.FunctionDef | ast.AsyncFunctionDef, params: tuple[str, ...], rules: FlowRules, facts: Facts
) -> list[Reducer]:
    """`{key: sum([d[key] for d in gathered]) / N for key in summary}` of a parameter `summary`
    and what a gather call collected for it: the mean over the ranks of each key's value."""
    gathered = _gathered(function, params, rules)
    if not gathered:
        return []  # most functions: their expressions are not walked for a comprehension
    found = []
    for node in _own_nodes(function):
        if not isinstance(node, ast.DictComp) or len(node.generators) != 1 or node.generators[0].ifs:
            continue
        loop = node.generators[0]
        param = _keys_of(loop.iter)
        if not isinstance(loop.target, ast.Name) or param not in params:
            continue
        for collected in (name for name, source in gathered.items() if source == param):
            body = _Body(collected, loop.target.id, set(), params, rules)
            if body.mean(node.value):
                found.append(Reducer(param, True, facts(node.value), rules.replaced_per_key))
    return found


def _gathered(function: ast.AST, params: tuple[str, ...], rules: FlowRules) -> dict[str, str]:
    """Names bound to what a call named as a gather collected for a parameter (`everyone =
    gather_summaries(summary)`), and that parameter."""
    found = {}
    for node in _own_statements(function):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            call = node.value
            if any(word in called_name(call.func) for word in rules.gathers):
                given = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name) and a.id in params]
                if given:
                    found[node.targets[0].id] = given[0].id
    return found


def _keys_of(iterated: ast.expr) -> str:
    """The dict a loop takes the keys of: `summary` or `summary.keys()`; "" for anything else."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "keys" and not iterated.args:
        iterated = iterated.func.value
    return iterated.id if isinstance(iterated, ast.Name) else ""


def _own_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements of a function's body, each before those it holds, not those of the
    functions and classes it defines. Loops, returns and assignments are statements: walking
    every node of every function for them instead, twice, was a fifth of the in-process
    extraction CPU on radixark/miles."""
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is not list:
            continue
        for item in value:
            if isinstance(item, (ast.excepthandler, ast.match_case)):
                yield from _own_statements(item)
            elif isinstance(item, ast.stmt) and not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield item
                yield from _own_statements(item)


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes it defines."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            yield child
            yield from _own_nodes(child)


def _aliases(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names the function body binds once, at its top level, to what they hold."""
    bound: dict[str, list[ast.expr]] = {}
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            bound.setdefault(statement.targets[0].id, []).append(statement.value)
    return {name: values[0] for name, values in bound.items() if len(values) == 1}


def _iterated(loop: ast.For, aliases: dict[str, ast.expr]) -> tuple[str, str] | None:
    """(parameter, key name) of `for key in gathered[0]` (or `gathered[0].keys()`, or a name
    bound to either); None for any other loop."""
    if not isinstance(loop.target, ast.Name):
        return None
    iterated = loop.iter
    if isinstance(iterated, ast.Name) and iterated.id in aliases:
        iterated = aliases[iterated.id]
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "keys" and not iterated.args:
        iterated = iterated.func.value
    first = isinstance(iterated, ast.Subscript) and isinstance(iterated.slice, ast.Constant) and iterated.slice.value == 0
    if first and isinstance(iterated, ast.Subscript) and isinstance(iterated.value, ast.Name):
        return iterated.value.id, loop.target.id
    return None


class _Body:
    """One loop body over a gathered parameter's keys: the key's column of values, the names
    chosen by the key, and the writes of a key's value into a dict the function returns."""

    def __init__(self, param: str, key: str, returned: set[str], params: tuple[str, ...], rules: FlowRules) -> None:
        self.param, self.key, self.returned, self.params, self.rules = param, key, returned, params, rules
        self.columns: set[str] = set()  # names bound to `[d[key] for d in gathered]`
        self.chosen: set[str] = {key}  # names that depend on the key, not as an index of a rank's dict
        self.writes: list[ast.expr] = []
        self.keyed = False  # a branch reads the key: a value may be reduced another way

    def read(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.Assign):
                self._assign(statement)
            elif isinstance(statement, ast.If):
                if self._reads_key(statement.test):
                    self.keyed = True
                if not _tuple_test(statement.test):
                    self.read(statement.body)
                self.read(statement.orelse)
            elif isinstance(statement, (ast.Raise, ast.Expr, ast.Pass, ast.Assert)):
                continue
            elif any(self._written(n) for n in ast.walk(statement)):
                self.keyed = True  # a write in a nested loop, a `with` or a `try`: not read

    def _assign(self, statement: ast.Assign) -> None:
        for target in statement.targets:
            if self._written(target):
                self.writes.append(statement.value)
            elif isinstance(target, ast.Name):
                if self._column(statement.value):
                    self.columns.add(target.id)
                elif self._reads_key(statement.value):
                    self.chosen.add(target.id)

    def _written(self, node: ast.AST) -> bool:
        """`out[key] = ...` of a dict the function returns."""
        return (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in self.returned
            and isinstance(node.slice, ast.Name)
            and node.slice.id == self.key
        )

    def _column(self, value: ast.expr) -> bool:
        """`[d[key] for d in gathered]`: the key's value of each rank."""
        if not isinstance(value, ast.ListComp) or len(value.generators) != 1:
            return False
        loop, item = value.generators[0], value.elt
        return (
            isinstance(loop.target, ast.Name)
            and isinstance(loop.iter, ast.Name)
            and loop.iter.id == self.param
            and not loop.ifs
            and isinstance(item, ast.Subscript)
            and isinstance(item.value, ast.Name)
            and item.value.id == loop.target.id
            and isinstance(item.slice, ast.Name)
            and item.slice.id == self.key
        )

    def _reads_key(self, node: ast.AST) -> bool:
        """Whether `node` reads the key, or a name chosen by it, other than to index a dict."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name) and node.slice.id == self.key:
            return self._reads_key(node.value)
        if isinstance(node, ast.Name):
            return node.id in self.chosen
        return any(self._reads_key(child) for child in ast.iter_child_nodes(node))

    def mean(self, value: ast.expr) -> bool:
        """`sum(values) / N` with N the number of ranks, or a mean call of the values."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
            summed = isinstance(value.left, ast.Call) and called_name(value.left.func) == "sum" and self._of_column(value.left)
            return summed and self._counts_ranks(value.right)
        if isinstance(value, ast.Call) and called_name(value.func) == "mean":
            return self._of_column(value) or (isinstance(value.func, ast.Attribute) and self._of_column(value.func.value))
        return False

    def _of_column(self, node: ast.expr) -> bool:
        """A call of the column itself (`sum(values)`), maybe stacked (`np.mean(torch.stack(values))`)."""
        if not isinstance(node, ast.Call) or len(node.args) != 1:
            return False
        only = node.args[0]
        stacked = isinstance(only, ast.Call) and called_name(only.func) in _STACKS and self._of_column(only)
        return (isinstance(only, ast.Name) and only.id in self.columns) or self._column(only) or stacked

    def _counts_ranks(self, divisor: ast.expr) -> bool:
        """`len(values)`, `len(gathered)`, a parameter named for the number of ranks, or such an
        attribute of a process group (`pg.size`)."""
        if isinstance(divisor, ast.Name):
            return divisor.id in self.params and divisor.id in self.rules.rank_counts
        if isinstance(divisor, ast.Attribute):
            return divisor.attr in self.rules.group_sizes
        counted = (
            divisor.args[0] if isinstance(divisor, ast.Call) and called_name(divisor.func) == "len" and len(divisor.args) == 1 else None
        )
        return isinstance(counted, ast.Name) and (counted.id in self.columns or counted.id == self.param)


def _tuple_test(test: ast.expr) -> bool:
    """`isinstance(x, tuple)`, alone or first of an `and`: holds for tuples (a sum and a count) only."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[0]
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[1], ast.Name)
        and test.args[1].id == "tuple"
    )
