"""What the cache keeps after a run: the entries of each project's last few runs, less those
of files no longer present, within a size cap; and `metriclint clean`.

Each project served by a cache folder has a record of its last `RUNS` runs under `runs/`:
per run, the entries it read or wrote and the file each is for. After a run, an entry that
no record names is deleted, and so is one that only older runs name for a file that is gone.
Then, while the entries add up to more than the cap, the least wanted go first: those of
other projects and older runs before this run's, older before newer.

Records are data from a folder anyone may write to, like the entries: one that is not of
the expected shape counts as empty. Pruning only ever deletes files it finds in the folder,
never a path a record names. An entry written after this run started is left alone: a run
going on beside this one may have made it and not yet recorded it.

A cache folder may be any folder a user names (`--cache-dir`), so metriclint deletes and
overwrites only what it wrote: it makes its folder whole (`.gitignore`, `CACHEDIR.TAG` and its
marker, `.metriclint-cache`) and renames it into place; it uses a folder only if the folder
holds the marker, is empty (then it adds its files), or was made by an earlier version
(tagged, or named `.metriclint_cache`); and it deletes only files whose names and places are
of its own layout (`LAYOUT`), never a file or folder it finds there with any other name.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from metriclint.base import files, signals
from metriclint.base.files import read_regular, umask

RUNS = 3  # the runs of a project whose entries are kept: switching branches back and forth stays warm
# Bytes of entries a cache folder keeps (`max-cache-size`): a few runs of the largest trees
# tried (one of NVIDIA Megatron-LM takes 44 MB).
DEFAULT_LIMIT = 512 * 1024 * 1024
TAG = "CACHEDIR.TAG"
MARKER = ".metriclint-cache"
DEFAULT_NAME = ".metriclint_cache"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55\n# metriclint cache\n"
# What a new cache folder holds, the marker first: a folder holding it is metriclint's.
_MADE = (
    (MARKER, "A metriclint cache folder: metriclint deletes only its own files in it; `metriclint clean` removes it.\n"),
    (TAG, _SIGNATURE),
    (".gitignore", "# Created by metriclint.\n*\n"),
)
_RECORD = re.compile(r"[0-9a-f]{16}\.json")
_TEMPORARY = r"\.tmp-[a-z0-9_]{8}"  # tempfile.mkstemp(prefix=".tmp-")
# The files metriclint writes in a cache folder, by their path in it: pruning and `clean`
# delete nothing else. Entries (`v2/ab/ab...`, one folder per format, kept in a folder named
# after their first two digits), the runs of each project (prune.py), its file statuses
# (stat_index.py) and what its last run kept (kept.py), with the temporary files they are
# written through; the pre-commit hook's lock and notes (report/once.py).
LAYOUT = re.compile(
    rf"v\d+/(?P<prefix>[0-9a-f]{{2}})/((?P=prefix)[0-9a-f]{{62}}|{_TEMPORARY})"
    rf"|(runs|stats|kept)/([0-9a-f]{{16}}\.json|{_TEMPORARY}|\.[0-9a-f]{{16}}\.json\.[a-z0-9_]{{8}}\.metriclint)"
    rf"|lock|printed-[0-9a-f]{{16}}\.txt|{re.escape(MARKER)}|{re.escape(TAG)}|\.gitignore"
)
_FOLDERS = re.compile(r"v\d+|v\d+/[0-9a-f]{2}|runs|stats|kept")  # the folders of LAYOUT
_TEMPORARY_SECONDS = 3600  # a `.tmp-` file this old was left by a run that died while writing it


@dataclass
class Usage:
    """The entries one run read or wrote, each with the absolute path of its file."""

    project: Path
    started: float = field(default_factory=time.time)
    entries: dict[str, str] = field(default_factory=dict)

    def note(self, entry: str, path: Path) -> None:
        self.entries[entry] = os.path.abspath(path)


class Unwritable(UserWarning):
    """The cache folder refused a write (read-only, full): the run goes on without what the
    write would have kept. The command line says so once for a run (cli/project.py)."""

    def __init__(self, directory: Path, error: OSError) -> None:
        self.directory, self.reason = directory, error.strerror or str(error)
        super().__init__(f"the cache in {directory} cannot be written ({self.reason})")


def unwritable(directory: Path, error: OSError) -> None:
    warnings.warn(Unwritable(directory, error), stacklevel=2)


def ready(directory: Path) -> bool:
    """Whether `directory` is a metriclint cache folder that may be written, made now if
    missing: git and backup tools leave it alone, as ruff's and pytest's. False for a folder
    that is not metriclint's (see `refusal`) or cannot be made: then nothing is written there."""
    try:
        if not os.path.lexists(directory):
            _make(directory)
        if _marked(directory):
            return True
        if refusal(directory) is not None:
            return False
        for name, text in _MADE:  # an empty folder, or an earlier version's: its files are added
            with contextlib.suppress(FileExistsError), open(directory / name, "x", encoding="utf-8") as stream:
                stream.write(text)
    except OSError as error:
        unwritable(directory, error)
        return False
    return True


