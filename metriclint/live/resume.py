"""Event files read on from where the last live check stopped.

A TensorBoard event file only grows while its run goes on. For each one, the last check leaves
in the cache (`<cache>/live/`, one JSON file per event file) the offset after the last whole
record it read, a digest of the bytes just before it, the keys the file logged and the state of
its probes, with a signature of what made them (the statements and the facts). The next check
with the same signature, on a file whose bytes before that offset are the same, restores the
probes and reads only the records written since; anything else is read from the start.

The state is plain JSON: each probe is written as its class name, among the few this module
knows, and its fields, and rebuilt only as one of those classes, never by unpickling.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from metriclint import __version__
from metriclint.base import files
from metriclint.live import probes as p
from metriclint.live.points import Fact
from metriclint.live.statements import StatedValue
from metriclint.model import Span

TAIL = 64  # bytes before the offset whose digest must match
_CLASSES: dict[str, Any] = {
    cls.__name__: cls
    for cls in (
        p.ClipBound,
        p.DefinedBound,
        p.KlMean,
        p.RunningPeak,
        p.RanksAgree,
        p.UnitExact,
        p.DeviceCapacity,
        p.StepDuration,
        p.Timing,
        p.Series,
        p.StepSketch,
        p.Seen,
        Fact,
        Span,
    )
}


@dataclasses.dataclass
class EventFileMark:
    """What the last check left of one event file."""

    offset: int
    keys: list[str]
    probes: dict[str, list[p.Probe]]


class Store:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _file(self, shown: str) -> Path:
        return self.folder / (hashlib.sha256(os.path.abspath(shown).encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json")

    def offsets(self, shown_paths: Iterable[str] = ()) -> dict[str, int]:
        """The offset each kept event file can be read on from, if its bytes before it are the same."""
        found = {}
        for entry in self.folder.glob("*.json") if self.folder.is_dir() else ():
            try:
                saved = json.loads(entry.read_bytes())
                shown, offset, tail = saved["path"], saved["offset"], saved["tail"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if isinstance(shown, str) and isinstance(offset, int) and _tail(shown, offset) == tail:
                found[shown] = offset
        return found

    def load(self, shown: str, signature: str, offset: int) -> EventFileMark | None:
        try:
            saved = json.loads(self._file(shown).read_bytes())
            if saved.get("signature") != signature or saved.get("offset") != offset or saved.get("path") != shown:
                return None
            probes = {metric: [_decoded(item) for item in items] for metric, items in saved["probes"].items()}
            keys = [key for key in saved["keys"] if isinstance(key, str)]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        if not all(isinstance(probe, p.Probe) for found in probes.values() for probe in found):
            return None
        return EventFileMark(offset, keys, probes)

    def save(self, shown: str, signature: str, offset: int, keys: Iterable[str], probes: dict[str, list[p.Probe]]) -> None:
        document = {
            "path": shown,
            "offset": offset,
            "tail": _tail(shown, offset),
            "signature": signature,
            "keys": sorted(set(keys)),
            "probes": {metric: [_encoded(probe) for probe in found] for metric, found in probes.items()},
        }
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            files.replace(self._file(shown), json.dumps(document).encode("utf-8"))
        except OSError:
            return  # a cache that cannot be written costs the next check a full read, nothing else


def signature(statements: list[StatedValue], facts: Iterable[Fact], code: Iterable[object]) -> str:
    """What the probes of a run were made from: a kept state made from anything else is not used."""
    made = (
        __version__,
        sorted(repr(dataclasses.astuple(s)) for s in statements),
        sorted(repr((f.name, f.value, f.firm, f.span)) for f in facts),
        sorted(repr(c) for c in code),
    )
    return hashlib.sha256(repr(made).encode("utf-8", "surrogateescape")).hexdigest()


def _tail(shown: str, offset: int) -> str | None:
    try:
        with open(shown, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < offset:
                return None
            handle.seek(max(0, offset - TAIL))
            return hashlib.sha256(handle.read(min(TAIL, offset))).hexdigest()
    except OSError:
        return None


def _encoded(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_encoded(v) for v in value]}
    if isinstance(value, list):
        return [_encoded(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[_encoded(k), _encoded(v)] for k, v in value.items()]}
    name = type(value).__name__
    if _CLASSES.get(name) is not type(value):
        raise TypeError(f"cannot keep a {name}")
    state = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)} if dataclasses.is_dataclass(value) else vars(value)
    return {"object": name, "fields": {k: _encoded(v) for k, v in state.items()}}


def _decoded(value: Any) -> Any:
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "tuple" in value:
        return tuple(_decoded(v) for v in value["tuple"])
    if "dict" in value:
        return {_decoded(k): _decoded(v) for k, v in value["dict"]}
    cls = _CLASSES[value["object"]]
    fields = {k: _decoded(v) for k, v in value["fields"].items()}
    if dataclasses.is_dataclass(cls) and isinstance(cls, type):
        return cls(**fields)
    made = cls.__new__(cls)
    for key, field_value in fields.items():
        setattr(made, key, field_value)
    return made
