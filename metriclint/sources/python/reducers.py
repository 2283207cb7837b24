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
- a reduction looked up by key in a table the function is passed (`how = rule_by_key.get(key,
  "mean")`, the parameter None unless given), then branches on its value (`if how == "mean":
  ... elif how == "min": ... else: ...`), each writing a mean, `min(values)` or `max(values)`:
  each key is reduced as the table its callers pass says (model.Reducer `table`, key_tables.py);
- any other branch that reads the key (`if key.endswith("_max")`) may reduce a value another
  way: the value is then unknown, as is any other write of a key's value.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from metriclint.model import CodeFact, Reducer
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.code_shapes import block_fields
from metriclint.sources.python.flow import FlowRules

Facts = Callable[[str, ast.expr], frozenset[CodeFact]]  # the facts a construct (rules/code/loops.yaml) makes at a node
_EXTREMES = {"max": "per-key-max", "min": "per-key-min"}  # builtins.max(values): the largest of the ranks' values
_STACKS = frozenset({"stack", "tensor", "array", "asarray"})  # the ranks' values as one tensor or array, each still one rank's


def loop_reducers(
    function: ast.FunctionDef | ast.AsyncFunctionDef, params: tuple[str, ...], rules: FlowRules, facts: Facts
) -> list[Reducer]:
    """What each loop over the keys of a gathered parameter does to every value (module doc);
    `facts` makes the facts of a reduction written at a node."""
    aliases = _aliases(function.body)
    statements = _own_statements(function)
    loops = [(n, iterated) for n in statements if isinstance(n, ast.For) and (iterated := _iterated(n, aliases)) and iterated[0] in params]
    if not loops:
        return []  # most functions: the rest is not worked out
    returned = {n.value.id for n in statements if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    found = []
    for loop, iterated in loops:
        body = _Body(iterated[0], iterated[1], returned, params, rules)
        body.tables = _tables(function, statements, aliases, params)
        body.read(loop.body)
        if not body.writes:
            continue
        found.append(_tabled(body, facts) or _same_for_every_key(body, facts))
    return found


def _same_for_every_key(body: _Body, facts: Facts) -> Reducer:
    means = [w for w, _ in body.writes if body.mean(w)]
    known = not body.keyed and len(means) == len(body.writes)
    return Reducer(body.param, known, facts("per-key-mean", means[0]) if known else frozenset(), body.rules.replaced_per_key)


def _tabled(body: _Body, facts: Facts) -> Reducer | None:
    """Each key reduced as the value looked up in a table parameter says (module doc); None
    when no write depends on such a value."""
    selected = {when for _, when in body.writes}
    if selected == {None}:
        return None
    choices: dict[str, tuple[str, ast.expr]] = {}
    for value, when in body.writes:
        construct = body.reduction(value)
        if body.keyed or when is None or construct is None or choices.setdefault(when, (construct, value))[0] != construct:
            return Reducer(body.param, False, frozenset(), body.rules.replaced_per_key)
    table, default = body.selected
    made = tuple((when, facts(construct, value)) for when, (construct, value) in choices.items())
    return Reducer(body.param, True, frozenset(), body.rules.replaced_per_key, table=table, default=default, choices=made)


def _tables(
    function: ast.FunctionDef | ast.AsyncFunctionDef, statements: list[ast.stmt], aliases: dict[str, ast.expr], params: tuple[str, ...]
) -> frozenset[str]:
    """The parameters a reduction may be looked up in: None unless passed (or always passed),
    and not rebound but to themselves or an empty dict (`rule_by_key = rule_by_key or {}`)."""
    given = function.args
    positional = [*given.posonlyargs, *given.args]
    defaults = {a.arg: d for a, d in zip(positional[len(positional) - len(given.defaults) :], given.defaults)}
    defaults.update({a.arg: d for a, d in zip(given.kwonlyargs, given.kw_defaults) if d is not None})
    rebound = [t.id for n in statements for t in _targets(n) if isinstance(t, ast.Name) and t.id in params]
    found = set()
    for param in params:
        default = defaults.get(param)
        if (default is not None and not (isinstance(default, ast.Constant) and default.value is None)) or rebound.count(param) > 1:
            continue
        bound = aliases.get(param)
        either = bound.values if isinstance(bound, ast.BoolOp) and isinstance(bound.op, ast.Or) else []
        emptied = [type(e) for e in either] == [ast.Name, ast.Dict] and either[0].id == param and not either[1].keys  # type: ignore[attr-defined]
        if (bound is None and param not in rebound) or emptied:
            found.add(param)
    return frozenset(found)


def _targets(statement: ast.stmt) -> list[ast.AST]:
    """What an assignment statement binds (a `for` loop's target too)."""
    if isinstance(statement, ast.Assign):
        return [n for t in statement.targets for n in ast.walk(t)]
    if isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return list(ast.walk(statement.target))
    return []


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
                found.append(Reducer(param, True, facts("per-key-mean", node.value), rules.replaced_per_key))
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
            name = called_name(call.func)
            if any(word in name for word in rules.gathers):
                given = [a for a in (*call.args, *(k.value for k in call.keywords)) if isinstance(a, ast.Name) and a.id in params]
                if given:
                    found[node.targets[0].id] = given[0].id
    return found


def _keys_of(iterated: ast.expr) -> str:
    """The dict a loop takes the keys of: `summary` or `summary.keys()`; "" for anything else."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "keys" and not iterated.args:
        iterated = iterated.func.value
    return iterated.id if isinstance(iterated, ast.Name) else ""


def _own_statements(node: ast.AST, found: list[ast.stmt] | None = None) -> list[ast.stmt]:
    """The statements of a function's body, each before those it holds, not those of the
    functions and classes it defines. Loops, returns and assignments are statements: walking
    every node of every function for them instead, twice, was a fifth of the in-process
    extraction CPU on radixark/miles. A list, not a generator: a generator's items pass through
    every level of the nesting."""
    found = [] if found is None else found
    bodies, branches = block_fields(type(node))
    for field in (*bodies, *branches):
        for item in getattr(node, field):
            if isinstance(item, (ast.excepthandler, ast.match_case)):
                _own_statements(item, found)
            elif not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append(item)
                _own_statements(item, found)
    return found


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
        self.writes: list[tuple[ast.expr, str | None]] = []  # each with the looked-up value it is written for (`when`)
        self.keyed = False  # a branch reads the key: a value may be reduced another way
        self.tables: frozenset[str] = frozenset()  # parameters a reduction may be looked up in (_tables)
        self.lookups: dict[str, tuple[str, str]] = {}  # name -> (table, default) of `how = table.get(key, "mean")`
        self.selected: tuple[str, str] = ("", "")  # the lookup the branches test
        self.when: str | None = None  # the looked-up value the statements read run for ("": any other); None: any

    def read(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, ast.Assign):
                self._assign(statement)
            elif isinstance(statement, ast.If) and self._selects(statement):
                continue
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
                self.writes.append((statement.value, self.when))
            elif isinstance(target, ast.Name):
                lookup = self._lookup(statement.value)
                if self._column(statement.value):
                    self.columns.add(target.id)
                elif lookup is not None and self.when is None:
                    self.lookups[target.id] = lookup
                elif self._reads_key(statement.value):
                    self.chosen.add(target.id)

    def _lookup(self, value: ast.expr) -> tuple[str, str] | None:
        """(table, default) of `table.get(key, "mean")`, `table.get(key)` or `table[key]`."""
        default: object = ""
        if isinstance(value, ast.Subscript):
            table, key = value.value, value.slice
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and 0 < len(value.args) < 3
            and not value.keywords
        ):
            table, key = value.func.value, value.args[0]
            default = value.args[1].value if len(value.args) == 2 and isinstance(value.args[1], ast.Constant) else None
        else:
            return None
        found = isinstance(table, ast.Name) and table.id in self.tables and isinstance(key, ast.Name) and key.id == self.key
        return (table.id, default) if found and isinstance(table, ast.Name) and isinstance(default, str) else None

    def _selects(self, statement: ast.If) -> bool:
        """Reads a branch on a looked-up value: `if how == "mean":` runs its body for that value,
        its `else` for the others; a test that only raises or passes (`if how not in (...): raise`)
        changes nothing. False for a branch that tests no looked-up value."""
        names = {n.id for n in ast.walk(statement.test) if isinstance(n, ast.Name) and n.id in self.lookups}
        if not names:
            return False
        value = _compared(statement.test, names)
        lookup = self.lookups[names.pop()]
        if value is None or self.selected not in (("", ""), lookup) or self.when not in (None, ""):
            if any(self._written(n) for part in (statement.body, statement.orelse) for s in part for n in ast.walk(s)):
                self.keyed = True
            return True
        self.selected, outer = lookup, self.when
        self.when = value
        self.read(statement.body)
        self.when = ""
        self.read(statement.orelse)
        self.when = outer
        return True

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

    def reduction(self, value: ast.expr) -> str | None:
        """The construct (rules/code/loops.yaml) a write of a key's value is: a mean over the
        ranks, or the largest or smallest of the ranks' values; None for anything else."""
        if self.mean(value):
            return "per-key-mean"
        if isinstance(value, ast.Call) and called_name(value.func) in _EXTREMES and self._of_column(value):
            return _EXTREMES[called_name(value.func)]
        return None

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


def _compared(test: ast.expr, names: set[str]) -> str | None:
    """ "mean" of `how == "mean"` (either way round) where `how` is one of `names`; else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    sides = (test.left, test.comparators[0])
    named = [s for s in sides if isinstance(s, ast.Name) and s.id in names]
    written = [s.value for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, str)]
    return written[0] if named and written else None


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
