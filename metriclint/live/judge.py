"""The live check's run: statements and runs in, findings out.

For each run: open it (readers/kinds.py: its streams and facts), make the probes its
statements call for (`plan`), route each kept point to its metric's probes, then hold every
statement against their outcomes: a value ruled out is ML011, a key registered but never
logged ML012, one logged but not registered ML013, a statement nothing decided ML014 (a note,
off by default), a run file that cannot be read on ML900.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from metriclint.checks import ML011, ML012, ML013, ML014, ML900
from metriclint.knowledge.registry import Registry
from metriclint.live import probes as p
from metriclint.live import resume
from metriclint.live.facts import Facts
from metriclint.live.points import Corrupt, Fact, Point, RunSource, Wanted
from metriclint.live.readers.kinds import ReaderOptions, open_run
from metriclint.live.readers.tfevents import EventFile
from metriclint.live.resume import Store
from metriclint.live.statements import KeyMetrics, StatedValue, over_the_run
from metriclint.live.templates import Template
from metriclint.model import CodeClaim, Finding, Related, Span

PRUNE_EVERY = 1 << 14  # points between two looks for decided probes


@dataclass
class Plan:
    """One run's probes, by metric, and why each statement left without one is undetermined."""

    probes: dict[str, list[p.Probe]] = field(default_factory=dict)
    open: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (metric, facet, value) -> why no probe


def plan(statements: list[StatedValue], facts: Facts, code: Iterable[CodeClaim] = ()) -> Plan:
    """The probes the statements call for, given the run's facts."""
    made = Plan()
    by_metric: dict[str, list[StatedValue]] = defaultdict(list)
    for statement in statements:
        by_metric[statement.metric].append(statement)
    per_device = {c.metric for c in code if c.fact.facet == "scope" and c.fact.value == "per-device"}
    vocab, capacity = facts.get("vocab_size"), facts.get("device_memory")
    for metric, said in by_metric.items():
        probes: dict[object, p.Probe] = {}
        device = metric in per_device or any(s.facet == "scope" and s.value == "per-device" and not s.negated for s in said)
        granular = any(s.facet == "granularity" and s.value == "per-step" and not s.negated for s in said)
        for s in said:
            wanted_key, made_probe, why = _probe_for(s, facts, vocab, granular)
            if made_probe is not None and wanted_key not in probes:
                probes[wanted_key] = made_probe
            elif made_probe is None and why:
                made.open[(metric, s.facet, s.value)] = why
        series = [p.Series()] if any(s.facet == "quantity" and s.value in p.Series.values and not s.negated for s in said) else []
        found = [*probes.values(), *_capacity_probes(said, capacity, device), *series]
        if found:
            made.probes[metric] = found
    return made


def _probe_for(s: StatedValue, facts: Facts, vocab: Fact | None, granular: bool) -> tuple[object, p.Probe | None, str]:
    """The probe a statement calls for (with the key that makes one per metric), or why none."""
    facet, value = s.facet, s.value
    if facet == "clipping" and value == "after" and not s.negated:
        threshold = facts.get("max_grad_norm")
        if threshold is None or float(threshold.value) <= 0:
            return None, None, facts.why_missing("max_grad_norm") if threshold is None else "clipping is off (max_grad_norm <= 0)"
        return "clip", p.ClipBound(threshold), ""
    bound = p.defined_bounds(facet, value, vocab) if not s.negated else None
    if bound is not None:
        return ("bound", facet, value), bound, ""
    if facet == "estimator" and value in ("k1", "negative-k1") and not s.negated:
        return "kl", p.KlMean(), ""
    if facet == "reduction" and value == "max" and not s.negated:
        if over_the_run(s):
            return "peak", p.RunningPeak(), ""
        return None, None, "a maximum within each step may decrease; only one over the whole run is tested"
    if facet == "scope" and value == "global" and not s.negated:
        return "ranks", p.RanksAgree(), ""
    if facet == "unit" and value in ("GB", "GiB", "MB", "MiB"):
        decimal = "GB" if value in ("GB", "GiB") else "MB"
        return ("exact", decimal), p.UnitExact(decimal, decimal[0] + "iB"), ""
    if facet == "unit" and value == "seconds" and not s.negated:
        if granular:
            return "duration", p.StepDuration(), ""
        return None, None, "only a per-step duration (granularity per-step) is held against the wall-clock time"
    if facet == "timing":
        return _timing(facts)
    return None, None, f"no test of the values speaks to {facet}={value}"


