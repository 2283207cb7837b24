"""Which files to read: the given paths, minus tool folders, virtual environments,
`.gitignore`d paths and `exclude` patterns, sorted.

The walk never leaves the project: links to folders are not entered (so link loops cannot
trap it), and a linked file is read only if it lands inside the project root. A folder that
cannot be listed (no permission) is passed to `on_error` and skipped; the walk goes on.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Callable

import pathspec
from pathspec.util import normalize_file

from metriclint.base.files import read_regular
from metriclint.base.globs import Patterns, matchable
from metriclint.base.paths import real_path, repository_root

SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".metriclint_cache", "build", "dist", "site-packages",
})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")  # a virtual environment or conda env, whatever its name


def discover(
    paths: tuple[Path, ...], exclude: Patterns | tuple[str, ...], root: Path, suffixes: tuple[str, ...],
    on_error: Callable[[OSError], None] | None = None,
) -> list[Path]:
    """Files under `paths` with one of `suffixes`; a file named explicitly is always read.
    `exclude` holds gitignore-style patterns relative to `root` (base/globs.py). `on_error`
    gets the error of each folder that cannot be listed."""
    if not isinstance(exclude, Patterns):
        exclude = Patterns(exclude, root)
    found: dict[str, Path] = {}  # where it really is -> how it was reached; a file is read once
    project_ignored = GitIgnored(root)
    inside = root.resolve()
    for path in paths:
        if path.is_file():
            found.setdefault(str(path.resolve()), path)
            continue
        # A folder named explicitly is read even if git ignores it (a vendored tree, an
        # environment's library); inside it, only its own .gitignore files apply.
        ignored = GitIgnored(path, search_up=False) if project_ignored(path, is_dir=True) else project_ignored
        # Names stay strings until a file is kept: a path object for every name walked was
        # most of a warm run's discovery.
        for folder, dirs, files in os.walk(path, onerror=on_error):  # links to folders are listed, never entered
            here = Path(folder)
            if here != path and any(marker in dirs or marker in files for marker in ENVIRONMENT_MARKERS):
                dirs[:] = []  # an environment's own listing tells; asking about each folder's markers cost a stat each
                continue
            real_here = real_path(here)  # asked once for every file in it
            dirs[:] = [d for d in dirs if not _skipped_dir(here, real_here, d, exclude, ignored)]
            for name in files:
                if not name.endswith(suffixes):
                    continue
                if (exclude and exclude(here / name)) or ignored.entry(real_here, name, is_dir=False):
                    continue
                real = _target(folder, name, real_here, inside)
                if real is not None and (real not in found or found[real].is_symlink()):
                    found[real] = here / name
    return sorted(found.values(), key=lambda p: p.as_posix())


def _skipped_dir(here: Path, real_here: Path, name: str, exclude: Patterns, ignored: GitIgnored) -> bool:
    """Whether the folder `name` in `here` (really `real_here`) is left out of the walk."""
    return (
        name in SKIP_DIRS or name.endswith(".egg-info") or bool(exclude and exclude(here / name, is_dir=True))
        or ignored.entry(real_here, name, is_dir=True)
    )


def _target(folder: str, name: str, real_folder: Path, inside: Path) -> str | None:
    """The real path of the regular file `name` in `folder` (really `real_folder`), or None: a
    broken or looping link, a link that leaves the project, or something that is not a regular
    file (a FIFO would block the read)."""
    candidate = os.path.join(folder, name)
    try:
        mode = os.lstat(candidate).st_mode
        if not stat.S_ISLNK(mode):
            return os.path.join(real_folder, name) if stat.S_ISREG(mode) else None
        real = Path(candidate).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return str(real) if real.is_relative_to(inside) and real.is_file() else None


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
        self.top = (repository_root(root) or root) if search_up else root
        self._specs: dict[Path, _IgnoreFile | None] = {}
        self._rules: dict[Path, list[tuple[_IgnoreFile, str]] | None] = {}

    def __call__(self, path: Path, is_dir: bool) -> bool:
        real = path.resolve() if path.name in ("", ".", "..") else real_path(path.parent) / path.name  # not where a link points
        return self.entry(real.parent, real.name, is_dir)

    def entry(self, folder: Path, name: str, is_dir: bool) -> bool:
        """Whether git ignores `name` in `folder`, a real path (no links, absolute)."""
        verdict = None
        for rules, prefix in self._applying(folder):  # the top itself is outside: nothing applies
            result = rules.verdict(prefix + name + ("/" if is_dir else ""))
            verdict = result if result is not None else verdict
        return bool(verdict)

    def _applying(self, folder: Path) -> list[tuple[_IgnoreFile, str]]:
        """The ignore files that rule on the entries of `folder`, top first, each with the path
        from its own folder to `folder` that a name there is matched with."""
        return self._ruling(folder) or []

    def _ruling(self, folder: Path) -> list[tuple[_IgnoreFile, str]] | None:
        """`_applying`, or None outside the top. Worked out once per folder (the walk asks for
        every file in it), from its parent's: the same files, each a folder further away, and
        its own; building each ancestor's path anew for every folder was half of discovery."""
        if folder not in self._rules:
            rules: list[tuple[_IgnoreFile, str]] | None
            if folder == self.top:
                rules = []
            elif folder.parent == folder:
                rules = None  # the file system's root, reached without passing the top: outside it
            else:
                above = self._ruling(folder.parent)
                rules = None if above is None else [(spec, f"{prefix}{folder.name}/") for spec, prefix in above]
            if rules is not None and (own := self._spec(folder)) is not None:
                rules.append((own, ""))
            self._rules[folder] = rules
        return self._rules[folder]

    def _spec(self, folder: Path) -> _IgnoreFile | None:
        if folder not in self._specs:
            files = [folder / ".gitignore"] + ([folder / ".git" / "info" / "exclude"] if folder == self.top else [])
            spec = pathspec.GitIgnoreSpec.from_lines(line for file in files for line in _lines(file))
            # Comments only (git init's info/exclude): no rule, and no screen that matches every name.
            self._specs[folder] = _IgnoreFile(spec) if any(p.include is not None for p in spec.patterns) else None
        return self._specs[folder]


class _IgnoreFile:
    """One folder's ignore patterns, and one regex that tells whether any of them matches a
    name at all. Most names match none; pathspec would try each pattern in turn for them
    (96 patterns in miles' .gitignore, a fifth of a warm run's discovery)."""

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self.spec = spec
        self.screen = _any_of(spec)

    def verdict(self, name: str) -> bool | None:
        """pathspec's verdict on `name`: ignored, kept (a `!` pattern), or None (no pattern matches)."""
        name = matchable(name)
        if self.screen is not None and self.screen.search(normalize_file(name)) is None:
            return None
        return self.spec.check_file(name).include


def _any_of(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """A regex that matches where any of the spec's patterns does (pathspec searches each
    pattern's regex in the normalized name); None when that cannot be built (then every name
    is checked in full). Group names are made unique: each pattern names its own."""
    regexes = [p.regex for p in spec.patterns if p.include is not None and p.regex is not None]
    if not all(isinstance(r.pattern, str) and r.flags == re.UNICODE for r in regexes):
        return None
    try:
        return re.compile("|".join(f"(?:{r.pattern.replace('(?P<', f'(?P<p{i}_')})" for i, r in enumerate(regexes)))
    except re.error:
        return None


def _lines(file: Path) -> list[str]:
    """An ignore file's lines; one that cannot be read (missing, a FIFO, a link to a device,
    too large) ignores nothing, as git does with a `.gitignore` that is a link."""
    try:
        return read_regular(file).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
