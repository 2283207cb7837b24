"""The value tests: one per facet value a run's numbers can speak to, each an online,
mergeable accumulator.

A probe takes the points of one metric in one run (`add`), may be merged with the same probe
over another shard of the run (`merge`: counts add up, sketches join), and says what the values
show (`outcome`): values of a facet they rule out, a value they establish, or why they
decide nothing. Once a probe's verdict can no longer change (`decided`), its metric's points are
no longer routed to it. A disproof counts at most `LIMIT` disagreeing values: the message then
says "at least". The value quoted as the first to disagree is the one at the lowest step, so
that a run read whole and one read in shards quote the same.

Bounds are read only from a definition or a stated fact, never from words: a fraction lies in
[0, 1] by definition; "percent" and "ratio" bound nothing. Each probe's docstring says what it
proves and what it cannot; docs/live-check.md lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from metriclint.live.points import Fact, Source

LIMIT = 100  # disagreeing values counted before a disproof stops its probe
RELATIVE = 1e-3  # slack of a stated bound: a threshold compared in float32 by the code
TINY = 1e-9  # slack of a definition's bound (0 and 1 are exact)


@dataclass
class Seen:
    """A value that disagrees: where it was logged."""

    path: str
    step: int
    value: float
    rank: str = ""

    def __str__(self) -> str:
        rank = f", rank {self.rank}" if self.rank else ""
        return f"step {self.step}: {_shown(self.value)} ({self.path}{rank})"


def earliest(a: Seen | None, b: Seen | None) -> Seen | None:
    """The one logged first by step (then by file and rank): the same whichever shard came first."""
    if a is None or b is None:
        return a or b
    return min(a, b, key=lambda seen: (seen.step, seen.path, seen.rank))


def _shown(value: float) -> str:
    return repr(value)


@dataclass
class Outcome:
    ruled_out: dict[str, str] = field(default_factory=dict)  # facet value -> what the values show
    established: tuple[str, str] | None = None  # (facet value, what shows it)
    first: Seen | None = None  # the first value that disagrees
    consistent: str = ""  # what the values are consistent with, for the report
    undetermined: str = ""  # why nothing is decided


class Probe:
    """One test of one facet on one metric's values in one run."""

    facet: str
    values: tuple[str, ...]  # the facet values it speaks to

    def __init__(self) -> None:
        self.count = 0  # values read
        self.skipped = 0  # NaN values: they say nothing

    @property
    def decided(self) -> bool:
        return False

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        raise NotImplementedError

    def merge(self, other: Probe) -> None:
        self.count += other.count
        self.skipped += other.skipped

    def outcome(self) -> Outcome:
        raise NotImplementedError


class Bound(Probe):
    """Values outside [low, high]; a disproof of `values` once one is found."""

    def __init__(self, low: float = -math.inf, high: float = math.inf) -> None:
        super().__init__()
        self.low, self.high = low, high
        self.outside = 0
        self.first: Seen | None = None

    @property
    def decided(self) -> bool:
        return self.outside >= LIMIT

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if value != value:
            self.skipped += 1
        elif value < self.low or value > self.high:
            self.outside += 1
            if self.first is None or step < self.first.step:
                self.first = earliest(self.first, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, Bound)
        self.outside += other.outside
        self.first = earliest(self.first, other.first)

    def counted(self) -> str:
        at_least = "at least " if self.decided else ""
        return f"{at_least}{self.outside} of the {self.count} values read"

    def outcome(self) -> Outcome:
        if self.count == self.skipped:
            return Outcome(undetermined="the run logged no number for it" if not self.count else "every value it logged is NaN")
        if self.outside:
            return Outcome({v: self.disproof() for v in self.values}, first=self.first)
        return Outcome(consistent=self.agreement())

    def disproof(self) -> str:
        raise NotImplementedError

    def agreement(self) -> str:
        raise NotImplementedError


