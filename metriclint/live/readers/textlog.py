"""Plain-text training logs, read back by the project's own message templates (templates.py).

Each line is matched against every template whose anchor it holds; the values of the keyed
slots are points, at the step a step slot on the same line gives (Megatron's `iteration N`),
else at the ordinal of the line among those that gave a value. A line no template matches is
passed over: a log holds much besides metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from metriclint.live.points import Point, Wanted
from metriclint.live.templates import Template, read_line

SUFFIXES = (".log", ".out", ".txt")


class TextLog:
    def __init__(self, path: Path, shown: str, wanted: Wanted, templates: list[Template], rank: str) -> None:
        self.path, self.shown, self.wanted, self.rank = path, shown, wanted, rank
        self.compiled = [(t, t.pattern(), t.anchor) for t in templates]

    def points(self) -> Iterator[Point]:
        ordinal = 0
        with open(self.path, encoding="utf-8", errors="replace") as handle:
            for line_number, line in enumerate(handle, 1):
                found = list(read_line(line, self.compiled))
                if not found:
                    continue
                steps = [value for slot, value in found if slot.step and value == value and abs(value) < 2**63]
                step = int(steps[0]) if steps else ordinal
                ordinal += 1
                for slot, value in found:
                    for key in slot.keys:
                        if self.wanted(key, self.shown, line_number):
                            yield self.rank, key, step, value, None
