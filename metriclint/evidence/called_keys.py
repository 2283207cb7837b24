"""Keys a framework logs where the project calls one of its methods itself (rules/code/
frameworks.yaml `called`): `trainer.evaluate()` logs `eval_runtime` and the rest, and every key
of the dict the trainer's `compute_metrics` returns under "eval_".

The walk records each such call with the class that made the object (model.MethodCall); only
here is it known whether that class is the entry point, or a class of the project that extends
it (`AnswerTrainer(Seq2SeqTrainer)` in another file) with nothing along the way that evaluates
its own way (the `overrides`) or a base of another package that may (inherited.py)."""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

from metriclint.evidence.inherited import Hierarchy
from metriclint.knowledge.frameworks import Called, EntryPoint
from metriclint.model import FRAMEWORKS, Bag, CodeFact, FunctionFlow, Held, KeyUse, LoggedBag, MethodCall, ProjectClass


def called_keys(
    calls: Iterable[MethodCall], classes: Iterable[ProjectClass], entries: Mapping[str, EntryPoint]
) -> tuple[list[KeyUse], list[FunctionFlow]]:
    """The keys each call logs of the framework's own, and one flow per call that logs the dict
    its `compute_metrics` callable returns (evidence/logged_bags.py follows it to its keys)."""
    uses: list[KeyUse] = []
    flows: list[FunctionFlow] = []
    for call, entry, called, _ in _resolved(calls, classes, entries):
        sink = _sink(entry, call)
        for prefix in call.prefixes:
            uses += [
                KeyUse(_key(key, prefix), call.span, measured=False, sink=sink, framework=True)
                for logged in called.keys
                for key in logged.keys
            ]
        held = tuple(Held("result", callee, rekey=f"{prefix}_{{}}") for prefix in call.prefixes for callee in call.returned)
        if held:
            name = f"{call.span.path}:{call.span.line}.{FRAMEWORKS}"
            flows.append(FunctionFlow(name, (), False, (), (), logged=(LoggedBag(Bag(held=held), sink, call.span),)))
    return uses, flows


def called_facts(calls: Iterable[MethodCall], classes: Iterable[ProjectClass], entries: Mapping[str, EntryPoint]) -> list[FunctionFlow]:
    """One flow per call: what each of the framework's keys it logs is, as code facts at the call."""
    flows = []
    for call, entry, called, path in _resolved(calls, classes, entries):
        origin = f"{path}.{call.method}"
        sinks = [
            (
                _key(key, prefix),
                frozenset(CodeFact(f, v, call.span, origin, f"{_key(logged.says, prefix)} ({entry.source})") for f, v in logged.facts),
            )
            for prefix in call.prefixes
            for logged in called.keys
            if logged.facts
            for key in logged.keys
        ]
        if sinks:
            flows.append(FunctionFlow(f"{call.span.path}:{call.span.line}.{FRAMEWORKS}", (), False, tuple(sinks), ()))
    return flows


def _resolved(
    calls: Iterable[MethodCall], classes: Iterable[ProjectClass], entries: Mapping[str, EntryPoint]
) -> Iterator[tuple[MethodCall, EntryPoint, Called, str]]:
    """Each call whose object's class reaches its entry point, with the path that names it there."""
    hierarchy: Hierarchy | None = None
    for call in calls:
        entry = entries.get(call.entry)
        called = entry.called if entry is not None else None
        if entry is None or called is None:
            continue
        if entries.get(call.owner) is entry:
            yield call, entry, called, call.owner
            continue
        hierarchy = hierarchy or Hierarchy(classes, dict(entries))
        shape = hierarchy.base(call.owner)
        ancestry = hierarchy.ancestry(shape) if shape is not None else None
        if ancestry is None or ancestry.foreign or ancestry.defines & called.overrides or entry.paths[0] in ancestry.silenced:
            continue
        path = ancestry.reached.get(entry)
        if path is not None:
            yield call, entry, called, path


def _key(template: str, prefix: str) -> str:
    return template.replace("{prefix}", prefix)


def _sink(entry: EntryPoint, call: MethodCall) -> str:
    return f"{entry.says}'s {call.method}(), from its own loop"
