"""Code evidence across the project: follow code facts from where they are computed, through
calls of project functions and their results, to the metrics they are logged as.

Each file's extraction lists its functions (parameters, what reaches logged keys, what they
return) and its calls (callee as imported, what each argument carries). This step joins them:
a parameter is whatever its callers pass, a call's result is whatever the callee returns. Every
question is answered once (memoized) and chains stop after `MAX_HOPS`, so the work stays linear
in the number of call sites.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Iterable, Mapping

from metriclint.evidence.callees import Callees
from metriclint.evidence.dotted import Dotted
from metriclint.language.attribution import MetricIndex
from metriclint.model import (
    ANY_PLACE,
    FRAMEWORKS,
    Atom,
    CallFlow,
    CodeClaim,
    CodeFact,
    Derived,
    FunctionFlow,
    HandOver,
    KeyTable,
    ProjectClass,
    Reducer,
    ResultOf,
    Span,
)

MAX_HOPS = 12
Facts = frozenset[CodeFact]
Reduction = tuple[bool, Facts, frozenset[str]]  # (known, the facts it gives, the facets it replaces)
Tables = tuple[tuple[str, KeyTable], ...]  # a function's parameters -> what its caller passed for them (key_tables.py)


class CallGraph:
    """`classes`: resolve method calls through objects too (evidence/callees.py), as the
    inventory does; code facts resolve only what the files name."""

    def __init__(
        self,
        functions: Iterable[FunctionFlow],
        calls: Iterable[CallFlow],
        classes: Iterable[ProjectClass] | None = None,
        instances: Mapping[str, str] = {},
        dispatched: Iterable[str] = (),
    ) -> None:
        self.functions = {f.name: f for f in functions}
        # an absolute import may omit a source root, or name the package that re-exports a function
        self.callees = None if classes is None else Callees(self.functions, classes, instances, dispatched)
        self.resolve = Dotted(self.functions).through_packages if self.callees is None else self.callees.resolve
        self.callers: dict[str, list[CallFlow]] = defaultdict(list)
        for call in calls:
            callee = self.resolve(call.callee)
            if callee is not None:
                self.callers[callee.name].append(call)
        self.memo: dict[tuple[str, str, str], Facts] = {}
        self.returned: dict[tuple[str, str, int | None], tuple[Facts, frozenset[str]]] = {}
        self.reductions: dict[tuple[HandOver, str, Tables], Reduction | None] = {}

    def handed(self, facts: Facts, overs: Iterable[HandOver], key: str = "") -> Facts:
        """What a value put in a dict under `key` is after the dict is handed to these calls, in
        turn: a call whose function reduces every value of it (model.Reducer) replaces its facts
        of the facets that reduction replaces, with the reduction's own, said to come from that call."""
        for over in overs:
            reduction = self.reduction(over, key)
            if reduction is None:
                continue
            known, reduced, replaces = reduction
            facts = frozenset(f for f in facts if f.facet not in replaces)
            if known:
                facts |= {CodeFact(f.facet, f.value, over.span, over.origin, _where(over, f)) for f in reduced}
        return facts

    def reduction(self, over: HandOver, key: str = "", tables: Tables = ()) -> Reduction | None:
        """What the function a dict is handed to does to its value under `key`: None when it
        leaves them alone; not known (False) when two of its ways disagree. `tables`: what the
        call that handed the dict to the function `over` is in passes for that function's
        parameters, which `over` may pass on (key_tables.py)."""
        memo = (over, key, tables)
        if memo in self.reductions:
            return self.reductions[memo]
        self.reductions[memo] = None  # a cycle adds nothing
        flow = self.resolve(over.callee)
        param = param_at(flow, over.where, over.bound) if flow is not None else None
        found: set[Reduction] = set()
        for reducer in flow.reducers if flow is not None else ():
            got = self._reduced(flow, reducer, over, key, tables) if flow is not None and reducer.param == param else None
            found |= {got} if got is not None else set()
        outcome = found.pop() if len(found) == 1 else (False, frozenset(), frozenset().union(*(r[2] for r in found))) if found else None
        self.reductions[memo] = outcome
        return outcome

    def _reduced(self, flow: FunctionFlow, reducer: Reducer, over: HandOver, key: str, tables: Tables) -> Reduction | None:
        """What one of the reducers of the function `over` hands the dict to does to its value under `key`."""
        if reducer.then is not None:
            return self.reduction(reducer.then, key, tuple(self._given(flow, over, tables).items()))
        if reducer.table:
            return _by_table(reducer, key, self._given(flow, over, tables).get(reducer.table))
        return (reducer.known, reducer.facts, reducer.replaces)

    def _given(self, flow: FunctionFlow, over: HandOver, tables: Tables) -> dict[str, KeyTable]:
        """What `over` passes for each parameter of `flow` beside the dict: a table written out,
        or what its own caller passed for the parameter it passes on (`tables`); a parameter
        of no known place maps to a table not known."""
        outer = dict(tables)
        given: dict[str, KeyTable] = {}
        for where, table in over.tables:
            if where == ANY_PLACE:
                return {p: KeyTable() for p in flow.params}
            param = param_at(flow, where, over.bound)
            if param is not None:
                given[param] = outer.get(table.param, KeyTable()) if table.param else table
        return given

    def facts(self, function: str, atoms: Iterable[Atom], hops: int = 0) -> Facts:
        found: set[CodeFact] = set()
        for atom in atoms:
            if isinstance(atom, CodeFact):
                found.add(atom)
            elif hops < MAX_HOPS and isinstance(atom, str):
                found |= self.parameter(function, atom, hops + 1)
            elif hops < MAX_HOPS and isinstance(atom, ResultOf):
                found |= self.result(atom, hops + 1)
            elif hops < MAX_HOPS and isinstance(atom, Derived):
                found |= self.derived(function, atom, hops + 1)
        return frozenset(found)

    def derived(self, function: str, atom: Derived, hops: int) -> Facts:
        """What a construct made of values now resolved: each fact it gives where they have the
        fact it needs, and their facts of the facets it keeps."""
        values = self.facts(function, atom.atoms, hops)
        have = {(f.facet, f.value) for f in values}
        given = {fact for facet, value, fact in atom.gives if (facet, value) in have}
        kept = (*atom.keeps, *atom.converted) if given else atom.keeps
        return frozenset({f for f in values if f.facet in kept} | given)

    def parameter(self, function: str, param: str, hops: int) -> Facts:
        """What the callers of `function` pass for `param`."""
        key = ("param", function, param)
        if key not in self.memo:
            self.memo[key] = frozenset()  # a cycle adds nothing
            flow = self.functions.get(function)
            found: set[CodeFact] = set()
            for call in self.callers[function] if flow is not None else ():
                found |= self._passed(flow, param, call.caller, call.args, call.bound, hops)  # type: ignore[arg-type]
            self.memo[key] = frozenset(found)
        return self.memo[key]

    def result(self, call: ResultOf, hops: int) -> Facts:
        """What this call returns: facts the callee computes, and what this call passes for a
        parameter the callee returns (only this call's arguments, not every caller's)."""
        flow = self.resolve(call.callee)
        if flow is None:
            return frozenset()
        own, params = self._returned(flow, call.element, hops)
        found = set(own)
        for param in params:
            found |= self._passed(flow, param, call.caller, call.args, call.bound, hops)
        return frozenset(found)

    def _returned(self, flow: FunctionFlow, element: int | None, hops: int) -> tuple[Facts, frozenset[str]]:
        key = ("result", flow.name, element)
        if key not in self.returned:
            self.returned[key] = (frozenset(), frozenset())
            atoms: set[Atom] = set()
            for where, returned in flow.returns:
                if where == element:
                    atoms |= returned
                elif where is None and element is not None:
                    atoms |= {replace(a, element=element) for a in returned if isinstance(a, ResultOf) and a.element is None}
            params = frozenset(a for a in atoms if isinstance(a, str))
            self.returned[key] = (self.facts(flow.name, atoms - params, hops), params)
        return self.returned[key]

    def _passed(
        self, flow: FunctionFlow, param: str, caller: str, args: tuple[tuple[int | str, frozenset[Atom]], ...], bound: bool, hops: int
    ) -> Facts:
        """What one call passes for `param` of `flow`, by keyword or by position."""
        position = passed_at(flow, param, bound)
        found: set[CodeFact] = set()
        for where, atoms in args:
            if where == param or where == position:
                found |= self.facts(caller, atoms, hops)
        return frozenset(found)