def _capacity_probes(statements: list[StatedValue], capacity: Fact | None, device: bool) -> list[p.Probe]:
    """A device-capacity bound per memory unit stated of one device's memory, with a firm capacity."""
    units = {s.value for s in statements if s.facet == "unit" and not s.negated and s.value in p.capacity_units()}
    if capacity is None or not capacity.firm or not device:
        return []
    return [p.DeviceCapacity(unit, capacity) for unit in sorted(units)]


def _timing(facts: Facts) -> tuple[object, p.Probe | None, str]:
    needed = {name: facts.get(name) for name in ("lr_scheduler", "learning_rate", "total_steps")}
    missing = [name for name, fact in needed.items() if fact is None or not fact.firm]
    warmup = facts.get("warmup_steps")
    ratio = facts.get("warmup_ratio")
    if missing:
        return None, None, facts.why_missing(missing[0]) if needed[missing[0]] is None else f"{missing[0]} is only presumed"
    kind, rate, total = str(needed["lr_scheduler"].value), float(needed["learning_rate"].value), float(needed["total_steps"].value)  # type: ignore[union-attr]
    if p.schedule(kind, 0, 0, total) is None:
        return None, None, f"the {kind} schedule is not one the timing test knows (linear, cosine, constant, constant_with_warmup)"
    steps = (
        float(warmup.value)
        if warmup is not None and warmup.firm and float(warmup.value) > 0
        else (math.ceil(total * float(ratio.value)) if ratio is not None and ratio.firm else 0.0)
    )
    cited = ", ".join(f"{f.name} {f.value} at {f.where}" for f in (*needed.values(), warmup or ratio) if f is not None)
    return "timing", p.Timing(kind, rate, steps, total, cited), ""


@dataclass
class Read:
    """One run (or one shard of it) as read: its facts, its plan with the probes fed, the keys
    it logged and what could not be read. Plain values only, so that a shard read on a Dask
    worker comes back whole (scale.py)."""

    name: str
    facts: Facts
    plan: Plan
    seen: dict[str, Span]
    problems: list[tuple[str, str, int]] = field(default_factory=list)  # (file shown, what is wrong, line)
    unread: list[str] = field(default_factory=list)
    points: int = 0
    quantities: dict[str, tuple[str, ...]] = field(default_factory=dict)  # metric -> quantity values stated, for exp_pairs

    def merge(self, other: Read) -> None:
        """Take in another shard of the same run, read with the same statements and facts."""
        _merge(self.plan, other.plan)
        for key, span in other.seen.items():
            self.seen.setdefault(key, span)
        self.problems += other.problems
        self.unread += other.unread
        self.points += other.points
        self.quantities = {**other.quantities, **self.quantities}


def read_run(
    name: str,
    statements: list[StatedValue],
    names: KeyMetrics,
    given: list[Fact],
    presumed: list[Fact],
    templates: list[Template],
    code: Iterable[CodeClaim] = (),
    step_key: str | None = None,
    rank_key: str = "rank",
    store: Store | None = None,
    label: str | None = None,
) -> Read:
    """Read the run at `name` (a file or folder); `label` names the run in findings when `name`
    is one shard of it. With a `store`, each event file is its own shard, read on from where the
    last check stopped (resume.py)."""
    routes: dict[str, list[p.Probe]] = {}
    made = Plan()

    def keep(key: str) -> bool:
        routes[key] = [probe for metric in names.of(key) for probe in made.probes.get(metric, ())]
        return bool(routes[key])

    wanted = Wanted(keep)
    run = open_run(name, ReaderOptions(wanted, step_key, rank_key, templates, store.offsets() if store is not None else {}))
    facts = Facts()
    for fact in (*given, *run.facts, *presumed):
        facts.add(fact)
    made = plan(statements, facts, code)
    read = Read(label or name, facts, made, wanted.seen, [(path, e.message, e.line) for path, e in run.problems], list(run.unread))
    for s in statements:
        if s.facet == "quantity" and not s.negated:
            read.quantities[s.metric] = (*read.quantities.get(s.metric, ()), s.value)
    signature = resume.signature(statements, [f for found in facts.found.values() for f in found], code) if store is not None else ""
    for stream, reader in run.streams:
        if store is not None and isinstance(reader, EventFile):
            shard = _event_shard(reader, stream.source, store, signature, read, lambda: plan(statements, facts, code), names)
            _merge(made, shard)
        else:
            _feed(stream.points, stream.source, routes, read, reader)
    return read


