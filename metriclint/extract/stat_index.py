"""Which files are unchanged since the last run, told by their status (size, modification and
change times, inode) instead of their bytes, as git's index and ruff's cache tell it: a
warm run no longer reads and hashes every source to name its cache entry.

Per project, the cache folder keeps the last run's status and entry name for each file
(`stats/<project>.json`). A file whose status is the one recorded gets the recorded name;
any other is read and hashed as before. The names depend on the run's salt, so an index
made under another salt is not used at all.

An edit that keeps the size and puts the old modification time back (`os.utime`, `touch -d`)
still moves the change time, which only the clock sets. What no status can show is an edit
within the same tick of the file system's clock as the status taken before reading: git
calls such entries racy. Here, a file whose modification or change time is not older than
the start of the run that recorded it (the time stamp of a file made then, so the same
clock) is not recorded, and is read again next time; git's rule (not older than the index's
own write time) lets through an edit made after the status was taken and before the index
was written, in the same tick.

The folder may come from elsewhere: the index is sealed with this machine's key (trust.py),
and is plain JSON of checked types; one not sealed with the key, or not of its shape, counts
as empty. An entry it names is checked again on its own (cache.py).
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path

from metriclint.base import files, signals
from metriclint.base.files import read_regular
from metriclint.extract import prune, trust

Status = tuple[int, int, int, int]  # size, modification time (ns), inode, change time (ns)
_ENTRY = re.compile(r"[0-9a-f]{64}")
VERSION = 1


class StatIndex:
    """The last run's status and entry name of each file of a project (by its shown path),
    and this run's, written by `close`."""

    def __init__(self, directory: Path, project: Path, run_salt: bytes, limit: int) -> None:
        self.path = directory / "stats" / f"{prune.project_name(project)}.json"
        self.salt = run_salt.hex()
        self.known = _read(self.path, self.salt, limit)
        self.noted: dict[str, tuple[Status, str]] = {}
        self.started = fs_clock(self.path.parent) if _made(directory, self.path.parent) else None  # before any status is taken

    def status(self, path: Path, limit: int) -> Status | None:
        """The file's status now (where a link points), or None when no entry is named by it:
        not a regular file, or larger than `limit` (read_regular refuses it)."""
        try:
            found = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(found.st_mode) or found.st_size > limit:
            return None
        return found.st_size, found.st_mtime_ns, found.st_ino, found.st_ctime_ns

    def entry(self, shown: str, status: Status | None) -> str | None:
        """The entry the last run named for this file, if its status is still the one recorded."""
        recorded = self.known.get(shown)
        return recorded[1] if status is not None and recorded is not None and recorded[0] == status else None

    def note(self, shown: str, status: Status | None, entry: str) -> None:
        """This run named `entry` for the file, whose status was `status` before it was read."""
        if status is not None:
            self.noted[shown] = (status, entry)

    def close(self) -> None:
        """Write this run's statuses, less the racy ones; nothing when they are what was read.
        Best effort: an index that cannot be written costs the next run reading its files."""
        if self.started is None:
            return
        kept = {shown: recorded for shown, recorded in self.noted.items() if max(recorded[0][1], recorded[0][3]) < self.started}
        if kept == self.known:
            return
        statuses = {shown: [*status, entry] for shown, (status, entry) in kept.items()}
        # ASCII: a name that is not UTF-8 is written with its surrogates escaped, and comes back.
        data = json.dumps({"version": VERSION, "salt": self.salt, "files": statuses}, separators=(",", ":"))
        secret = trust.key()
        if secret is None:
            return
        try:
            files.write_new(self.path, trust.seal(secret, "stats", self.path.name, data.encode("ascii")))
        except OSError as error:
            prune.unwritable(self.path.parent.parent, error)


def _made(directory: Path, folder: Path) -> bool:
    """Whether the index's `folder` in the cache folder `directory` is there or could be made."""
    try:
        if not prune.ready(directory):  # tagged and git-ignored, as the entries' first write makes it
            return False
        folder.mkdir(exist_ok=True)
    except OSError:
        return False
    return True


def fs_clock(folder: Path) -> int | None:
    """The file system's time now, as it stamps files: the modification time of a file made
    in `folder` (then removed). None when none can be made: then nothing is recorded."""
    try:
        with signals.held():  # made and removed before a signal can end the run (files.write_new)
            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                return os.fstat(handle).st_mtime_ns
            finally:
                os.close(handle)
                os.unlink(temporary)
    except OSError:
        return None


def _read(path: Path, salt: str, limit: int) -> dict[str, tuple[Status, str]]:
    """The index at `path` if it was sealed with this machine's key (trust.py), made under
    `salt` and is of its shape, else nothing."""
    secret = trust.key()
    try:
        data = trust.unseal(secret, "stats", path.name, read_regular(path, limit)) if secret is not None else None
        value = json.loads(data) if data is not None else None
    except (OSError, ValueError, RecursionError):  # ValueError: not JSON, or not UTF-8
        return {}
    if not isinstance(value, dict) or value.get("version") != VERSION or value.get("salt") != salt:
        return {}
    files = value.get("files")
    if not isinstance(files, dict):
        return {}
    known: dict[str, tuple[Status, str]] = {}
    for shown, recorded in files.items():
        if not (isinstance(recorded, list) and len(recorded) == 5 and all(type(n) is int for n in recorded[:4])):
            return {}
        entry = recorded[4]
        if not (isinstance(entry, str) and _ENTRY.fullmatch(entry)):
            return {}
        known[shown] = ((recorded[0], recorded[1], recorded[2], recorded[3]), entry)
    return known
