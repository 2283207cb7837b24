"""Which files to read: the given paths, minus tool folders and `exclude` globs, sorted."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".metriclint_cache", "build", "dist", "site-packages",
})


def discover(paths: tuple[Path, ...], exclude: tuple[str, ...], root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Files under `paths` with one of `suffixes`; a file named explicitly is always read."""
    found: set[Path] = set()
    for path in paths:
        if path.is_file():
            found.add(path)
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info") and not matches(Path(folder, d), exclude, root)]
            found.update(
                Path(folder, name)
                for name in files
                if name.endswith(suffixes) and not matches(Path(folder, name), exclude, root)
            )
    return sorted(found, key=lambda p: p.as_posix())


def matches(path: Path, patterns: tuple[str, ...], root: Path) -> bool:
    """Whether `path` (relative to `root`, or by its name) matches one of the globs."""
    if not patterns:
        return False
    inside = relative(path, root)
    return any(fnmatch.fnmatch(inside, p) or fnmatch.fnmatch(path.name, p) for p in patterns)


def relative(path: Path, root: Path) -> str:
    """The path as configuration globs see it: relative to the project root, "/" separated."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def display(path: Path) -> str:
    """How a path is shown: relative to the working directory, with "/" separators."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(os.path.relpath(path)).as_posix() if path.is_absolute() else path.as_posix()