class ClipBound(Bound):
    """clipping=after: every value at most the clip threshold (`max_grad_norm`), within 0.1%.

    Proves: a value above the threshold is no norm after clipping to it. Cannot prove the norm
    is after clipping (a norm before clipping may stay below the threshold all run), nor
    anything about clipping=before. Needs the threshold as a firm fact; one read from a
    default (presumed) only explains why the verdict is left open."""

    facet, values = "clipping", ("after",)

    def __init__(self, threshold: Fact) -> None:
        limit = float(threshold.value)
        super().__init__(high=limit * (1 + RELATIVE) + TINY)
        self.threshold = threshold

    def outcome(self) -> Outcome:
        found = super().outcome()
        if found.ruled_out and not self.threshold.firm:
            return Outcome(undetermined=f"{self.counted()} exceed max_grad_norm's default {_shown(float(self.threshold.value))} "
                           f"({self.threshold.where}), but the run does not record its own (pass --fact max_grad_norm=VALUE)",
                           first=self.first)
        return found

    def disproof(self) -> str:
        return f"{self.counted()} exceed max_grad_norm {_shown(float(self.threshold.value))} ({self.threshold.where})"

    def agreement(self) -> str:
        return f"all {self.count} values are at most max_grad_norm {_shown(float(self.threshold.value))}"


class DefinedBound(Bound):
    """A bound a definition forces, for the facet values named:

    - unit=fraction: in [0, 1]. quantity=nll: at least 0; log-prob: at most 0; perplexity: at
      least 1; entropy: at least 0 (a discrete distribution's). estimator=k2 (r²/2) and k3
      (e^r - 1 - r): at least 0, value by value, so any mean, sum, max or min of them too.
    - entropy, with a firm `vocab_size` V: at most log2(V), its largest value in any unit (nats
      are smaller).

    Proves: a value outside the bound is not that quantity. Cannot prove that a value inside is:
    every loss lies above 0. Percent and ratio have no bound (a percent may exceed 100)."""

    def __init__(self, facet: str, value: str, low: float, high: float, why: str) -> None:
        super().__init__(low - TINY * max(1.0, abs(low)) if math.isfinite(low) else low,
                         high + TINY * max(1.0, abs(high)) if math.isfinite(high) else high)
        self.facet, self.value, self.why = facet, value, why
        self.values = (value,)

    def disproof(self) -> str:
        return f"{self.counted()} lie outside {self.why}"

    def agreement(self) -> str:
        return f"all {self.count} values lie within {self.why}"


def defined_bounds(facet: str, value: str, vocab: Fact | None) -> DefinedBound | None:
    """The bound a definition forces on `facet`=`value`, if any."""
    if facet == "unit" and value == "fraction":
        return DefinedBound(facet, value, 0.0, 1.0, "[0, 1], where every fraction lies")
    if facet == "estimator" and value in ("k2", "k3"):
        return DefinedBound(facet, value, 0.0, math.inf, f"[0, inf), where every {value} estimate lies")
    if facet != "quantity":
        return None
    if value == "nll":
        return DefinedBound(facet, value, 0.0, math.inf, "[0, inf), where every negative log-likelihood lies")
    if value == "log-prob":
        return DefinedBound(facet, value, -math.inf, 0.0, "(-inf, 0], where every log-probability lies")
    if value == "perplexity":
        return DefinedBound(facet, value, 1.0, math.inf, "[1, inf), where every perplexity lies")
    if value == "entropy":
        if vocab is not None and vocab.firm and float(vocab.value) >= 2:
            top = math.log2(float(vocab.value))
            return DefinedBound(facet, value, 0.0, top, f"[0, log2(vocab_size)] = [0, {top:.4g}] (vocab_size {_shown(float(vocab.value))} "
                                f"at {vocab.where})")
        return DefinedBound(facet, value, 0.0, math.inf, "[0, inf), where every entropy lies")
    return None


