"""A buffer's bytes against the file's: what the server compares an opened or closed buffer
with, as a run would read them."""

from __future__ import annotations

from pathlib import Path

from metriclint.base import files


def differs(path: Path, data: bytes) -> bool:
    return on_disk(path) != data


def on_disk(path: Path) -> bytes | None:
    """The file's bytes, as a run reads them (a FIFO, a device or a file over the size limit
    is none: reading it would hang or flood the server); None if it cannot be read."""
    try:
        return files.read_regular(path)
    except OSError:
        return None


def encoded(text: str) -> bytes:
    """A buffer's text as bytes. JSON can carry a lone surrogate, which UTF-8 cannot: it is
    kept as its own bytes, and the file then reads as one that is not UTF-8 (ML900)."""
    return text.encode("utf-8", "surrogatepass")
