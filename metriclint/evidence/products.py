"""What the code of all the files makes together (model.CodeProducts): the keys built across
calls and read back, and what each metric is computed as. A warm run keeps them while no
file's code changes (extract/kept.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Sequence

from metriclint.base import keys
from metriclint.evidence.built_keys import built_keys, read_back
from metriclint.evidence.callbacks import silence, silenced_files
from metriclint.evidence.called_keys import called_facts, called_keys
from metriclint.evidence.code_claims import CallGraph, code_claims
from metriclint.evidence.constants import constant_keys
from metriclint.evidence.inherited import inherited_flows
from metriclint.evidence.logged_bags import LoggedBags, logged_entries
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.language.attribution import MetricIndex
from metriclint.model import UNKNOWN_OBJECT, Atom, CallFlow, CodeClaim, CodeProducts, FunctionFlow, KeyUse
from metriclint.sources import Extraction


def made_keys(extractions: Sequence[Extraction], uses: Sequence[KeyUse]) -> CodeProducts:
    """The keys built by calls that pass a string to a key template and those read back from a
    dict a logged template covers (evidence/built_keys.py), the keys logged through dicts that
    cross functions (evidence/logged_bags.py), the keys another module's constant names and
    their help texts (evidence/constants.py); not what the code computes, which needs the
    metric index these keys make (`code_facts`). A call matched by a tracker's method name
    that reaches a method of the project's own (`self.board.log(metrics)`, where `Board.log`
    prints) logs nothing itself: its keys are what that method logs (`own_methods`)."""
    named, help_tables = constant_keys(extractions)
    functions, calls = [f for e in extractions for f in e.functions], [c for e in extractions for c in e.calls]
    classes, instances = [c for e in extractions for c in e.classes], dict(i for e in extractions for i in e.instances)
    graph = CallGraph(functions, (), classes, instances)
    calls = _attribute_strings(calls, graph)
    own_methods = frozenset(
        span
        for e in extractions
        for span, callee, caller, keywords in e.tentative
        if _reaches_own(_told(graph, callee), callee, caller, keywords) or _fans_out(graph, callee, caller, keywords)
    )
    # an entry logged where it was put is the file's own; one only written there (a dict literal's
    # key shaped like one) is replaced by what the project-wide step says logs it (`own_keys`)
    seen = {(use.key, use.span) for use in uses if use.via not in own_methods and use.sink}
    dispatched = [name for e in extractions for name in e.dispatched]
    name_lists = dict(named for e in extractions for named in e.name_lists)
    # what the project's evaluations log (`trainer.evaluate()`): the framework's keys, and the
    # dict its `compute_metrics` returns, through a flow of its own
    evaluated, evaluations = called_keys((m for e in extractions for m in e.method_calls), classes, knowledge().entry_points)
    constants = dict(named for e in extractions for named in e.constants)
    bags = LoggedBags([*functions, *evaluations], calls, classes, instances, dispatched, name_lists, constants)
    logged = logged_entries(bags, own_methods)
    through = [entry.use for entry in logged if (entry.use.key, entry.use.span) not in seen]
    known = {(use.key, use.span) for use in uses} | {(entry.use.key, entry.use.span) for entry in logged}
    standing = list({(use.key, use.span): use for use in bags.filled_standing() if (use.key, use.span) not in known}.values())
    made = [*built_keys(graph, calls, bags.looped_texts), *named, *through, *evaluated, *standing]
    families = {entry.use for entry in logged if entry.family}  # templates that name a family of keys (MetricsEntry.family)
    built = tuple(use for use in made if use in families or not keys.too_generic(use.key))
    read = tuple(dict.fromkeys(read_back([r for e in extractions for r in e.reads], [*uses, *made])))
    # a key written where it is put is a sink of its function already
    put_logged = tuple((entry.function, entry.use.key, entry.value) for entry in logged if not entry.recorded)
    # a key is a label's only where nothing logs it as a value's name: written in a file, built
    # or named by a constant (but not through a dict), or logged through a dict unlabelled
    through_dicts = {entry.use.key for entry in logged}
    written_or_built = {use.key for use in uses} | ({use.key for use in made} - through_dicts)
    named_too = written_or_built | {entry.use.key for entry in logged if not entry.labelled}
    labelled = frozenset(entry.use.key for entry in logged if entry.labelled) - named_too
    return CodeProducts(
        built, read, help_tables, own_methods=own_methods, put_logged=put_logged, labelled=labelled, cut_short=bags.cut_short
    )


def _attribute_strings(calls: list[CallFlow], graph: CallGraph) -> list[CallFlow]:
    """Each call with the strings of the object attributes its arguments read (CallFlow.attributes:
    `sep = tracker.group_separator` handed on) among those it passes, as the objects' classes set
    them: the keys built across calls and the dicts logged through them are filled with them alike."""
    if graph.callees is None:
        return calls
    strings = graph.callees.hierarchy.strings
    return [
        replace(call, texts=(*call.texts, *((where, texts) for where, held in call.attributes if (texts := strings(held)))))
        if call.attributes
        else call
        for call in calls
    ]


def own_keys(extractions: Iterable[Extraction], made: CodeProducts) -> list[KeyUse]:
    """The keys the files log themselves, less those a call logged that reaches a method of the
    project's own (`made.own_methods`), and those the project-wide step found logged at the same
    place, with what logs them (`made.built`). A key no sink takes where it is written (a dict
    literal's, shaped like a metric key) stands for itself only until the project-wide step finds
    the dict logged: then it is logged under the keys that step found (`f"rollout/{k}"`)."""
    superseded = {(use.key, use.span) for use in made.built}
    # a key written where a sink logs it under another (`{f"loader/{k}": v for k, v in
    # spread.items()}` re-keys `spread`'s "latency/low" where it is written) is that one only
    placed = {use.span for use in made.built if use.sink} | {use.span for e in extractions for use in e.keys if use.sink}
    return [
        use
        for e in extractions
        for use in e.keys
        if (use.via is None or use.via not in made.own_methods)
        and (use.key, use.span) not in superseded
        and (use.sink or use.span not in placed)
    ]


def code_facts(
    extractions: Sequence[Extraction], uses: Sequence[KeyUse], index: MetricIndex, tests: frozenset[str], made: CodeProducts
) -> tuple[CodeClaim, ...]:
    """What the code outside the test files computes for each metric: a test's arithmetic
    shows what it expects, not how the project computes the value (nor does its subclass of a
    project's trainer change what the project's own runs log). The walk of a test file makes no
    flows, calls, classes or callbacks (sources/python/walk.py); the keys it logs are no values
    of the project's either (`own`). `made`: what `made_keys` found, whose entries put in a dict
    that a sink elsewhere logs are sinks of the function that put them."""
    entries = knowledge().entry_points
    classes = [c for e in extractions for c in e.classes]
    passed = (p for e in extractions for p in e.callbacks)
    lists = (listed for e in extractions for listed in e.callback_lists)
    functions, classes = silence(
        [f for e in extractions for f in e.functions], classes, silenced_files(passed, classes, lists, entries), entries
    )
    evaluated = called_facts((m for e in extractions for m in e.method_calls), classes, entries)
    functions = _with_put_logged(functions + inherited_flows(classes, entries) + evaluated, made.put_logged)
    calls = [c for e in extractions for c in e.calls]
    own = frozenset(
        m for use in uses if use.measured and not use.from_keyword and use.span.path not in tests for m in index.for_key(use.key)
    )
    rewritten = frozenset(p for e in extractions for r in e.rewrites for p in r.entry)
    claims = code_claims(functions, calls, index, own, rewritten)
    return tuple(
        sorted(claims, key=lambda c: (c.metric, c.fact.span, c.fact.facet, c.fact.value, c.fact.origin, c.fact.says))
    )  # sets made them: one order for every run


def _with_put_logged(functions: list[FunctionFlow], put_logged: Iterable[tuple[str, str, frozenset[Atom]]]) -> list[FunctionFlow]:
    """The flows, each with the entries it put in a dict that a sink elsewhere logs as sinks of
    its own: what they compute is followed as any logged value's is."""
    extra: dict[str, list[tuple[str, frozenset[Atom]]]] = {}
    for function, key, value in put_logged:
        extra.setdefault(function, []).append((key, value))
    return [replace(f, sinks=f.sinks + tuple(extra[f.name])) if f.name in extra else f for f in functions]


def placeholder_flags(code: Iterable[CodeClaim]) -> frozenset[str]:
    """The flags some logged value is a placeholder without: a text that names one states the
    condition, so ML006 does not hold it to the default path."""
    return frozenset(f.placeholder.flag_name for c in code if (f := c.fact).placeholder is not None)


def _fans_out(graph: CallGraph, callee: str, caller: str, keywords: tuple[str, ...]) -> bool:
    """Whether a call matched by a tracker's method name runs several methods of the project's
    own, each of which takes what the call passes: a front's call of its backends, or a call on
    an object nothing names of a method one family of classes alone defines (evidence/callees.py
    `backends`, `family`). They run, not a tracker."""
    runs = graph.callees.fanned(callee, caller) if graph.callees is not None else ()
    return bool(runs) and all(_reaches_own(m, callee, "", keywords) for m in runs)


def _told(graph: CallGraph, callee: str) -> FunctionFlow | None:
    """The one method a call runs, where its object's class is told: a call on an object nothing
    names runs a method of the project's own only where one family alone defines it (`_fans_out`),
    not wherever one class happens to define a method of a tracker's name."""
    return None if callee.startswith(UNKNOWN_OBJECT) else graph.resolve(callee)


def _reaches_own(method: FunctionFlow | None, callee: str, caller: str, keywords: tuple[str, ...]) -> bool:
    """Whether a call matched by a tracker's method name reaches a method of the project's own.
    Not the method it is in, reached through an object of a class told nowhere (`self.logger.
    log_metrics(m)` in the project's only `log_metrics`): a method handing its values on to an
    attribute's method of its own name delegates to the tracker, where a call of itself
    (`self.log_metrics(...)`, the callee its own name) recurses. Nor a method that takes none of
    a keyword the call passes (`writer.log(m, commit=True)`, where `Timers.log(names)`): Python
    would refuse the call, so it is the tracker's."""
    if method is None or (method.name == caller and callee != caller):
        return False
    return method.any_keyword or all(k in method.params for k in keywords)
