"""What the newest run logged for a metric: the editor's hover shows it beside the
explain-metric view.

The runs are found by the folder's `runs` setting (globs relative to the folder); the newest
by modification time is read. Each file's counts are kept between hovers, and an event file
that grew since is read on from where the last read stopped (its offset), so a hover during a
run reads only what was written since the last one.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from metriclint.knowledge.registry import Registry
from metriclint.live.points import Corrupt, Wanted
from metriclint.live.readers.kinds import ReaderOptions, open_run
from metriclint.live.statements import KeyMetrics


@dataclass
class KeyValueStats:
    """One key's values in one file: how many, the last, the smallest and largest."""

    count: int = 0
    step: int = 0
    last: float = math.nan
    low: float = math.inf
    high: float = -math.inf

    def add(self, step: int, value: float) -> None:
        self.count += 1
        self.step, self.last = step, value
        if value == value:
            self.low, self.high = min(self.low, value), max(self.high, value)


@dataclass
class _File:
    size: int
    mtime: int
    offset: int | None  # where an event file's next read starts; None: read whole again
    keys: dict[str, KeyValueStats] = field(default_factory=dict)


_READ: dict[str, _File] = {}  # a file, as shown -> what it held when last read


def newest(root: Path, patterns: tuple[str, ...]) -> Path | None:
    found = [p for pattern in patterns for p in root.glob(pattern) if p.exists()]
    return max(found, key=lambda p: p.stat().st_mtime_ns, default=None)


def logged(run: Path) -> dict[str, dict[str, KeyValueStats]]:
    """Every key the run logs, by file: read again where the file changed, on from the last
    offset where an event file only grew."""
    stale = {shown: f for shown, f in _READ.items() if f.offset is not None}
    opened = open_run(
        str(run), ReaderOptions(Wanted(lambda key: True), offsets={shown: f.offset for shown, f in stale.items() if f.offset})
    )
    found: dict[str, dict[str, KeyValueStats]] = {}
    for stream, reader in opened.streams:
        shown = stream.source.path
        try:
            stat = os.stat(shown)
        except OSError:
            continue
        before = _READ.get(shown)
        offset = getattr(reader, "offset", None)
        if before is not None and before.size == stat.st_size and before.mtime == stat.st_mtime_ns:
            _close(stream.points)
            found[shown] = before.keys
            continue
        grows = before is not None and before.offset is not None and offset == before.offset and stat.st_size > before.size
        keys = before.keys if grows and before is not None else {}
        try:
            for _, key, step, value, _ in stream.points:
                keys.setdefault(key, KeyValueStats()).add(step, value)
        except Corrupt:
            pass
        _READ[shown] = _File(stat.st_size, stat.st_mtime_ns, getattr(reader, "offset", None), keys)
        found[shown] = keys
    return found


def _close(points: object) -> None:
    close = getattr(points, "close", None)
    if callable(close):
        close()


def hover(root: Path, patterns: tuple[str, ...], registry: Registry | None, metric: str) -> list[str]:
    """The hover's lines about `metric` in the newest run, or none."""
    run = newest(root, patterns)
    if run is None:
        return []
    names = KeyMetrics(registry, {metric})
    lines = []
    for path, keys in sorted(logged(run).items()):
        for key, seen in sorted(keys.items()):
            if metric in names.of(key):
                lines.append(
                    f"  {key}: {seen.count} values, last {seen.last!r} at step {seen.step}, from {seen.low!r} to {seen.high!r} ({path})"
                )
    return [f"The last run ({run.name}) logged:", *lines] if lines else [f"The last run ({run.name}) did not log it."]