class KlMean(Probe):
    """estimator=k1 or negative-k1: the mean of the logged values against zero.

    k1 (the log-ratio of the sampling policy's probability to the other's) has the KL, never
    negative, as its mean; negative-k1 has minus the KL. Proves: a mean more than 4 standard
    errors below zero (k1) or above it (negative-k1), over at least 30 values, rules the
    estimator out. Cannot prove which it is when the mean is near zero (policies close
    together), and treats the logged values as independent: the verdict is statistical."""

    facet, values = "estimator", ("k1", "negative-k1")
    LEAST = 30
    ERRORS = 4.0

    def __init__(self) -> None:
        super().__init__()
        self.total = self.squares = 0.0
        self.n = 0

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if not math.isfinite(value):
            self.skipped += 1
            return
        self.n += 1
        self.total += value
        self.squares += value * value

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, KlMean)
        self.n += other.n
        self.total += other.total
        self.squares += other.squares

    def outcome(self) -> Outcome:
        if self.n < self.LEAST:
            return Outcome(undetermined=f"{self.n} finite values; the mean's sign needs at least {self.LEAST}")
        mean = self.total / self.n
        spread = math.sqrt(max(self.squares / self.n - mean * mean, 0.0) / (self.n - 1))
        shown = f"the mean of its {self.n} values is {mean:.4g} (standard error {spread:.2g})"
        if mean + self.ERRORS * spread < 0:
            return Outcome({"k1": f"{shown}: below zero, where no KL estimate's mean lies"})
        if mean - self.ERRORS * spread > 0:
            return Outcome({"negative-k1": f"{shown}: above zero, where minus a KL never lies"})
        return Outcome(undetermined=f"{shown}: not clearly away from zero")


class RunningPeak(Probe):
    """reduction=max over the run (a statement that says "since the start", "so far", ...: the
    `running` words of rules/live.yaml): a running peak never decreases.

    Each file and rank is a segment, and a step that goes back (a restart) starts a new one.
    Proves: a value below the one before it, in one segment, is no running peak. Cannot
    disprove a maximum within each step ("peak memory during the step"), which may decrease."""

    facet, values = "reduction", ("max",)

    def __init__(self) -> None:
        super().__init__()
        self.last: dict[tuple[str, str], tuple[int, float]] = {}
        self.drops = 0
        self.first: Seen | None = None

    @property
    def decided(self) -> bool:
        return self.drops >= LIMIT

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if value != value:
            self.skipped += 1
            return
        segment = (source.path, rank)
        before = self.last.get(segment)
        if before is not None and step > before[0] and value < before[1] - TINY * max(1.0, abs(before[1])):
            self.drops += 1
            self.first = earliest(self.first, Seen(source.path, step, value, rank))
        self.last[segment] = (step, value)  # after a step that goes back (a restart), a new segment starts here

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, RunningPeak)
        self.drops += other.drops
        self.first = earliest(self.first, other.first)

    def outcome(self) -> Outcome:
        if self.drops:
            at_least = "at least " if self.decided else ""
            return Outcome({"max": f"{at_least}{self.drops} values fall below the value before them, which no running peak does"},
                           first=self.first)
        return Outcome(consistent=f"none of its {self.count} values falls below the one before it")


class StepSketch:
    """Values at a deterministic sample of steps, the same sample in every shard: a step is kept
    while its hash is below a threshold that halves whenever more than `CAPACITY` steps are kept.
    Two shards (two ranks' files) keep the same steps, so their values can be compared; merging
    takes the lower threshold. Memory is bounded by CAPACITY whatever the run's length."""

    CAPACITY = 4096
    FULL = 1 << 61

    def __init__(self) -> None:
        self.threshold = self.FULL
        self.values: dict[int, dict[str, float]] = {}  # step -> rank -> value

    @staticmethod
    def _hash(step: int) -> int:
        return (step * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % (1 << 61)

    def add(self, rank: str, step: int, value: float) -> None:
        if self._hash(step) >= self.threshold:
            return
        self.values.setdefault(step, {})[rank] = value
        while len(self.values) > self.CAPACITY:
            self.threshold //= 2
            self.values = {s: v for s, v in self.values.items() if self._hash(s) < self.threshold}

    def merge(self, other: StepSketch) -> None:
        self.threshold = min(self.threshold, other.threshold)
        for step, ranks in other.values.items():
            self.values.setdefault(step, {}).update(ranks)
        self.values = {s: v for s, v in self.values.items() if self._hash(s) < self.threshold}


class RanksAgree(Probe):
    """scope=global: every rank logs the same value at the same step (within 1e-6, relative).

    Needs the values of two ranks or more (rank<N> folders, or a rank field). Compares them at a
    deterministic sample of steps (StepSketch). Proves: two ranks' different values at one step
    are no global value. Cannot prove a value is global (ranks may agree by chance, or all see
    the same data), nor anything about per-rank."""

    facet, values = "scope", ("global",)

    def __init__(self) -> None:
        super().__init__()
        self.sketch = StepSketch()

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if value != value:
            self.skipped += 1
        elif rank:
            self.sketch.add(rank, step, value)

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, RanksAgree)
        self.sketch.merge(other.sketch)

    def outcome(self) -> Outcome:
        shared = {s: r for s, r in self.sketch.values.items() if len(r) > 1}
        if not shared:
            return Outcome(undetermined="the run holds one rank's values, or no step that two ranks both logged")
        differ = sorted(s for s, r in shared.items() if max(r.values()) - min(r.values()) > 1e-6 * max(1e-12, *map(abs, r.values())))
        if differ:
            ranks = shared[differ[0]]
            shown = ", ".join(f"rank {k}: {_shown(v)}" for k, v in sorted(ranks.items())[:4])
            return Outcome({"global": f"ranks log different values at {len(differ)} of the {len(shared)} steps compared "
                            f"(step {differ[0]}: {shown})"})
        return Outcome(consistent=f"ranks agree at all {len(shared)} steps compared")


