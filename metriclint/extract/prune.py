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
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from metriclint.base.files import read_regular

RUNS = 3  # the runs of a project whose entries are kept: switching branches back and forth stays warm
# Bytes of entries a cache folder keeps (`max-cache-size`): a few runs of the largest trees
# tried (one of NVIDIA Megatron-LM takes 44 MB).
DEFAULT_LIMIT = 512 * 1024 * 1024
TAG = "CACHEDIR.TAG"
_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55\n# metriclint cache\n"
_ENTRY = re.compile(r"[0-9a-f]{64}")
_TEMPORARY_SECONDS = 3600  # a `.tmp-` file this old was left by a run that died while writing it


@dataclass
class Usage:
    """The entries one run read or wrote, each with the absolute path of its file."""

    project: Path
    started: float = field(default_factory=time.time)
    entries: dict[str, str] = field(default_factory=dict)

    def note(self, entry: str, path: Path) -> None:
        self.entries[entry] = os.path.abspath(path)


def create(directory: Path) -> None:
    """A cache folder that git and backup tools leave alone, as ruff's and pytest's are."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / ".gitignore").write_text("# Created by metriclint.\n*\n", encoding="utf-8")
    (directory / TAG).write_text(_SIGNATURE, encoding="utf-8")


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
    except OSError:
        pass


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
    handle, temporary = tempfile.mkstemp(dir=record.parent, prefix=".tmp-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors="surrogateescape") as stream:
            json.dump({"project": str(project.resolve()), "runs": runs}, stream)
        os.replace(temporary, record)
    except BaseException:
        os.unlink(temporary)
        raise


def _wanted(own: Path, usage: Usage, runs: list[dict[str, str]]) -> dict[str, tuple[int, int]]:
    """Each entry a recent run needs, with its rank (lower goes first when over the cap): other
    projects' runs, then this project's older ones, then this run's. An entry of an older run
    whose file is gone is not needed; nor are the runs of a project whose folder is gone."""
    wanted: dict[str, tuple[int, int]] = {}
    for record in sorted(own.parent.glob("*.json")):
        if record == own:
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
    cost more than its status."""
    kept: list[tuple[tuple[int, int], float, int, str]] = []
    for folder in _scanned(str(entries)):
        for entry in _scanned(folder.path):
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith(".tmp-"):
                if status.st_mtime < started - _TEMPORARY_SECONDS:
                    _unlink(entry.path)
            elif entry.name in wanted:
                kept.append((wanted[entry.name], status.st_mtime, status.st_size, entry.path))
            elif status.st_mtime < started or not _ENTRY.fullmatch(entry.name):
                _unlink(entry.path)
    total = sum(size for _, _, size, _ in kept)
    for _, _, size, path in sorted(kept, key=lambda item: (item[0], item[1])):
        if total <= limit:
            break
        _unlink(path)
        total -= size


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
    """Entries of an earlier format (`v1/`) are never read again."""
    for folder in _scanned(str(directory)):
        if re.fullmatch(r"v\d+", folder.name) and folder.name != current and folder.is_dir(follow_symlinks=False):
            shutil.rmtree(folder.path, ignore_errors=True)


def is_cache(directory: Path) -> bool:
    """Whether `directory` is a metriclint cache folder: made by `create`, or named as the
    default one is. `clean` removes nothing else, whatever a setting points it at."""
    try:
        tagged = (directory / TAG).read_text(encoding="utf-8", errors="replace") == _SIGNATURE
    except OSError:
        tagged = False
    return directory.is_dir() and not directory.is_symlink() and (tagged or directory.name == ".metriclint_cache")


def caches_under(path: Path) -> list[Path]:
    """The cache folders under `path` with the default name: those of the projects inside it
    (a monorepo's), found without following links or entering a cache or `.git`."""
    found = []
    for folder, names, _ in os.walk(path):
        if os.path.basename(folder) == ".metriclint_cache":
            found.append(Path(folder))
            names.clear()
        else:
            names[:] = [n for n in names if n != ".git"]
    return found
