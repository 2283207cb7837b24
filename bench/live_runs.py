"""Synthetic runs for the live check's benchmark (bench/live.py): event files, Parquet and
JSON-lines logs of any length, written fast and in bounded memory (the TFRecord framing and
the Event message are encoded here, byte for byte as TensorBoard's writers do)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

import google_crc32c


def _masked(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked(header)) + data + struct.pack("<I", _masked(data))


def event(tag: bytes, step: int, value: float, wall: float) -> bytes:
    """An Event (wall_time 1, step 2, summary 5) with one Summary.Value (tag 1, simple_value 2)."""
    summary_value = b"\x0a" + _varint(len(tag)) + tag + b"\x15" + struct.pack("<f", value)
    summary = b"\x0a" + _varint(len(summary_value)) + summary_value
    return b"\x09" + struct.pack("<d", wall) + b"\x10" + _varint(step) + b"\x2a" + _varint(len(summary)) + summary


def event_file(path: Path, points: int, keys: int = 4) -> Path:
    """`points` scalars over `keys` tags (`train/k0`, ...), step by step; `train/k0` is a
    gradient norm that stays below 1.0, the others decay."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tags = [f"train/k{i}".encode() for i in range(keys)]
    with open(path, "wb") as handle:
        version = b"\x09" + struct.pack("<d", 0.0) + b"\x1a" + _varint(13) + b"brain.Event:2"
        handle.write(_record(version))
        chunk = bytearray()
        for index in range(points):
            step, which = divmod(index, keys)
            value = 0.5 + 0.4 * math.sin(step) if which == 0 else 1.0 / (1 + step)
            chunk += _record(event(tags[which], step, value, 1000.0 + step))
            if len(chunk) > 1 << 22:
                handle.write(chunk)
                chunk.clear()
        handle.write(chunk)
    return path


def parquet_file(path: Path, points: int, keys: int = 4) -> Path:
    """The same points as a long Parquet table, written by DuckDB itself."""
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect()
    connection.execute(
        f"COPY (SELECT 'train/k' || (i % {keys}) AS key, i // {keys} AS step, "
        f"CASE WHEN i % {keys} = 0 THEN 0.5 + 0.4 * sin(i // {keys}) ELSE 1.0 / (1 + i // {keys}) END AS value, "
        f"'0' AS rank FROM range({points}) t(i)) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)"
    )
    connection.close()
    return path
