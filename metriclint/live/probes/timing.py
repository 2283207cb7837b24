"""The probes of time: a step's duration against the wall clock between records, and a
learning rate against the schedule the run's facts give (which step it was read at)."""

from __future__ import annotations

import math

from metriclint.live.points import RunSource
from metriclint.live.probes.probe import Outcome, Probe, Seen, earliest


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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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
            return Outcome(
                {"seconds": f"{self.over} of its {self.timed} timed values exceed ten times the wall-clock time since the record before"},
                first=self.first,
            )
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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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
            return Outcome(
                undetermined=f"{self.neither} of {informative} informative values match neither the schedule at their step "
                f"nor one step before ({self.cited}); steps may have been skipped",
                first=self.first_neither,
            )
        if informative < self.LEAST:
            return Outcome(undetermined=f"{informative} values fall where the schedule changes; at least {self.LEAST} are needed")
        if self.next and not self.current:
            why = f"all {self.next} informative values equal the schedule one step ahead ({self.cited})"
            return Outcome({"current-step": why}, established=("next-step", why))
        why = f"all {self.current} informative values equal the schedule at the update they report ({self.cited})"
        return Outcome({"next-step": why}, established=("current-step", why))
