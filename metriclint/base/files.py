"""Writing files the way an editor's save should: all at once or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`: a crash or a
    full disk leaves the old file whole. The new file gets `mode` (default: the old file's,
    else 0o666 less the umask). Raises OSError."""
    if mode is None:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".metriclint")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
