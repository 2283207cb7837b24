"""W&B offline run folders (`wandb/offline-run-*/`, `wandb/run-*/`).

The history is in `run-<id>.wandb`: a 7-byte header (`:W&B`, magic 0xBEE1, a version byte),
then LevelDB's log format (32 KiB blocks of records: a CRC-32 of the type byte and data, a
uint16 length, a type FULL/FIRST/MIDDLE/LAST; github.com/google/leveldb doc/log_format.md),
each whole record a `wandb_internal.Record` message. A `history` record (2) holds `HistoryItem`s
(1), each a `key` (1) or `nested_key` path (2) with its value as JSON text (`value_json`, 16) or
a `number` (6, double) or `integer` (5, sint64), and the run's `_step`. Config records (5, and
a run record's config, 17.4) hold `ConfigItem`s (key 1, nested_key 2, value_json 16): facts.
Field numbers as in wandb's wandb_internal.proto (0.31). No wandb package is needed.

A folder written by an older client, or synced, may instead hold `files/wandb-history.jsonl`
(read as JSON lines, step `_step`) and `files/config.yaml` (facts); `wandb-summary.json` gives a
run's last values when there is no history. Values are JSON text written from doubles.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import BinaryIO, Iterator

from metriclint.live.points import Corrupt, Point, Wanted, number
from metriclint.live.readers.jsonl import flattened
from metriclint.live.readers.protowire import BYTES, FIXED64, VARINT, WireError, as_double, fields

MAGIC = b":W&B\xe1\xbe"
_BLOCK, _HEADER = 32768, 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
_SKIP = frozenset({"_step", "_timestamp", "_runtime"})


def is_run_file(path: Path) -> bool:
    return path.suffix == ".wandb"


def records(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Each whole record, with the byte it starts at."""
    start = handle.read(7)
    if len(start) < 7 or start[:6] != MAGIC:
        raise Corrupt("not a W&B run file: its header is not `:W&B`", offset=0)
    at, parts, first = 7, [], 0
    while True:
        room = _BLOCK - at % _BLOCK
        if room < _HEADER:
            handle.read(room)
            at += room
        header = handle.read(_HEADER)
        if len(header) < _HEADER:
            return  # the end, or a record still being written
        crc, length, kind = struct.unpack("<IHB", header)
        if length > _BLOCK - at % _BLOCK - _HEADER:
            raise Corrupt(f"the record at byte {at} says it holds {length} bytes, more than its block", offset=at)
        data = handle.read(length)
        if len(data) < length:
            return
        if zlib.crc32(data, zlib.crc32(bytes([kind]))) != crc:
            raise Corrupt(f"the record at byte {at} has a wrong checksum; the file is not read past it", offset=at)
        if kind in (_FULL, _FIRST):
            parts, first = [data], at
        elif kind in (_MIDDLE, _LAST) and parts:
            parts.append(data)
        elif kind not in (_MIDDLE, _LAST):
            raise Corrupt(f"the record at byte {at} has an unknown type {kind}", offset=at)
        at += _HEADER + length
        if kind in (_FULL, _LAST) and parts:
            yield first, b"".join(parts)
            parts = []


class RunFile:
    def __init__(self, path: Path, shown: str, wanted: Wanted) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted
        self.config: dict[str, object] = {}

    def points(self) -> Iterator[Point]:
        with open(self.path, "rb") as handle:
            for at, data in records(handle):
                try:
                    yield from self._record(data)
                except (WireError, ValueError, RecursionError) as error:
                    raise Corrupt(f"the record at byte {at} does not decode: {error}", offset=at) from None

    def _record(self, data: bytes) -> Iterator[Point]:
        for number_, kind, _, payload in fields(data):
            if kind != BYTES:
                continue
            if number_ == 2:
                yield from self._history(payload)
            elif number_ == 5:
                self._config(payload)
            elif number_ == 17:
                for inner, inner_kind, _, config in fields(payload):
                    if inner == 4 and inner_kind == BYTES:
                        self._config(config)

    def _history(self, data: bytes) -> Iterator[Point]:
        items: dict[str, float] = {}
        step: int | None = None
        for number_, kind, _, payload in fields(data):
            if number_ == 1 and kind == BYTES:
                found = _item(payload)
                if found is not None and found[1] is not None:
                    items[found[0]] = found[1]
            elif number_ == 2 and kind == BYTES:
                step = next((v for n, k, v, _ in fields(payload) if n == 1 and k == VARINT), 0)
        at = int(items["_step"]) if "_step" in items and abs(items["_step"]) < 2**63 else step or 0
        wall = items.get("_timestamp")
        for key, value in items.items():
            if key not in _SKIP and self.wanted(key, self.shown):
                yield "", key, at, value, wall

    def _config(self, data: bytes) -> None:
        for number_, kind, _, payload in fields(data):
            if number_ == 1 and kind == BYTES:
                key, text = _key_and_json(payload)
                if key and text is not None and key != "_wandb":
                    try:
                        self.config[key] = json.loads(text)
                    except ValueError:
                        continue


def _key_and_json(data: bytes) -> tuple[str, str | None]:
    key, nested, text = "", [], None
    for number_, kind, _, payload in fields(data):
        if number_ == 1 and kind == BYTES:
            key = payload.decode("utf-8", "replace")
        elif number_ == 2 and kind == BYTES:
            nested.append(payload.decode("utf-8", "replace"))
        elif number_ == 16 and kind == BYTES:
            text = payload.decode("utf-8", "replace")
    return key or "/".join(nested), text


def _item(data: bytes) -> tuple[str, float | None] | None:
    key, text = _key_and_json(data)
    if not key:
        return None
    for number_, kind, value, _ in fields(data):
        if number_ == 6 and kind == FIXED64:
            return key, as_double(value)
        if number_ == 5 and kind == VARINT:
            return key, float((value >> 1) ^ -(value & 1))  # sint64: zigzag
    if text is None:
        return None
    try:
        return key, number(json.loads(text))
    except (ValueError, RecursionError):
        return key, None


def summary(path: Path) -> dict[str, object]:
    """`wandb-summary.json`: the last value of each key, flattened."""
    try:
        loaded = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    return flattened(loaded) if isinstance(loaded, dict) else {}


def config(path: Path) -> dict[str, object]:
    """The run's config, from the records before its first history record (where W&B writes it)."""
    reader = RunFile(path, "", Wanted(lambda key: False))
    try:
        with open(path, "rb") as handle:
            for _, data in records(handle):
                if any(number_ == 2 for number_, _, _, _ in fields(data)):
                    break
                for _ in reader._record(data):
                    pass
    except (OSError, Corrupt, WireError, ValueError, RecursionError):
        pass
    return reader.config


class WandbSummary:
    """`wandb-summary.json`: each key's last value, at the summary's `_step` (a run whose
    history is not at hand, a synced folder or one committed without its `.wandb` file)."""

    def __init__(self, path: Path, shown: str, wanted: Wanted) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted

    def points(self) -> Iterator[Point]:
        values = summary(self.path)
        at, wall = number(values.get("_step")), number(values.get("_timestamp"))
        step = int(at) if at is not None and abs(at) < 2**63 else 0
        for key, value in values.items():
            found = number(value)
            if found is not None and not key.startswith("_") and self.wanted(key, self.shown):
                yield "", key, step, found, wall
