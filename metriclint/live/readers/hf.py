"""Hugging Face Trainer output: `trainer_state.json`'s `log_history`, streamed (streamjson.py).

A run folder holds the final `trainer_state.json` (`save_state`) and one in each
`checkpoint-N/`; the folder's own, else the newest checkpoint's (largest N), is the latest, and
each holds the history up to its step. Each history entry is a step's logs (`step`, `loss`,
`grad_norm`, `learning_rate`, ...): its `step` is the number of optimizer updates done
(`state.global_step`), so the update an entry reports used the schedule's value at `step - 1`.
Numbers are JSON text written from doubles, so they keep a double's precision. The state's
`max_steps` is a fact (total_steps); the model's `config.json` and model card are read by
facts.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from metriclint.live.points import Corrupt, Point, Wanted
from metriclint.live.readers.jsonl import flattened
from metriclint.live.readers.streamjson import JsonError, array_items, top_level

STATE = "trainer_state.json"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")
_SKIP = frozenset({"step"})


def latest_state(folder: Path) -> Path | None:
    """The run folder's own trainer_state.json, else the newest checkpoint's."""
    own = folder / STATE
    if own.is_file():
        return own
    found = [(int(m.group(1)), p) for p in folder.glob(f"checkpoint-*/{STATE}") if (m := _CHECKPOINT.fullmatch(p.parent.name))]
    return max(found)[1] if found else None


class History:
    def __init__(self, path: Path, shown: str, wanted: Wanted) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted

    def points(self) -> Iterator[Point]:
        with open(self.path, "rb") as handle:
            try:
                for ordinal, entry in enumerate(array_items(handle, "log_history")):
                    if isinstance(entry, dict):
                        yield from self._entry(flattened(entry), ordinal)
            except JsonError as error:
                raise Corrupt(f"not a trainer state: {error}") from None

    def _entry(self, entry: dict[str, object], ordinal: int) -> Iterator[Point]:
        step = entry.get("step")
        at = int(step) if isinstance(step, (int, float)) and not isinstance(step, bool) and abs(step) < 2**63 else ordinal
        for key, value in entry.items():
            if key in _SKIP or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if self.wanted(key, self.shown):
                yield "", key, at, float(value), None


def state_numbers(path: Path) -> dict[str, tuple[object, int]]:
    """The state's own scalars (`max_steps`, `logging_steps`, ...), its history passed over."""
    with open(path, "rb") as handle:
        try:
            return top_level(handle, "log_history")
        except JsonError:
            return {}
