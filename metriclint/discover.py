"""Which files to read: the given paths, minus tool folders, virtual environments,
`.gitignore`d paths and `exclude` globs, sorted.

The walk never leaves the project: links to folders are not entered (so link loops cannot
trap it), and a linked file is read only if it lands inside the project root.
"""

from __future__ import annotations

import fnmatch
import os
from functools import lru_cache
from pathlib import Path

import pathspec

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".metriclint_cache", "build", "dist", "site-packages",
})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")  # a virtual environment or conda env, whatever its name


def discover(paths: tuple[Path, ...], exclude: tuple[str, ...], root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Files under `paths` with one of `suffixes`; a file named explicitly is always read."""
    found: dict[Path, Path] = {}  # where it really is -> how it was reached; a file is read once
    project_ignored = GitIgnored(root)
    inside = root.resolve()
    for path in paths:
        if path.is_file():
            found.setdefault(path.resolve(), path)
            continue
        # A folder named explicitly is read even if git ignores it (a vendored tree, an
        # environment's library); inside it, only its own .gitignore files apply.
        ignored = GitIgnored(path, search_up=False) if project_ignored(path, is_dir=True) else project_ignored
        for folder, dirs, files in os.walk(path):  # links to folders are listed, never entered
            here = Path(folder)
            dirs[:] = [d for d in dirs if not _skipped_dir(here / d, exclude, root, ignored)]
            for name in files:
                candidate = here / name
                if not name.endswith(suffixes) or matches(candidate, exclude, root) or ignored(candidate, is_dir=False):
                    continue
                real = _target(candidate, inside)
                if real is not None and (real not in found or found[real].is_symlink()):
                    found[real] = candidate
    return sorted(found.values(), key=lambda p: p.as_posix())


def _skipped_dir(path: Path, exclude: tuple[str, ...], root: Path, ignored: GitIgnored) -> bool:
    name = path.name
    return (
        name in SKIP_DIRS
        or name.endswith(".egg-info")
        or any((path / marker).exists() for marker in ENVIRONMENT_MARKERS)
        or matches(path, exclude, root)
        or ignored(path, is_dir=True)
    )


def _target(candidate: Path, inside: Path) -> Path | None:
    """The regular file `candidate` is, or None: a broken or looping link, a link that leaves
    the project, or something that is not a regular file (a FIFO would block the read)."""
    try:
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if candidate.is_symlink() and not real.is_relative_to(inside):
        return None
    return real if real.is_file() else None


class GitIgnored:
    """Whether git would ignore a path: the `.gitignore` files from the repository's top (or
    the project root, outside a repository) down to its folder, deeper ones winning, and
    `.git/info/exclude`.

    Matching uses pathspec's implementation of git's wildmatch rules: negations, anchoring,
    `**` and directory-only patterns have enough corner cases that a home-made matcher would
    skip files git keeps, or read files it ignores.
    """

    def __init__(self, root: Path, search_up: bool = True) -> None:
        root = root.resolve()
        self.top = next((f for f in (root, *root.parents) if (f / ".git").exists()), root) if search_up else root
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def __call__(self, path: Path, is_dir: bool) -> bool:
        real = _resolved(path.parent) / path.name  # where it is, not where a link points
        try:
            relative_path = real.relative_to(self.top)
        except ValueError:
            return False
        if not relative_path.parts:
            return False  # the top itself: git ignores nothing there
        verdict = None
        folders = [self.top, *(self.top / Path(*relative_path.parts[:i]) for i in range(1, len(relative_path.parts)))]
        for folder in folders:
            spec = self._spec(folder)
            if spec is not None:
                name = real.relative_to(folder).as_posix() + ("/" if is_dir else "")
                result = spec.check_file(name).include
                verdict = result if result is not None else verdict
        return bool(verdict)

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        if folder not in self._specs:
            files = [folder / ".gitignore"] + ([folder / ".git" / "info" / "exclude"] if folder == self.top else [])
            lines = [line for file in files for line in _lines(file)]
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]


def _lines(file: Path) -> list[str]:
    try:
        return file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


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


@lru_cache(maxsize=4096)
def _resolved(folder: Path) -> Path:
    """A folder's real path; the walk asks once per file, the file system once per folder."""
    return folder.resolve()


def display(path: Path) -> str:
    """How a path is shown: relative to the working directory, with "/" separators."""
    try:
        return path.resolve().relative_to(_resolved(Path(os.getcwd()))).as_posix()
    except ValueError:
        return Path(os.path.relpath(path)).as_posix() if path.is_absolute() else path.as_posix()
