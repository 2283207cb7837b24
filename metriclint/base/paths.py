"""How paths are shown and matched: relative to the working directory for people, relative
to the project root for configuration globs.

Every stage names files the same way, so a finding, a cache entry and a `per-file-ignores`
glob agree on which file they mean.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from functools import lru_cache
from pathlib import Path
from typing import Callable


def matches(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """Whether `path` (relative to `root`, or by its name) matches one of the globs."""
    if not patterns:
        return False
    match = _any_glob(patterns)
    return match(relative(path, root)) is not None or match(path.name) is not None


@lru_cache(maxsize=64)
def _any_glob(patterns: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """One expression for all the globs, as fnmatch reads each (case-sensitive, as it is on
    POSIX): a run asks about every file, and trying each glob in turn was a tenth of a warm run."""
    return re.compile("|".join(fnmatch.translate(os.path.normcase(p)) for p in patterns)).match


def repository_root(folder: Path) -> Path | None:
    """The git repository's top at or above `folder` (the nearest folder holding `.git`), if any."""
    return next((here for here in (folder, *folder.parents) if (here / ".git").exists()), None)


def relative(path: Path, root: Path) -> str:
    """The path as configuration globs see it: relative to the project root, "/" separated."""
    folder, name = os.path.split(os.fspath(path))
    if name not in ("", ".", "..") and not os.path.islink(path):
        inside = _relative_folder(folder, os.fspath(root), os.getcwd())  # a run asks for every file: each folder once
        if inside is not None:
            return inside + name
    try:
        return real_path(path).relative_to(_resolved(Path(os.getcwd(), root))).as_posix()
    except ValueError:
        return path.as_posix()


@lru_cache(maxsize=4096)
def _relative_folder(folder: str, root: str, cwd: str) -> str | None:
    """What `relative` puts before the name of a file in `folder` that is not a link: the
    folder's path from `root` and "/", "" for the root itself, None outside it. Strings, not
    path objects: building those for every file was most of the time a run spent naming them."""
    return _below(_real(os.path.join(cwd, folder)), _real(os.path.join(cwd, root)))


def _below(real: str, top: str) -> str | None:
    """The real path `real` from the real folder `top`, "/"-separated and ending in "/" ("" for
    `top` itself), None outside it."""
    if real == top:
        return ""
    inside = os.path.join(top, "")
    return real[len(inside) :].replace(os.sep, "/") + "/" if real.startswith(inside) else None


@lru_cache(maxsize=4096)
def _real(folder: str) -> str:
    """`_resolved` for a folder given as a string (joined to the working directory already),
    cached by that string: no path object is built for a folder asked about again."""
    return os.fspath(_resolved(Path(folder)))


@lru_cache(maxsize=4096)
def _resolved(folder: Path) -> Path:
    """A folder's real path; the walk asks once per file, the file system once per folder."""
    return folder.resolve()


def real_path(path: Path) -> Path:
    """`path.resolve()`, asking the file system about each folder once rather than about every
    component of every path; the folder's path is made absolute first, since the working
    directory may change between runs in one process (tests)."""
    if path.name in ("", ".", "..") or path.is_symlink():
        return path.resolve()
    return _resolved(path.parent if path.is_absolute() else Path(os.getcwd(), path.parent)) / path.name


def display(path: Path) -> str:
    """How a path is shown: relative to the working directory, with "/" separators; a path
    that leads elsewhere is shown as given (relative to the working directory if absolute)."""
    folder, name = os.path.split(os.fspath(path))
    try:
        plain_file = name not in ("", ".", "..") and stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        plain_file = False
    if not plain_file:  # a link, or a folder (the working directory itself, or one above it)
        return _shown(path)
    return _shown_folder(folder, os.getcwd()) + name  # a run shows every file: work each folder out once


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(_resolved(Path(os.getcwd()))).as_posix()
    except ValueError:
        return Path(os.path.relpath(path)).as_posix() if path.is_absolute() else path.as_posix()


@lru_cache(maxsize=4096)
def _shown_folder(folder: str, cwd: str) -> str:
    """What `_shown` puts before the name of a file in `folder` ("" for the working directory,
    as a path's folder is split off) that is not a link, when the working directory is `cwd`:
    "" for the working directory itself, else the folder and "/"."""
    shown = _below(_real(os.path.join(cwd, folder)), _real(cwd))
    if shown is not None:
        return shown
    return Path(os.path.relpath(folder) if os.path.isabs(folder) else folder).as_posix() + "/"