def _unshadowed(
    flow: FunctionFlow, index: MetricIndex, own: frozenset[str], rewritten: frozenset[str]
) -> list[tuple[str, frozenset[Atom]]]:
    """A flow's sinks, less a framework's value that the project logs itself under one of its
    spellings (`grad_norm` by hand, and `train/grad_norm` by the framework's callbacks) or
    that a class of its own may rewrite."""
    if not flow.name.endswith("." + FRAMEWORKS):
        return list(flow.sinks)
    shadowed = {atoms for key, atoms in flow.sinks if any(m in own for m in index.for_key(key))}
    return [
        (key, atoms)
        for key, atoms in flow.sinks
        if atoms not in shadowed and not any(isinstance(a, CodeFact) and a.origin in rewritten for a in atoms)
    ]


def _by_table(reducer: Reducer, key: str, table: KeyTable | None) -> Reduction:
    """How a helper that looks each key's reduction up in a table reduces `key`'s value, with
    `table` passed (None: not passed, so the lookup's default)."""
    not_known: Reduction = (False, frozenset(), reducer.replaces)
    if table is not None and not table.known:
        return not_known
    chosen = dict(table.entries).get(key, reducer.default) if table is not None else reducer.default
    choices = dict(reducer.choices)
    facts = choices.get(chosen, choices.get("")) if chosen else None
    return (True, facts, reducer.replaces) if facts is not None else not_known


