"""The probes that compare values step by step: a deterministic sample of steps shared by
every shard (`StepSketch`), the ranks' values at one step, a perplexity against a loss."""

from __future__ import annotations

import math

from metriclint.live.points import RunSource
from metriclint.live.probes.probe import Outcome, Probe, shown_value


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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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
            shown = ", ".join(f"rank {k}: {shown_value(v)}" for k, v in sorted(ranks.items())[:4])
            return Outcome(
                {"global": f"ranks log different values at {len(differ)} of the {len(shared)} steps compared (step {differ[0]}: {shown})"}
            )
        return Outcome(consistent=f"ranks agree at all {len(shared)} steps compared")


class Series(Probe):
    """quantity=perplexity and quantity=nll: a metric's values at a deterministic sample of steps
    (StepSketch), so that a perplexity can be paired with a loss (`exp_pairs`). Alone it
    decides nothing."""

    facet, values = "quantity", ("perplexity", "nll")

    def __init__(self) -> None:
        super().__init__()
        self.sketch = StepSketch()

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
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
