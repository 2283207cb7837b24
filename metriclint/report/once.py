"""Each finding printed once across pre-commit's split invocations of the hook.

pre-commit hands a long list of files to a hook in several invocations. Each reads the whole
project, so a finding that touches files of two lists (or the registry, and a file) would be
printed by both. The invocations of one hook run are children of one pre-commit process,
which sets PRE_COMMIT=1: that process is the run's identity. The findings printed in a run
are noted in the project's cache folder, and a later invocation leaves them out. A lock on
the folder makes the invocations analyse one at a time even if the hook is not
`require_serial`, so each after the first finds the cache warm instead of parsing the
project again alongside it.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from metriclint.base.files import read_regular
from metriclint.extract import prune
from metriclint.model import Finding

KEPT = 24 * 3600  # seconds a run's notes are kept: runs end long before


def hook_run(environ: Mapping[str, str] = os.environ) -> str | None:
    """The identity of the pre-commit run this process is one invocation of, or None."""
    if not environ.get("PRE_COMMIT"):
        return None
    parent = os.getppid()
    return f"{parent}-{_started(parent)}"


def _started(pid: int) -> str:
    """When process `pid` started (Linux), so that a later process given the same id is
    another run; elsewhere nothing, and a run is told by its parent's id alone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


@contextmanager
def exclusive(folder: Path) -> Iterator[None]:
    """Held by one invocation at a time (a lock file in the cache folder `folder`, made as the
    cache makes it if missing, git-ignored: the first run in a fresh clone makes it here).
    Without a folder of metriclint's to hold the lock, the invocations run side by side."""
    if not prune.ready(folder):
        yield
        return
    try:
        handle = open(folder / "lock", "a+b")  # noqa: SIM115 - closed below, after the invocation's work
    except OSError as error:  # a read-only or full folder: as without one
        prune.unwritable(folder, error)
        yield
        return
    with handle:
        if sys.platform != "win32":
            import fcntl

            fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def unprinted(findings: tuple[Finding, ...], folder: Path, run: str, project: Path) -> list[Finding]:
    """The findings that no earlier invocation of `run` printed for `project`, noted as
    printed now. Call it while holding `exclusive(folder)`. Without a folder of metriclint's
    to note them in, every finding is printed."""
    if not prune.ready(folder):
        return list(findings)
    name = hashlib.sha256(f"{run}\0{project}".encode("utf-8", "surrogateescape")).hexdigest()[:16]
    notes = folder / f"printed-{name}.txt"
    try:
        seen = set(read_regular(notes).decode("utf-8", errors="replace").splitlines())
    except OSError:
        seen = set()
    new = [f for f in findings if _identity(f) not in seen]
    _forget_old_runs(folder)
    try:
        with open(notes, "a", encoding="utf-8", errors="replace") as handle:
            handle.writelines(_identity(f) + "\n" for f in new)
    except OSError as error:  # the next invocation prints them again
        prune.unwritable(folder, error)
    return new


def _identity(finding: Finding) -> str:
    return hashlib.sha256(f"{finding.span}: {finding.rule} {finding.message}".encode("utf-8", "surrogateescape")).hexdigest()


def _forget_old_runs(folder: Path) -> None:
    now = time.time()
    for notes in folder.glob("printed-*.txt"):
        if not prune.LAYOUT.fullmatch(notes.name):
            continue
        try:
            if now - notes.stat().st_mtime > KEPT:
                notes.unlink()
        except OSError:
            continue
