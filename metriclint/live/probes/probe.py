"""What every value test is: a `Probe` that reads one metric's points in one run, merges
with itself over another shard and gives an `Outcome`; the `Seen` value it quotes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from metriclint.live.points import RunSource

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
        return f"step {self.step}: {shown_value(self.value)} ({self.path}{rank})"


def earliest(a: Seen | None, b: Seen | None) -> Seen | None:
    """The one logged first by step (then by file and rank): the same whichever shard came first."""
    if a is None or b is None:
        return a or b
    return min(a, b, key=lambda seen: (seen.step, seen.path, seen.rank))


def shown_value(value: float) -> str:
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

    def add(self, source: RunSource, rank: str, step: int, value: float, wall: float | None) -> None:
        raise NotImplementedError

    def merge(self, other: Probe) -> None:
        self.count += other.count
        self.skipped += other.skipped

    def outcome(self) -> Outcome:
        raise NotImplementedError