def _where(over: HandOver, reduced: CodeFact) -> str:
    """What the call a dict is handed to does to its values, and where the helper reduces them."""
    at = f"{reduced.span.path}:{reduced.span.line}"
    if over.origin.rsplit(".", 1)[-1] == reduced.origin:
        return f"at {at} {reduced.says}"
    return f"hands it to {reduced.origin} ({at}), which {reduced.says}"


def param_at(flow: FunctionFlow, where: int | str, bound: bool) -> str | None:
    """The parameter a call passes at `where` (a position or a keyword), as `passed_at` counts."""
    if isinstance(where, str):
        return where if where in flow.params else None
    index = where + 1 if flow.bound and bound else where
    return flow.params[index] if index < len(flow.params) else None


def passed_at(flow: FunctionFlow, param: str, bound: bool) -> int:
    """The argument position a call passes `param` at (-1: none); a call through `self.` skips it."""
    index = flow.params.index(param) if param in flow.params else -1
    return index - 1 if flow.bound and bound else index


def code_claims(
    functions: Iterable[FunctionFlow],
    calls: Iterable[CallFlow],
    index: MetricIndex,
    own: frozenset[str] = frozenset(),
    rewritten: frozenset[str] = frozenset(),
) -> tuple[CodeClaim, ...]:
    """Every code fact that reaches a metric: through a logged key, or through a parameter of a
    function that logs, the way that parameter's docstring would be attributed (its keys, else
    its name: a loss function's `entropy_term` reaches its logged `rl/entropy_term` through
    arithmetic the walk does not follow). Not a parameter of a function that logs nothing:
    there a name is no data flow (seen on NeMo-RL: every caller's `num_samples=min(...)` of a
    helper that prints samples was taken for what `reward_model_env/num_samples` counts). A framework's
    fact about a metric the project also logs itself (`own`) is left out: the project's own
    value may be another one, which the code need not show; so are the facts of an entry point
    whose logs a class of the project may rewrite (`rewritten`, its import paths)."""
    project = CallGraph(functions, calls)
    claims: dict[tuple[str, CodeFact], set[Span]] = {}
    for flow in project.functions.values():
        logged = set()
        handed = dict(flow.handed)  # by index in the sinks, which only a framework's flow thins out, and it hands nothing
        sites = dict(flow.sites)  # likewise
        for at, (key, atoms) in enumerate(_unshadowed(flow, index, own, rewritten)):
            logged |= {a for a in atoms if isinstance(a, str)}
            metrics = index.for_key(key)
            facts = project.facts(flow.name, atoms) if metrics else frozenset()
            facts = project.handed(facts, handed[at], key) if at in handed and facts else facts
            for claim in ((metric, fact) for metric in metrics for fact in facts):
                claims.setdefault(claim, set()).update((sites[at],) if at in sites else ())
        if not flow.logs or not project.callers.get(flow.name):
            continue
        for param in flow.params:  # the name first: most parameters name no metric, and their callers need not be followed
            metrics = index.for_name(param) if param not in logged else ()
            facts = project.parameter(flow.name, param, 0) if metrics else frozenset()
            for claim in ((metric, fact) for metric in metrics for fact in facts):
                claims.setdefault(claim, set())
    return tuple(CodeClaim(metric, fact, frozenset(at)) for (metric, fact), at in claims.items())