def _feed(points: Iterable[Point], source: RunSource, routes: dict[str, list[p.Probe]], read: Read, reader: object) -> None:
    """Route a stream's points to their probes, pruning the decided ones now and then."""
    count = 0
    try:
        for rank, key, step, value, wall in points:
            for probe in routes[key]:
                probe.add(source, rank, step, value, wall)
            count += 1
            if not count % PRUNE_EVERY:
                for key_probes in routes.values():
                    key_probes[:] = [probe for probe in key_probes if not probe.decided]
    except Corrupt as error:
        read.problems.append((source.path, error.message, error.line))
    except OSError as error:
        read.problems.append((source.path, f"cannot read: {error.strerror or error}", 1))
    read.points += count
    problem = getattr(reader, "problem", None)
    found = problem() if callable(problem) else None
    if found is not None:
        read.problems.append((source.path, found.message, found.line))


def _event_shard(
    reader: EventFile,
    source: RunSource,
    store: Store,
    signature: str,
    read: Read,
    fresh: Callable[[], Plan],
    names: KeyMetrics,
) -> Plan:
    """One event file's probes: the kept ones fed what was written since, or new ones fed the
    whole file; then kept for the next check."""
    kept = store.load(source.path, signature, reader.offset) if reader.offset else None
    if kept is None and reader.offset:
        reader = EventFile(reader.path, reader.shown, reader.wanted, reader.rank)  # the kept state is not this one's: from the start
    shard = Plan(kept.probes) if kept is not None else fresh()
    for key in kept.keys if kept is not None else ():
        reader.wanted(key, source.path)
    routes: dict[str, list[p.Probe]] = {}
    for key in list(reader.wanted.seen):
        routes[key] = [probe for metric in names.of(key) for probe in shard.probes.get(metric, ())]
    feed = _Routes(routes, names, shard)
    _feed(reader.points(), source, feed, read, reader)
    logged = reader.logged() + (kept.keys if kept is not None else [])
    store.save(source.path, signature, reader.offset, logged, shard.probes)
    return shard


class _Routes(dict[str, list[p.Probe]]):
    """A shard's routes, each key's made when its first point comes."""

    def __init__(self, routes: dict[str, list[p.Probe]], names: KeyMetrics, shard: Plan) -> None:
        super().__init__(routes)
        self.names, self.shard = names, shard

    def __missing__(self, key: str) -> list[p.Probe]:
        found = self[key] = [probe for metric in self.names.of(key) for probe in self.shard.probes.get(metric, ())]
        return found


def _merge(into: Plan, other: Plan) -> None:
    """Take another shard's probes into a plan made from the same statements and facts."""
    for metric, probes in other.probes.items():
        mine = into.probes.setdefault(metric, [])
        if not mine:
            mine += probes
            continue
        for probe, theirs in zip(mine, probes):
            probe.merge(theirs)
    for opened, why in other.open.items():
        into.open.setdefault(opened, why)