def refusal(directory: Path) -> str | None:
    """Why a run may not keep its cache in `directory`, or None: a folder that is there and
    holds other things is someone's, and pruning it would delete them."""
    try:
        status = os.stat(directory)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"cannot be used: {error.strerror or error}"
    if not stat.S_ISDIR(status.st_mode):
        return "is not a folder"
    if _marked(directory) or _made_before(directory) or not _scanned(str(directory)):
        return None
    return f"is not empty and is not a metriclint cache folder (it has no {MARKER}); give a new or an empty folder"


def _make(directory: Path) -> None:
    """Make the folder whole beside its place, then rename it there, so that no run sees it
    without its marker; a run that made it first wins, and this one's copy is removed."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with signals.held():  # the folder beside it made and gone before a signal can end the run (files.write_new)
        made = tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}.", suffix=".metriclint")
        try:
            os.chmod(made, 0o777 & ~umask())  # mkdtemp makes it its owner's only
            for name, text in _MADE:
                Path(made, name).write_text(text, encoding="utf-8")
            os.rename(made, directory)
        except OSError:
            if not os.path.isdir(directory):
                raise
        finally:
            shutil.rmtree(made, ignore_errors=True)


def _marked(directory: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(directory / MARKER).st_mode)
    except OSError:
        return False


def _made_before(directory: Path) -> bool:
    """A folder an earlier version made: tagged, or named as the default one (the pre-commit
    hook's lock made that one untagged)."""
    try:
        tagged = read_regular(directory / TAG, 4096).decode("utf-8", errors="replace") == _SIGNATURE
    except OSError:
        tagged = False
    return tagged or directory.name == DEFAULT_NAME


def prune(directory: Path, entries: Path, usage: Usage, limit: int) -> None:
    """Record `usage` as its project's latest run, then delete what no recent run needs and
    what exceeds `limit`. Best effort: a folder that cannot be listed or written is left."""
    try:
        record = _record_path(directory, usage.project)
        runs = _read(record)[1]
        if runs[-1:] == [usage.entries]:
            return  # the same run again: what the last one left is as it should be
        runs = (runs + [usage.entries])[-RUNS:]
        _write(record, usage.project, runs)
        wanted = _wanted(record, usage, runs)
        _delete(entries, usage.started, wanted, limit)
        _forget_formats(directory, entries.name)
    except OSError as error:
        unwritable(directory, error)


def _record_path(directory: Path, project: Path) -> Path:
    return directory / "runs" / f"{project_name(project)}.json"


def project_name(project: Path) -> str:
    """How the files a cache folder keeps about one project are named."""
    return hashlib.sha256(str(project.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _read(record: Path) -> tuple[str | None, list[dict[str, str]]]:
    """The project a record is for and its runs, oldest first; nothing of what is missing or
    not of its shape."""
    try:
        value = json.loads(read_regular(record))
    except (OSError, ValueError, RecursionError):
        return None, []
    if not isinstance(value, dict):
        return None, []
    project, runs = value.get("project"), value.get("runs")
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        runs = []
    kept = [{k: v for k, v in run.items() if isinstance(k, str) and isinstance(v, str)} for run in runs]
    return (project if isinstance(project, str) else None), kept


def _write(record: Path, project: Path, runs: list[dict[str, str]]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True)
    files.write_new(record, json.dumps({"project": str(project.resolve()), "runs": runs}).encode("utf-8", "surrogateescape"))


def _wanted(own: Path, usage: Usage, runs: list[dict[str, str]]) -> dict[str, tuple[int, int]]:
    """Each entry a recent run needs, with its rank (lower goes first when over the cap): other
    projects' runs, then this project's older ones, then this run's. An entry of an older run
    whose file is gone is not needed; nor are the runs of a project whose folder is gone."""
    wanted: dict[str, tuple[int, int]] = {}
    for record in sorted(own.parent.glob("*.json")):
        if record == own or not _RECORD.fullmatch(record.name):
            continue
        project, theirs = _read(record)
        if project is None or not os.path.isdir(project):
            record.unlink(missing_ok=True)
            for kind in ("stats", "kept"):  # its index (stat_index.py) and what its last run kept (kept.py)
                (record.parent.parent / kind / record.name).unlink(missing_ok=True)
            continue
        for age, run in enumerate(theirs):
            wanted.update((entry, (0, age)) for entry in run)
    for age, run in enumerate(runs[:-1]):
        wanted.update((entry, (1, age)) for entry, path in run.items() if entry in usage.entries or os.path.exists(path))
    wanted.update((entry, (2, 0)) for entry in usage.entries)
    return wanted


def _delete(entries: Path, started: float, wanted: dict[str, tuple[int, int]], limit: int) -> None:
    """Delete the entries nobody wants, then the least wanted until the rest fit in `limit`.
    The folders are listed with os.scandir: a path object for each of thousands of entries
    cost more than its status. Only files of the entries' layout are looked at."""
    kept: list[tuple[tuple[int, int], float, int, str]] = []
    for entry in _own_files(entries, f"{entries.name}/"):
        try:
            status = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.name.startswith(".tmp-"):
            if status.st_mtime < started - _TEMPORARY_SECONDS:
                _unlink(entry.path)
        elif entry.name in wanted:
            kept.append((wanted[entry.name], status.st_mtime, status.st_size, entry.path))
        elif status.st_mtime < started:
            _unlink(entry.path)
    total = sum(size for _, _, size, _ in kept)
    for _, _, size, path in sorted(kept, key=lambda item: (item[0], item[1])):
        if total <= limit:
            break
        _unlink(path)
        total -= size


def _own_files(folder: Path, inside: str = "") -> Iterator[os.DirEntry[str]]:
    """The regular files under `folder` (at `inside` in the cache folder) whose paths are of
    the cache's layout, without entering a link or a folder the layout has no place for."""
    for found in _scanned(str(folder)):
        path = inside + found.name
        if found.is_dir(follow_symlinks=False):
            if _FOLDERS.fullmatch(path):
                yield from _own_files(Path(found.path), path + "/")
        elif found.is_file(follow_symlinks=False) and LAYOUT.fullmatch(path):
            yield found


def _scanned(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return list(listing)
    except OSError:
        return []


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _forget_formats(directory: Path, current: str) -> None:
    """Entries of an earlier format (`v1/`) are never read again: they are deleted, and their
    folders once empty."""
    for folder in _scanned(str(directory)):
        if re.fullmatch(r"v\d+", folder.name) and folder.name != current and folder.is_dir(follow_symlinks=False):
            for entry in _own_files(Path(folder.path), f"{folder.name}/"):
                _unlink(entry.path)
            _remove_empty(Path(folder.path), folder.name)


def _remove_empty(folder: Path, inside: str) -> None:
    """Remove `folder` (at `inside` in the cache folder, one of the layout's folders) and the
    layout's folders in it, those left empty."""
    for inner in _scanned(str(folder)):
        if inner.is_dir(follow_symlinks=False) and _FOLDERS.fullmatch(f"{inside}/{inner.name}"):
            _remove_empty(Path(inner.path), f"{inside}/{inner.name}")
    with contextlib.suppress(OSError):
        folder.rmdir()


def remove(directory: Path) -> bool:
    """`metriclint clean`: delete metriclint's own files in the cache folder `directory`, and
    the folders left empty. Whether the folder is gone: one that also holds others' files
    stays, marked as metriclint's still."""
    made = {name for name, _ in _MADE}
    for entry in _own_files(directory):
        if entry.name not in made:  # those are kept while the folder holds others' files
            _unlink(entry.path)
    for inner in _scanned(str(directory)):
        if inner.is_dir(follow_symlinks=False) and _FOLDERS.fullmatch(inner.name):
            _remove_empty(Path(inner.path), inner.name)
    if {found.name for found in _scanned(str(directory))} <= made:
        for name in made:
            _unlink(str(directory / name))
        with contextlib.suppress(OSError):
            directory.rmdir()
    return not os.path.lexists(directory)


def is_cache(directory: Path) -> bool:
    """Whether `directory` is a metriclint cache folder: it holds the marker, or an earlier
    version made it. `clean` removes nothing else, whatever a setting points it at."""
    return directory.is_dir() and not directory.is_symlink() and (_marked(directory) or _made_before(directory))


def caches_under(path: Path) -> list[Path]:
    """The cache folders under `path` with the default name: those of the projects inside it
    (a monorepo's), found without following links or entering a cache or `.git`."""
    found = []
    for folder, names, _ in os.walk(path):
        if os.path.basename(folder) == DEFAULT_NAME:
            found.append(Path(folder))
            names.clear()
        else:
            names[:] = [n for n in names if n != ".git"]
    return found
