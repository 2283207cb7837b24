"""Which cache files this machine (or this CI secret) wrote: each carries a keyed digest.

A cache folder is only a folder: restored from a shared CI cache, copied from another machine or
edited by hand, it may hold entries that read as a true extraction and are not, which could hide
a finding or invent one. So every file the cache relies on (an entry, what the last run kept,
the files' statuses) starts with an HMAC-SHA256 of its kind, its name and its bytes, under a
key kept outside the cache folder: `METRICLINT_CACHE_KEY` when set (a CI system's secret, so a
cache restored in a job holding the same secret stays warm), else a random key made on first
use in the user's configuration folder (`$XDG_CONFIG_HOME/metriclint/cache-key`, readable by its
owner only). A file without a valid digest is not used: its file is read again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sys
import warnings
from functools import lru_cache
from pathlib import Path

from metriclint.base.files import read_regular

ENVIRONMENT = "METRICLINT_CACHE_KEY"
_HEADER = re.compile(rb"[0-9a-f]{64}\n")


class Dropped(UserWarning):
    """Cache files that were not sealed with this key, or did not read as what they claim to
    be: not used, and what they stood for worked out again. The command line prints one line
    for a run (cli/project.py)."""

    def __init__(self, count: int = 1) -> None:
        super().__init__(f"{count} cache file(s) not written with this machine's cache key, or damaged: not used")
        self.count = count


def dropped(count: int = 1) -> None:
    if count:
        warnings.warn(Dropped(count), stacklevel=2)


def key() -> bytes | None:
    """The key cache files are sealed with, or None when there is none to be had (no home
    folder, a read-only one): then nothing is read from the cache nor written to it."""
    return _key(os.environ.get(ENVIRONMENT) or None, str(key_file()))


def key_file() -> Path:
    """Where the machine's key is kept: the user's configuration folder, as each system has it."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "metriclint" / "cache-key"


@lru_cache(maxsize=8)
def _key(given: str | None, file: str) -> bytes | None:
    if given is not None:
        return hashlib.sha256(b"metriclint cache key\0" + given.encode("utf-8", "surrogateescape")).digest()
    try:
        return _read_or_make(Path(file))
    except (OSError, ValueError, RuntimeError):  # RuntimeError: Path.home() without a home
        return None


def _read_or_make(file: Path) -> bytes:
    """The key in `file`, made first if missing: a new file is linked into place whole, so two
    runs starting together agree on one key."""
    try:
        return bytes.fromhex(read_regular(file, 1024).decode("ascii").strip())
    except FileNotFoundError:
        pass
    file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    made = file.with_name(f".{file.name}.{secrets.token_hex(8)}")
    descriptor = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(secrets.token_hex(32) + "\n")
        try:
            os.link(made, file)
        except FileExistsError:
            pass  # another run made it first: its key is the one
    finally:
        made.unlink(missing_ok=True)
    return bytes.fromhex(read_regular(file, 1024).decode("ascii").strip())


def seal(secret: bytes, kind: str, name: str, data: bytes) -> bytes:
    """`data` as a cache file holds it: its digest on the first line."""
    return _digest(secret, kind, name, data) + b"\n" + data


def unseal(secret: bytes, kind: str, name: str, sealed: bytes) -> bytes | None:
    """The bytes a cache file holds if it was sealed with `secret` as this `kind` and `name`,
    else None. A file with a digest that does not match is counted as dropped; one with none
    was written by an earlier version, before files were sealed."""
    if not _HEADER.match(sealed):
        return None
    data = sealed[65:]
    if hmac.compare_digest(sealed[:64], _digest(secret, kind, name, data)):
        return data
    dropped()
    return None


def _digest(secret: bytes, kind: str, name: str, data: bytes) -> bytes:
    digest = hmac.new(secret, f"{kind}\0{name}\0".encode("utf-8", "surrogateescape"), hashlib.sha256)
    digest.update(data)
    return digest.hexdigest().encode("ascii")
