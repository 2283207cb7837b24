"""The probes of what a metric's values add up to over the run: the mean of a KL estimator
against zero, and a running peak that never decreases."""

from __future__ import annotations

import math

from metriclint.live.points import RunSource
from metriclint.live.probes.probe import LIMIT, TINY, Outcome, Probe, Seen, earliest


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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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
            return Outcome(
                {"max": f"{at_least}{self.drops} values fall below the value before them, which no running peak does"}, first=self.first
            )
        return Outcome(consistent=f"none of its {self.count} values falls below the one before it")
