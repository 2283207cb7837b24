"""TensorBoard event files (`events.out.tfevents.*`), read record by record.

The framing is TFRecord's: a little-endian uint64 length, the masked CRC-32C of those eight
bytes, the data, the masked CRC-32C of the data (tensorflow/core/lib/io/record_writer.cc). Each
record is an `Event` message (tensorboard/compat/proto/event.proto): `wall_time` (1, double),
`step` (2, int64) and a `Summary` (5), whose `Value`s (1) carry a `tag` (1) and either a
`simple_value` (2, float: what `add_scalar` writes) or a scalar `TensorProto` (8: what TF2's
summaries write), with its `dtype` (1), `tensor_content` (4) or `float_val`/`double_val`/
`int_val`/`int64_val` (5, 6, 7, 10). Histograms, images and text are skipped.

Values are taken as stored in float32 (what `add_scalar` writes), so the exactness of a unit
is never tested on them. Every point is kept, in file order; TensorBoard's own loader samples a reservoir of them. The
checksums are verified with google-crc32c; a bad checksum, a truncated record or a length the
file cannot hold stops the file there with `Corrupt`, naming the offset. A record cut short at
the very end is what a writer still writing leaves, and ends the file quietly: `offset` is
where the next read resumes (the cache of offsets, offsets.py).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Callable, Iterator

import google_crc32c

from metriclint.live.points import Corrupt, Point, Wanted
from metriclint.live.readers.protowire import BYTES, FIXED32, FIXED64, VARINT, WireError, as_double, as_float, fields, signed, varint

_HEADER = struct.Struct("<QI")
_DOUBLE, _FLOAT, _FOOTER = struct.Struct("<d"), struct.Struct("<f"), struct.Struct("<I")
_UNSEEN, _OTHER = object(), object()
_DT_FLOAT, _DT_DOUBLE, _DT_INT32, _DT_INT64, _DT_HALF = 1, 2, 3, 9, 19
_PACKED = {5: ("<f", 4), 6: ("<d", 8)}  # float_val, double_val
_CONTENT = {_DT_FLOAT: "<f", _DT_DOUBLE: "<d", _DT_INT32: "<i", _DT_INT64: "<q", _DT_HALF: "<e"}


def masked_crc(data: bytes) -> int:
    return _mask(google_crc32c.value(data))


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def is_event_file(path: Path) -> bool:
    return "tfevents" in path.name


CHUNK = 1 << 22  # bytes read at a time: records are parsed from memory, not one read() each


class EventFile:
    """The points of one event file from byte `offset` on; `offset` follows the last whole record read."""

    def __init__(self, path: Path, shown: str, wanted: Wanted, rank: str, offset: int = 0) -> None:
        self.path, self.shown, self.wanted, self.rank = path, shown, wanted, rank
        self.offset = offset
        self._tags: dict[bytes, str | None] = {}  # a tag's bytes -> the key, or None when not wanted
        self._others: set[str] = set()  # the keys of events read field by field

    def points(self) -> Iterator[Point]:
        with open(self.path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(self.offset)
            simple = self._simple
            for data in self._records(handle.read, size):
                try:
                    # The shape `add_scalar` writes (wall_time, step, a summary of one simple
                    # value) is read by position; anything else field by field.
                    found = simple(data) if len(data) > 12 and data[0] == 0x09 and data[9] == 0x10 else _OTHER
                    if found is _OTHER:
                        yield from self._event(data)
                    elif found is not None:
                        yield found  # type: ignore[misc]
                except (WireError, struct.error, IndexError) as error:
                    raise Corrupt(f"the event record at byte {self.offset} does not decode: {error}", offset=self.offset) from None
                self.offset += 16 + len(data)

    def logged(self) -> list[str]:
        """Every key this reading met, wanted or not."""
        return [tag.decode("utf-8", "replace") for tag in self._tags] + sorted(self._others)

    def _records(self, read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
        """Each record's data, checked; the file read a chunk at a time."""
        buffer, at = b"", 0  # at: where the next record starts in buffer
        unpack, crc, footer = _HEADER.unpack_from, google_crc32c.value, _FOOTER.unpack_from
        while True:
            left = len(buffer) - at
            if left < 12 or left < 16 + unpack(buffer, at)[0]:
                more = read(CHUNK)
                if not more:
                    if left >= 12:
                        self._check_length(buffer, at, size)
                    return  # the end, or a record still being written
                buffer = buffer[at:] + more
                at = 0
                continue
            length, checksum = unpack(buffer, at)
            if _mask(crc(buffer[at : at + 8])) != checksum:
                raise Corrupt(
                    f"the record at byte {self.offset} has a wrong length checksum; the file is not read past it", offset=self.offset
                )
            data = buffer[at + 12 : at + 12 + length]
            if _mask(crc(data)) != footer(buffer, at + 12 + length)[0]:
                raise Corrupt(
                    f"the record at byte {self.offset} has a wrong data checksum; the file is not read past it", offset=self.offset
                )
            at += 16 + length
            yield data

    def _check_length(self, buffer: bytes, at: int, size: int) -> None:
        """At the end of the file with a record's header but not its data: a writer still writing,
        unless the length is one no file could hold, or its checksum is wrong."""
        length, checksum = _HEADER.unpack_from(buffer, at)
        if masked_crc(buffer[at : at + 8]) != checksum:
            raise Corrupt(f"the record at byte {self.offset} has a wrong length checksum; the file is not read past it", offset=self.offset)
        if length > size:
            raise Corrupt(f"the record at byte {self.offset} says it holds {length} bytes; the file has {size}", offset=self.offset)

    def _event(self, data: bytes) -> Iterator[Point]:
        """The scalars of one Event, field by field."""
        wall: float | None = None
        step = 0
        summary = None
        for number, kind, value, payload in fields(data):
            if number == 1 and kind == FIXED64:
                wall = as_double(value)
            elif number == 2 and kind == VARINT:
                step = signed(value)
            elif number == 5 and kind == BYTES:
                summary = payload
        if summary is None:
            return
        for number, kind, _, payload in fields(summary):
            if number == 1 and kind == BYTES:
                found = self._scalar(payload)
                if found is not None:
                    self._others.add(found[0])
                if found is not None and self.wanted(found[0], self.shown):
                    yield self.rank, found[0], step, found[1], wall

    def _simple(self, data: bytes) -> Point | object | None:
        """The point of an event of exactly one simple value (None when its key is not wanted),
        else `_OTHER`. Lengths under 128 are one byte, read in place."""
        wall = _DOUBLE.unpack_from(data, 1)[0]
        if data[10] < 0x80:
            step, at = data[10], 11
        else:
            step, at = varint(data, 10)
        end = len(data)
        if at + 4 > end or data[at] != 0x2A or data[at + 1] >= 0x80 or at + 2 + data[at + 1] != end or data[at + 2] != 0x0A:
            return _OTHER
        inner, at = data[at + 3], at + 4
        if inner >= 0x80 or at + inner != end or data[at] != 0x0A or data[at + 1] >= 0x80:
            return _OTHER
        tag_end = at + 2 + data[at + 1]
        if tag_end + 5 != end or data[tag_end] != 0x15:
            return _OTHER
        tag = data[at + 2 : tag_end]
        key = self._tags.get(tag, _UNSEEN)
        if key is _UNSEEN:
            text = tag.decode("utf-8", "replace")
            key = self._tags[tag] = text if self.wanted(text, self.shown) else None
        if key is None:
            return None
        return self.rank, key, signed(step), _FLOAT.unpack_from(data, tag_end + 1)[0], wall

    def _scalar(self, data: bytes) -> tuple[str, float] | None:
        """A summary value's tag and number, or None for a histogram, image, text or malformed one."""
        tag, number = None, None
        for field_number, kind, value, payload in fields(data):
            if field_number == 1 and kind == BYTES:
                tag = payload.decode("utf-8", "replace")
            elif field_number == 2 and kind == FIXED32:
                number = as_float(value)
            elif field_number == 8 and kind == BYTES:
                number = self._tensor(payload)
        return (tag, number) if tag is not None and number is not None else None

    def _tensor(self, data: bytes) -> float | None:
        """The one number a scalar tensor holds, else None."""
        dtype, values = 0, []
        content = b""
        for number, kind, value, payload in fields(data):
            if number == 1 and kind == VARINT:
                dtype = value
            elif number == 2 and kind == BYTES:
                if _elements(payload) != 1:
                    return None
            elif number == 4 and kind == BYTES:
                content = payload
            elif number in _PACKED and kind == BYTES:
                form, width = _PACKED[number]
                values += [v for (v,) in struct.iter_unpack(form, payload[: len(payload) // width * width])]
            elif number in _PACKED and kind in (FIXED32, FIXED64):
                values.append(as_float(value) if kind == FIXED32 else as_double(value))
            elif number in (7, 10) and kind == VARINT:
                values.append(float(signed(value)))
            elif number in (7, 10) and kind == BYTES:
                at = 0
                while at < len(payload):
                    item, at = varint(payload, at)
                    values.append(float(signed(item)))
        if content and dtype in _CONTENT:
            width = struct.calcsize(_CONTENT[dtype])
            if len(content) != width:
                return None
            return float(struct.unpack(_CONTENT[dtype], content)[0])
        return float(values[0]) if len(values) == 1 else None


def _elements(shape: bytes) -> int:
    """How many elements a TensorShapeProto holds: the product of its dims' sizes (2, then 1)."""
    total = 1
    for number, kind, _, dim in fields(shape):
        if number == 2 and kind == BYTES:
            for field_number, field_kind, size, _ in fields(dim):
                if field_number == 1 and field_kind == VARINT:
                    total *= signed(size)
    return total
