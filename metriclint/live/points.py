"""What a reader gives: streams of points, each from one file of one run, and facts.

A point is a plain tuple `(rank, key, step, value, wall)`: a run of 10^8 points goes through
here, and a tuple costs a fraction of a dataclass. The run, the file and how values were stored
are the stream's, said once in its `RunSource`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from metriclint.model import Span

Point = tuple[str, str, int, float, "float | None"]  # rank, key, step, value, wall-clock seconds or None


@dataclass(frozen=True)
class RunSource:
    """One file of a run, as findings name it."""

    run: str  # the `--run` argument it belongs to, as given
    path: str  # the file, as shown
    float64: bool  # values kept with a double's precision: only then can GiB be told from GB exactly
    updates: bool = False  # a step counts the optimizer updates done so far (Hugging Face's global_step)


@dataclass
class Stream:
    source: RunSource
    points: Iterator[Point]


class Corrupt(Exception):
    """A run file that cannot be read on from here: a bad checksum, a truncated record, a
    length no file can hold. `offset` is the byte (binary files) or `line` the line it is at."""

    def __init__(self, message: str, line: int = 1, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.offset = offset


@dataclass(frozen=True)
class Fact:
    """A value a test needs (max_grad_norm, vocab_size, ...), with where it is written.

    `firm`: the run's own files or `--fact` say it. A fact found only in the project (an
    argument's default, a config file the run may not have used) is presumed: it may explain a
    verdict, never carry a disproof."""

    name: str
    value: float | str
    span: Span
    firm: bool
    quoted: str = ""  # as written there: "max_grad_norm: 1.0"

    @property
    def where(self) -> str:
        return f"{self.span.path}:{self.span.line}" if self.span.line else self.span.path


@dataclass
class Wanted:
    """Which keys the readers keep: asked once per distinct key, the answer kept. Every key
    asked is remembered with where it was first seen, for the coverage rules (ML012, ML013)."""

    keep: Callable[[str], bool]
    seen: dict[str, Span] = field(default_factory=dict)
    _answers: dict[str, bool] = field(default_factory=dict)

    def __call__(self, key: str, path: str, line: int = 1) -> bool:
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self.keep(key)
            self.seen.setdefault(key, Span(path, line, 1, line, 1))
        return answer


def number(value: object) -> float | None:
    """A logged value as a float, or None for what is no number (a string, a list, a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an int too large for a float
        return None