def findings(statements: list[StatedValue], reads: list[Read], registry: Registry | None, names: KeyMetrics) -> list[Finding]:
    """Every statement against every run's outcomes, the coverage of the registry, the run
    files that could not be read."""
    found: list[Finding] = []
    logged = {metric for read in reads for key in read.seen for metric in names.of(key)}
    outcomes: dict[str, list[tuple[Read, p.Probe, p.Outcome]]] = defaultdict(list)
    for read in reads:
        for metric, probes in read.plan.probes.items():
            outcomes[metric] += [(read, probe, probe.outcome()) for probe in probes]
    for s in statements:
        if s.metric not in logged:
            if any(read.seen for read in reads):
                found.append(_undetermined(s, "the run never logged it"))
            continue
        about = [(read, probe, o) for read, probe, o in outcomes.get(s.metric, ()) if probe.facet == s.facet]
        disproofs = [(read, o) for read, _, o in about if _contradicts(s, o)]
        if disproofs:
            found.append(_disproved(s, disproofs))
            continue
        why = next((o.undetermined for _, probe, o in about if s.value in probe.values and o.undetermined), "")
        why = why or next((read.plan.open[key] for read in reads if (key := (s.metric, s.facet, s.value)) in read.plan.open), "")
        if why:
            found.append(_undetermined(s, why))
    if registry is not None:
        found += _coverage(registry, reads, names)
    for read in reads:
        for path, message, line in read.problems:
            found.append(ML900.finding(Span(path, line, 1, line, 1), f"run file: {message}", phrase=message))
        for path in read.unread:
            message = "a text log, but the project has no log message with a logged value to read it by"
            found.append(ML900.finding(Span(path, 1, 1, 1, 1), message, phrase=message))
    return found


def _contradicts(s: StatedValue, outcome: p.Outcome) -> bool:
    if s.negated:
        return outcome.established is not None and outcome.established[0] == s.value
    return s.value in outcome.ruled_out


def _disproved(s: StatedValue, disproofs: list[tuple[Read, p.Outcome]]) -> Finding:
    read, outcome = disproofs[0]
    why = outcome.established[1] if s.negated and outcome.established else outcome.ruled_out[s.value]
    first = f", first at {outcome.first}" if outcome.first is not None else ""
    others = len({r.name for r, _ in disproofs}) - 1
    more = f" (and {others} other run{'s' if others > 1 else ''})" if others > 0 else ""
    message = f"{s.metric}: {s.says}; run '{read.name}' disproves it{more}: {why}{first}"
    related = []
    if outcome.first is not None:
        related.append(Related(Span(outcome.first.path, 1, 1, 1, 1), f"step {outcome.first.step}: {outcome.first.value!r}"))
    return ML011.finding(
        s.span,
        message,
        metric=s.metric,
        facet=s.facet,
        found=s.found,
        source=s.source,
        related=tuple(related),
        phrase=s.phrase or f"{s.facet}: {s.value}",
        expected=outcome.established[0] if outcome.established else "",
    )


def _undetermined(s: StatedValue, why: str) -> Finding:
    return ML014.finding(
        s.span,
        f"{s.metric}: {s.says}; undetermined by the run: {why}",
        metric=s.metric,
        facet=s.facet,
        found=s.found,
        source=s.source,
        phrase=s.phrase or f"{s.facet}: {s.value}",
    )


def _coverage(registry: Registry, reads: list[Read], names: KeyMetrics) -> list[Finding]:
    found: list[Finding] = []
    keys = {key: span for read in reads for key, span in read.seen.items()}
    if not keys:
        return found
    logged = {metric for key in keys for metric in names.of(key)}
    runs = ", ".join(read.name for read in reads)
    for key, entry in registry.metrics.items():
        if key not in logged:
            logged_count = f"{len(keys)} key{'s' if len(keys) != 1 else ''} logged"
            message = f"{key}: registered, but the run ({runs}) never logged it ({logged_count})"
            found.append(ML012.finding(entry.span, message, metric=key, related=(Related(entry.span, key),), phrase=key))
    covered: Callable[[str], bool] = lambda key: any(m in registry.metrics for m in names.of(key))
    for key, span in sorted(keys.items()):
        if not covered(key):
            message = f"{key}: logged by the run, but no registry key, template or alias covers it; add it to {registry.path}"
            found.append(ML013.finding(span, message, metric=key, phrase=key))
    return found


def presumed(files: Iterable[Path]) -> list[Fact]:
    from metriclint.live.facts import argument_defaults

    return argument_defaults(files)


def exp_pairs(read: Read) -> dict[str, list[str]]:
    """For each perplexity metric of a run, the losses it is the exponential of (probes.exp_pairs)."""
    series = {metric: probe for metric, probes in read.plan.probes.items() for probe in probes if isinstance(probe, p.Series)}
    said = read.quantities
    losses = {metric: probe for metric, probe in series.items() if "nll" in said.get(metric, ())}
    return {
        metric: found for metric, probe in series.items() if "perplexity" in said.get(metric, ()) and (found := p.exp_pairs(probe, losses))
    }
