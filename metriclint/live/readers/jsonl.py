"""JSON-lines logs: one JSON object a line, each number in it a point.

The step is the value of the step key (`--step-key`, else the first of `STEP_KEYS` a line has),
else the line's ordinal among the records; the rank that of `--rank-key` (default `rank`); the
wall-clock time that of `_timestamp` or `timestamp` in seconds. Nested objects are flattened with
`/` (`{"train": {"loss": 1}}` is `train/loss`). A line that is not a JSON object is skipped and
counted, so one torn line of a log still being written costs one record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from metriclint.live.points import Corrupt, Point, Wanted, number

STEP_KEYS = ("step", "_step", "global_step", "iteration", "iter", "trainer/global_step", "train/global_step")
WALL_KEYS = ("_timestamp", "timestamp")


class Lines:
    """The points of one JSON-lines file; `skipped` counts the lines that are no JSON object."""

    def __init__(self, path: Path, shown: str, wanted: Wanted, step_key: str | None, rank_key: str, rank: str) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted
        self.step_key, self.rank_key, self.rank = step_key, rank_key, rank
        self.skipped: list[int] = []

    def points(self) -> Iterator[Point]:
        ordinal = 0
        with open(self.path, "rb") as handle:
            for line_number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    self.skipped.append(line_number)
                    continue
                if not isinstance(record, dict):
                    self.skipped.append(line_number)
                    continue
                yield from self.record(flattened(record), ordinal, line_number)
                ordinal += 1

    def record(self, record: dict[str, object], ordinal: int, line: int) -> Iterator[Point]:
        step = self._step(record, ordinal)
        rank = str(record.get(self.rank_key, self.rank))
        wall = next((w for key in WALL_KEYS if (w := number(record.get(key))) is not None), None)
        skip = {self.step_key, self.rank_key, *STEP_KEYS[:2], *WALL_KEYS}
        for key, value in record.items():
            if key in skip:
                continue
            found = number(value)
            if found is not None and self.wanted(key, self.shown, line):
                yield rank, key, step, found, wall

    def _step(self, record: dict[str, object], ordinal: int) -> int:
        for key in (self.step_key,) if self.step_key else STEP_KEYS:
            found = number(record.get(key))
            if found is not None and found == found and abs(found) < 2**63:
                return int(found)
        return ordinal

    def problem(self) -> Corrupt | None:
        if not self.skipped:
            return None
        more = f" (and {len(self.skipped) - 1} more)" if len(self.skipped) > 1 else ""
        return Corrupt(f"line {self.skipped[0]} is not a JSON object; skipped{more}", line=self.skipped[0])


def flattened(record: dict[str, object], prefix: str = "", depth: int = 0) -> dict[str, object]:
    """Nested objects flattened with `/`, as trackers name their keys; ten levels at most."""
    flat: dict[str, object] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and depth < 10:
            flat.update(flattened(value, name + "/", depth + 1))
        else:
            flat[name] = value
    return flat
