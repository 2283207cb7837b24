"""Every file metriclint opens goes through here: reads that cannot block or run away, and
writes the way an editor's save should, all at once or not at all.

A linter reads what strangers commit. A `.gitignore` that is a link to `/dev/zero`, a FIFO
named like a config file or a 3 GB generated module must cost one message, never a hang or
the machine's memory; so a read opens without blocking, takes only regular files, and stops
at a size limit.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from metriclint.base import signals

MAX_BYTES = 16 * 2**20  # the default size limit (`max-file-size`): 16 MiB, far above any hand-written source


def read_regular(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Opened without blocking and checked
    after opening, so a FIFO or device that took a file's name (or its place, during the run)
    cannot hang us; read to one byte past the limit, so a file that grows, or one whose size
    the file system does not tell (/proc), is refused too. Raises OSError, with a `strerror`
    that says which of these it was."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if status.st_size > limit:
            raise too_large(status.st_size, limit)
        data = file.read(limit + 1)
    if len(data) > limit:
        raise too_large(len(data), limit)
    return data


def read_text(path: Path, limit: int = MAX_BYTES) -> str:
    """A regular file's text, as UTF-8. Raises OSError (see `read_regular`) or UnicodeDecodeError."""
    return read_regular(path, limit).decode("utf-8")


def too_large(size: int, limit: int) -> OSError:
    return OSError(errno.EFBIG, f"the file is {size:,} bytes, more than the limit of {limit:,} (max-file-size)")


def replace(path: Path, data: bytes, mode: int | None = None, like: Path | None = None) -> None:
    """Write `data` to a temporary file beside `path`, then rename it over `path`: a crash or a
    full disk leaves the old file whole. The new file gets `mode` (default: the old file's,
    else 0o666 less the umask), and `like`'s owner, group and extended attributes when given.
    Raises OSError, also for a `path` that is a folder."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
    if mode is None:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~umask()
    with signals.held():  # see `write_new`
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".metriclint")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            if like is not None:
                _copy_owner_and_attributes(like, Path(temporary))
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:  # an interrupt too: no temporary copy is left in the user's tree
            Path(temporary).unlink(missing_ok=True)
            raise


def write_new(path: Path, data: bytes) -> None:
    """`data` as the file `path`, whole or not at all, through a `.tmp-` file beside it, with no
    fsync: for the cache, which a crash may cost an entry, never half of one. Raises OSError.

    The signals that end a run wait while the temporary file exists: the exception their
    handler raises could land between two lines anywhere (inside `mkstemp`, after it made the
    file), and an interrupted run left `.tmp-` files in the cache folder (9 runs in 75)."""
    with signals.held():
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise


def rewrite(path: Path, data: bytes) -> None:
    """Write `data` over the existing file `path` (not a link), keeping what it was besides
    its bytes: a file with several hard links is written in place, since a rename would
    split them (not atomic: a crash may leave it half written); any other is replaced
    atomically by a file with its mode, owner, group and extended attributes."""
    info = path.stat()
    if info.st_nlink == 1:
        replace(path, data, stat.S_IMODE(info.st_mode), like=path)
        return
    with open(path, "r+b") as stream:
        stream.write(data)
        stream.truncate()
        stream.flush()
        os.fsync(stream.fileno())


def _copy_owner_and_attributes(source: Path, target: Path) -> None:
    """The owner and group (a user who is not root may keep only its own: a refusal is left
    alone) and the extended attributes (where the system has them) of `source`, onto `target`."""
    info = source.stat()
    try:
        os.chown(target, info.st_uid, info.st_gid)
    except PermissionError:
        pass
    if not hasattr(os, "listxattr"):
        return
    try:
        for name in os.listxattr(source):
            os.setxattr(target, name, os.getxattr(source, name))
    except OSError:
        pass  # a file system without them, or an attribute only root may set


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
