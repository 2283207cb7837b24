"""Keys built from a parameter, with the strings the project's calls pass for it.

`def log_time(name, seconds): tracker.log({f"perf/{name}_time": seconds})` logs the template
`perf/{name}_time`; the call `log_time("rollout", t)` logs `perf/rollout_time`. Each direct call
of a project function (resolved as for code evidence, code_claims.Project) fills the
placeholders named after the parameters it passes a known string for, so the inventory holds
the keys themselves, at the call that makes them.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable, Iterator

from metriclint.base import keys
from metriclint.evidence.code_claims import CallGraph, passed_at
from metriclint.model import Bag, CallFlow, FunctionFlow, KeyUse

Looped = Callable[[CallFlow, Bag], tuple[str, ...]]


def built_keys(project: CallGraph, calls: Iterable[CallFlow], looped: Looped = lambda call, bag: ()) -> Iterator[KeyUse]:
    """Every key a call makes by passing strings for a template's placeholders; one still too
    generic to name a metric (`rollout/{key}`) is for `read_back` only. `project` resolves the
    calls, of methods through objects too where it knows the classes (evidence/callees.py);
    `looped` says which keys a key argument built from a loop's key over a dict stands for
    (CallFlow.keyed, LoggedBags.looped_texts)."""
    for call in calls:
        flow = project.resolve(call.callee) if call.texts else None
        if flow is None or not flow.templates:
            continue
        given = _given(flow, call)
        each = each_key(flow, flow.params, call, looped)
        for template in flow.templates:
            for key in _filled(template, given | each, frozenset(each)):
                yield KeyUse(key, call.span)


def read_back(reads: Iterable[KeyUse], logged: Iterable[KeyUse]) -> Iterator[KeyUse]:
    """Keys the code reads back from a dict that a logged template covers: the template's own
    series, written out. `{f"perf/{name}_time": s for name, s in timers.items()}` logs a
    timer's totals under names the code cannot see; `stats["perf/log_probs_time"]` read from
    it names one of them. A template made at a call counts even when it is only placeholders
    after its section: `gather("rollout", stats)` logging `{f"{section}/{key}": v ...}` makes
    `rollout/{key}`, and a `"rollout/log_probs"` read back is one of its series. A read-back key that no logged template covers stays unknown: a
    dict of settings or of tensors is read the same way."""
    written = {use.key for use in logged}
    templates = [key for key in written if keys.is_template(key) and not keys.is_template(key.split("/", 1)[0])]
    by_section: dict[str, list[str]] = {}
    for template in templates:
        by_section.setdefault(template.split("/", 1)[0], []).append(template)
    for use in reads:
        candidates = by_section.get(use.key.split("/", 1)[0], ())
        if use.key not in written and any(keys.same_metric(template, use.key) for template in candidates):
            yield use


def _given(flow: FunctionFlow, call: CallFlow) -> dict[str, tuple[str, ...]]:
    """The strings this call passes for each parameter of `flow`, by keyword or position."""
    found = {}
    for param in flow.params:
        position = passed_at(flow, param, call.bound)
        for where, texts in call.texts:
            if (where == param or where == position) and not any(keys.is_template(t) for t in texts):
                found[param] = texts
    return found


def each_key(flow: FunctionFlow, params: Iterable[str], call: CallFlow, looped: Looped) -> dict[str, tuple[str, ...]]:
    """The keys `call` passes for each of `params` (of `flow`) as a key built from a loop's key
    over a dict (CallFlow.keyed): one per entry, `log_scalar(f"eval/{k}", v)` for each `k` of
    `scores`, which `looped` finds."""
    found = {}
    for param in params:
        position = passed_at(flow, param, call.bound)
        for where, bag in call.keyed:
            if where in (param, position) and (texts := looped(call, bag)):
                found[param] = texts
    return found


def _filled(template: str, given: dict[str, tuple[str, ...]], each: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Every key `template` makes with the strings given for its placeholders; () when none is
    given. Past 16 combinations a template makes none, but for the parameters in `each`, whose
    strings are keys the code logs one by one, not choices that multiply."""
    used = {param: texts for param, texts in given.items() if f"{{{param}}}" in template}
    if not used or math.prod(len(t) for p, t in used.items() if p not in each) > keys.MAX_VALUES:
        return ()
    return tuple(dict.fromkeys(keys.filled(template, used)))
