"""Protocol Buffers' wire format, read field by field: enough to take the scalars out of a
TensorBoard event or a W&B record without generated classes or the protobuf package.

The format is documented at protobuf.dev/programming-guides/encoding. Every length and varint
is checked against the bytes there are, so a corrupt message raises `WireError` instead of
reading past its end or looping.
"""

from __future__ import annotations

import struct
from typing import Iterator

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_MAX_VARINT = 10  # bytes of the longest 64-bit varint


class WireError(ValueError):
    pass


def varint(data: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and the offset after it."""
    result = shift = 0
    for index in range(at, min(at + _MAX_VARINT, len(data))):
        byte = data[index]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, index + 1
        shift += 7
    raise WireError("a varint runs past its message" if at + _MAX_VARINT > len(data) else "a varint is longer than ten bytes")


def fields(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """Each field of a message: (number, wire type, value, payload): the value is the int of a
    varint or the raw bits of a fixed-width field, the payload the bytes of a length-delimited
    one (the other is 0 or empty)."""
    at, end = 0, len(data)
    while at < end:
        tag, at = varint(data, at)
        number, kind = tag >> 3, tag & 7
        if kind == VARINT:
            value, at = varint(data, at)
            yield number, kind, value, b""
        elif kind == FIXED64:
            if at + 8 > end:
                raise WireError("a 64-bit field runs past its message")
            yield number, kind, int.from_bytes(data[at : at + 8], "little"), b""
            at += 8
        elif kind == FIXED32:
            if at + 4 > end:
                raise WireError("a 32-bit field runs past its message")
            yield number, kind, int.from_bytes(data[at : at + 4], "little"), b""
            at += 4
        elif kind == BYTES:
            length, at = varint(data, at)
            if length > end - at:
                raise WireError(f"a field says it holds {length} bytes; its message has {end - at} left")
            yield number, kind, 0, data[at : at + length]
            at += length
        else:
            raise WireError(f"unknown wire type {kind} (field {number})")


def as_double(bits: int) -> float:
    return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


def as_float(bits: int) -> float:
    return float(struct.unpack("<f", bits.to_bytes(4, "little"))[0])


def signed(value: int) -> int:
    """A varint read as int64 (two's complement), as `int64` fields are written."""
    return value - (1 << 64) if value >= 1 << 63 else value