class UnitExact(Probe):
    """unit=GB/GiB (MB/MiB): which divisor made the value, where values keep a double's
    precision (JSON text, W&B, MLflow; not TensorBoard's float32).

    A count of bytes divided by 2^30 is exact: v * 2^30 is a whole number. Divided by 10^9 it is
    the double nearest b / 10^9: round(v * 10^9) / 10^9 gives v back. A value that only the
    decimal reading explains is GB, one that only the binary does is GiB; a value both or
    neither explain (a whole number of GB, a rounded or averaged value) says nothing. Proves: at
    least 3 values that only one reading explains, and none that only the other does, rule the
    other unit out. Cannot tell anything from rounded values, or from float32 ones."""

    facet = "unit"
    LEAST = 3

    def __init__(self, decimal: str, binary: str) -> None:
        super().__init__()
        self.decimal, self.binary = decimal, binary
        self.power = 9 if decimal == "GB" else 6
        self.values = (decimal, binary)
        self.only_decimal = self.only_binary = self.imprecise = 0
        self.first_decimal: Seen | None = None
        self.first_binary: Seen | None = None

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if not source.float64:
            self.imprecise += 1
            return
        if not math.isfinite(value) or value == 0:
            self.skipped += 1
            return
        scale = 10.0**self.power
        binary = (value * 2.0 ** (self.power * 10 // 3)).is_integer()
        try:
            decimal = round(value * scale) / scale == value
        except OverflowError:
            decimal = False
        if decimal and not binary:
            self.only_decimal += 1
            self.first_decimal = earliest(self.first_decimal, Seen(source.path, step, value, rank))
        elif binary and not decimal:
            self.only_binary += 1
            self.first_binary = earliest(self.first_binary, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, UnitExact)
        self.only_decimal += other.only_decimal
        self.only_binary += other.only_binary
        self.imprecise += other.imprecise
        self.first_decimal = earliest(self.first_decimal, other.first_decimal)
        self.first_binary = earliest(self.first_binary, other.first_binary)

    def outcome(self) -> Outcome:
        bits = 30 if self.power == 9 else 20
        if self.only_decimal >= self.LEAST and not self.only_binary:
            why = (f"{self.only_decimal} of its {self.count} values are a whole number of bytes divided by 10^{self.power}, "
                   f"and none divided by 2^{bits}")
            return Outcome({self.binary: why}, established=(self.decimal, why), first=self.first_decimal)
        if self.only_binary >= self.LEAST and not self.only_decimal:
            why = (f"{self.only_binary} of its {self.count} values are a whole number of bytes divided by 2^{bits}, "
                   f"and none divided by 10^{self.power}")
            return Outcome({self.decimal: why}, established=(self.binary, why), first=self.first_binary)
        if self.imprecise == self.count:
            return Outcome(undetermined="its values are stored as float32, which cannot tell GiB from GB")
        return Outcome(undetermined=f"{self.only_decimal} values read as {self.decimal} only and {self.only_binary} as {self.binary} only "
                       f"(of {self.count}); rounded values read as neither")


_BYTES = {"bytes": 1.0, "GB": 1e9, "GiB": 2.0**30, "MB": 1e6, "MiB": 2.0**20}


class DeviceCapacity(Bound):
    """unit=bytes/GB/GiB/MB/MiB of one device's memory (scope per-device, from a statement or
    the code): no value exceeds the device's memory (`device_memory`, in bytes, a firm fact).

    Proves: a value above the capacity in the claimed unit is not in that unit (a GiB figure
    above 80 GiB on an 80 GB device is GB, or a sum). Cannot prove the unit of a value below it."""

    facet = "unit"

    def __init__(self, unit: str, capacity: Fact) -> None:
        self.unit, self.capacity = unit, capacity
        self.values = (unit,)
        super().__init__(high=float(capacity.value) / _BYTES[unit] * (1 + RELATIVE))

    def disproof(self) -> str:
        size = float(self.capacity.value) / _BYTES[self.unit]
        return f"{self.counted()} exceed the device's memory, {size:.4g} {self.unit} (device_memory at {self.capacity.where})"

    def agreement(self) -> str:
        return f"all {self.count} values fit in the device's memory"


def capacity_units() -> tuple[str, ...]:
    return tuple(_BYTES)


class StepDuration(Probe):
    """unit=seconds of a per-step duration (granularity=per-step stated): a step's time is at
    most the wall-clock time between the record before and this one, which the run's files give
    (TensorBoard's `wall_time`, W&B's `_timestamp`, MLflow's timestamps).

    Proves: when most values (at least 3, and half of those with a wall time) exceed ten times
    that gap plus a second, they are not seconds (milliseconds read as seconds are a thousand
    times too large). Cannot prove seconds, nor disprove milliseconds (no lower bound)."""

    facet, values = "unit", ("seconds",)
    LEAST = 3

    def __init__(self) -> None:
        super().__init__()
        self.timed = self.over = 0
        self.last: dict[tuple[str, str], float] = {}
        self.first: Seen | None = None

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if wall is None or not math.isfinite(value):
            self.skipped += 1
            return
        segment = (source.path, rank)
        before = self.last.get(segment)
        self.last[segment] = wall
        if before is None or wall <= before:
            return
        self.timed += 1
        if value > 10 * (wall - before) + 1.0:
            self.over += 1
            self.first = earliest(self.first, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, StepDuration)
        self.timed += other.timed
        self.over += other.over
        self.first = earliest(self.first, other.first)

    def outcome(self) -> Outcome:
        if not self.timed:
            return Outcome(undetermined="the run records no wall-clock time between its values")
        if self.over >= self.LEAST and 2 * self.over >= self.timed:
            return Outcome({"seconds": f"{self.over} of its {self.timed} timed values exceed ten times the wall-clock time since "
                            "the record before"}, first=self.first)
        return Outcome(consistent=f"{self.timed - self.over} of {self.timed} timed values fit in the wall-clock time between records")


def schedule(kind: str, step: float, warmup: float, total: float) -> float | None:
    """The multiplier of the base rate at scheduler step `step`, as transformers'
    optimization.py (4.38-4.57) defines its schedules; None for a kind it does not know."""
    if kind == "constant":
        return 1.0
    if step < warmup:
        return step / max(1.0, warmup)
    if kind == "constant_with_warmup":
        return 1.0
    if kind == "linear":
        return max(0.0, (total - step) / max(1.0, total - warmup))
    if kind == "cosine":
        progress = (step - warmup) / max(1.0, total - warmup)
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    return None


class Timing(Probe):
    """timing=current-step / next-step of a learning rate, against the schedule the run's facts
    give (`lr_scheduler` linear, cosine, constant_with_warmup or constant; `learning_rate`;
    `warmup_steps` or `warmup_ratio`; `total_steps`), on a run whose step counts the updates
    done (a trainer state): the value logged at step s is the rate of the update it reports if
    it equals the schedule at s-1, and the next update's if it equals it at s.

    Proves: at least 3 informative values (where the two differ) that all match one offset rule
    the other out. Abstains when any informative value matches neither (steps skipped, and the
    run does not say how many; or facts that are not the run's). Cannot tell in a constant
    phase, nor on a run whose step numbering is not known."""

    facet, values = "timing", ("current-step", "next-step")
    LEAST = 3
    CLOSE = 1e-5

    def __init__(self, kind: str, rate: float, warmup: float, total: float, cited: str) -> None:
        super().__init__()
        self.kind, self.rate, self.warmup, self.total, self.cited = kind, rate, warmup, total, cited
        self.current = self.next = self.neither = self.unnumbered = 0
        self.first_neither: Seen | None = None

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if not source.updates:
            self.unnumbered += 1
            return
        if not math.isfinite(value) or step < 1:
            self.skipped += 1
            return
        before, at = schedule(self.kind, step - 1, self.warmup, self.total), schedule(self.kind, step, self.warmup, self.total)
        if before is None or at is None:
            self.skipped += 1
            return
        before, at = before * self.rate, at * self.rate
        if abs(before - at) <= self.CLOSE * max(abs(before), abs(at), 1e-30):
            return
        near_before = abs(value - before) <= self.CLOSE * max(abs(before), 1e-30)
        near_at = abs(value - at) <= self.CLOSE * max(abs(at), 1e-30)
        if near_before and not near_at:
            self.current += 1
        elif near_at and not near_before:
            self.next += 1
        else:
            self.neither += 1
            self.first_neither = earliest(self.first_neither, Seen(source.path, step, value, rank))

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, Timing)
        self.current += other.current
        self.next += other.next
        self.neither += other.neither
        self.unnumbered += other.unnumbered
        self.first_neither = earliest(self.first_neither, other.first_neither)

    def outcome(self) -> Outcome:
        if self.unnumbered == self.count:
            return Outcome(undetermined="the run's steps are not known to count updates done (only a trainer state's are)")
        informative = self.current + self.next + self.neither
        if self.neither:
            return Outcome(undetermined=f"{self.neither} of {informative} informative values match neither the schedule at their step "
                           f"nor one step before ({self.cited}); steps may have been skipped", first=self.first_neither)
        if informative < self.LEAST:
            return Outcome(undetermined=f"{informative} values fall where the schedule changes; at least {self.LEAST} are needed")
        if self.next and not self.current:
            why = f"all {self.next} informative values equal the schedule one step ahead ({self.cited})"
            return Outcome({"current-step": why}, established=("next-step", why))
        why = f"all {self.current} informative values equal the schedule at the update they report ({self.cited})"
        return Outcome({"next-step": why}, established=("current-step", why))


class Series(Probe):
    """quantity=perplexity and quantity=nll: a metric's values at a deterministic sample of steps
    (StepSketch), so that a perplexity can be paired with a loss (`exp_pairs`). Alone it
    decides nothing."""

    facet, values = "quantity", ("perplexity", "nll")

    def __init__(self) -> None:
        super().__init__()
        self.sketch = StepSketch()

    def add(self, source: Source, rank: str, step: int, value: float, wall: float | None) -> None:
        self.count += 1
        if math.isfinite(value):
            self.sketch.add(rank, step, value)

    def merge(self, other: Probe) -> None:
        super().merge(other)
        assert isinstance(other, Series)
        self.sketch.merge(other.sketch)

    def outcome(self) -> Outcome:
        return Outcome()


def exp_pairs(perplexity: Series, losses: dict[str, Series]) -> list[str]:
    """perplexity = exp(loss) at the same step: the losses whose exponential the perplexity
    equals (0.01% relative, what a value printed to seven digits keeps) at every step, two at
    least, both logged. Proves which loss a perplexity is of; a perplexity that equals none
    disproves nothing (it may be of a loss the run does not log)."""
    found = []
    for name, loss in sorted(losses.items()):
        shared = [(ranks, loss.sketch.values[step]) for step, ranks in perplexity.sketch.values.items() if step in loss.sketch.values]
        pairs = [(ppl, loss_ranks[rank]) for ranks, loss_ranks in shared for rank, ppl in ranks.items() if rank in loss_ranks]
        if len(pairs) >= 2 and all(abs(ppl - math.exp(min(value, 700.0))) <= 1e-4 * abs(ppl) for ppl, value in pairs):
            found.append(f"equals exp({name}) at all {len(pairs)} steps both logged")
    return found
