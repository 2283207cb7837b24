"""Which files to read: the given paths, minus tool folders, virtual environments,
`.gitignore`d paths and `exclude` patterns, sorted.

The walk never leaves the project: links to folders are not entered (so link loops cannot
trap it), and a linked file is read only if it lands inside the project root. A folder that
cannot be listed (no permission) is passed to `on_error` and skipped; the walk goes on.

Inside a git work tree, git lists a folder's files instead (base/gitls.py): it applies the
same `.gitignore` files in C, from its index, in under half the time of the walk (Megatron-LM's
2,450 files: 0.05 CPU s instead of 0.12). Its listing is then held to the walk's rules (tool
folders, environments, links, `exclude`), so both keep the same files; where git cannot
answer, the walk runs.
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
from metriclint.base.gitls import listed
from metriclint.base.globs import Patterns, matchable
from metriclint.base.paths import real_path, repository_root

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".metriclint_cache",
        "build",
        "dist",
        "site-packages",
    }
)
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")  # a virtual environment or conda env, whatever its name


def discover(
    paths: tuple[Path, ...],
    exclude: Patterns | tuple[str, ...],
    root: Path,
    suffixes: tuple[str, ...],
    on_error: Callable[[OSError], None] | None = None,
) -> list[Path]:
    """Files under `paths` with one of `suffixes`; a file named explicitly is always read.
    `exclude` holds gitignore-style patterns relative to `root` (base/globs.py). `on_error`
    gets the error of each folder that cannot be listed."""
    if not isinstance(exclude, Patterns):
        exclude = Patterns(exclude, root)
    project_ignored = GitIgnored(root)
    finder = _Finder(exclude, root.resolve(), suffixes, on_error)
    listed_by_git: list[Path] = []
    for path in paths:
        if path.is_file():
            finder.found.setdefault(str(path.resolve()), path)
        elif project_ignored(path, is_dir=True):
            # A folder named explicitly is read even if git ignores it (a vendored tree, an
            # environment's library); inside it, only its own .gitignore files apply.
            finder.walk(path, path, GitIgnored(path, search_up=False))
        elif finder.take_listing(path, project_ignored):
            listed_by_git.append(path)
        else:
            finder.walk(path, path, project_ignored)
    if exclude.unused():
        # Only the walk asks about what git leaves out (ignored folders, empty ones), so only
        # it can tell that a pattern matches nothing; it finds the same files again.
        for path in listed_by_git:
            finder.walk(path, path, project_ignored)
    return sorted(finder.found.values(), key=lambda p: p.as_posix())


class _Finder:
    """The files kept so far, and the two ways of finding more: walking a folder, or taking
    git's listing of it. Both keep the same files (tests/test_gitls.py holds them to it)."""

    def __init__(self, exclude: Patterns, inside: Path, suffixes: tuple[str, ...], on_error: Callable[[OSError], None] | None) -> None:
        self.exclude, self.inside, self.suffixes, self.on_error = exclude, inside, suffixes, on_error
        self.found: dict[str, Path] = {}  # where it really is -> how it was reached; a file is read once
        self.walked: set[str] = set()  # the real paths of the folders walked so far

    def walk(self, start: Path, checked: Path, ignored: GitIgnored) -> None:
        """Keep the files under `start`, a folder in or equal to the checked folder `checked`.

        Paths stay strings until a file is kept, and each entry's type comes from its folder's
        listing: a path object, a status and a resolved path for every name walked were most of
        a warm run's discovery. A folder entered is no link, so its real path is its parent's
        and its name."""
        folders = [(str(start), str(real_path(start)), start == checked)]
        while folders:
            folder, real_folder, is_checked = folders.pop()
            if real_folder in self.walked:
                continue  # a checked folder inside another (a project's root and a path in it): its files are kept
            try:
                with os.scandir(folder) as listing:
                    entries = list(listing)
            except OSError as error:
                if self.on_error is not None:
                    self.on_error(error)
                continue
            if not is_checked and any(e.name in ENVIRONMENT_MARKERS for e in entries):
                continue  # an environment's own listing tells; asking about each folder's markers cost a stat each
            self.walked.add(real_folder)
            below = []
            for entry in entries:
                name = entry.name
                if _is_folder(entry):
                    if not self._skipped_dir(folder, real_folder, name, ignored):
                        below.append((entry.path, os.path.join(real_folder, name), False))
                elif name.endswith(self.suffixes) and not self._left_out(folder, real_folder, name, ignored):
                    self._keep(Path(entry.path), _entry_target(entry, os.path.join(real_folder, name), self.inside))
            folders.extend(reversed(below))  # depth first, in listing order, as os.walk goes

    def take_listing(self, checked: Path, ignored: GitIgnored) -> bool:
        """Keep the files under the folder `checked` that git lists, as the walk would keep
        them; False (nothing kept) when git cannot list them for the repository the walk sees."""
        repository = ignored.repository
        if repository is None or not checked.is_dir() or repository_root(checked.resolve()) != repository:
            return False
        entries = listed(checked, repository)
        if entries is None:
            return False
        folders = _Folders(checked, self.exclude)
        for entry in (entry.rstrip("/") for entry in entries):  # "nested/": a repository git does not enter
            head, _, name = entry.rpartition("/")
            real_folder = folders.real(head)
            if real_folder is None:
                continue  # in a folder the walk leaves out
            candidate = os.path.join(checked, entry)
            mode = _mode(candidate)
            if mode is None:
                continue  # tracked, and deleted since
            if stat.S_ISDIR(mode):
                if folders.entered(head, name):  # a nested repository or a submodule, which git does not enter
                    self.walk(Path(checked, head, name), checked, ignored)
            elif name.endswith(self.suffixes) and not (self.exclude and self.exclude(Path(checked, entry))):
                self._keep(Path(checked, entry), _target(candidate, mode, os.path.join(real_folder, name), self.inside))
        return True

    def _keep(self, path: Path, real: str | None) -> None:
        if real is not None and (real not in self.found or self.found[real].is_symlink()):
            self.found[real] = path

    def _skipped_dir(self, folder: str, real_folder: str, name: str, ignored: GitIgnored) -> bool:
        """Whether the folder `name` in `folder` (really `real_folder`) is left out of the walk."""
        return (
            _tool_folder(name)
            or bool(self.exclude and self.exclude(Path(folder, name), is_dir=True))
            or ignored.entry(real_folder, name, is_dir=True)
        )

    def _left_out(self, folder: str, real_folder: str, name: str, ignored: GitIgnored) -> bool:
        """Whether the file `name` in `folder` (really `real_folder`) is excluded or ignored."""
        return bool(self.exclude and self.exclude(Path(folder, name))) or ignored.entry(real_folder, name, is_dir=False)


class _Folders:
    """The folders of git's listing as the walk treats them: which it enters and reads the
    files of, and where each really is. Asked about every entry, each folder is worked out
    once, from its parent's answer."""

    def __init__(self, checked: Path, exclude: Patterns) -> None:
        self.checked, self.exclude = checked, exclude
        self._real: dict[str, str | None] = {"": str(real_path(checked))}  # "" is the checked folder itself

    def real(self, folder: str) -> str | None:
        """The real path of `folder` (relative to the checked folder, "/"-separated) when the
        walk reads its files, else None."""
        parts = folder.split("/") if folder else []
        known = len(parts)
        while "/".join(parts[:known]) not in self._real:
            known -= 1
        for depth in range(known, len(parts)):
            parent = "/".join(parts[:depth])
            above = self._real[parent]
            here = None if above is None or not self.entered(parent, parts[depth]) else os.path.join(above, parts[depth])
            self._real["/".join(parts[: depth + 1])] = None if here is None or _environment(here) else here
        return self._real[folder]

    def entered(self, parent: str, name: str) -> bool:
        """Whether the walk, listing `parent` (whose files it reads), goes into its folder
        `name`: not a tool folder, not excluded, a folder and not a link to one."""
        if _tool_folder(name) or (self.exclude and self.exclude(Path(self.checked, parent, name), is_dir=True)):
            return False
        mode = _mode(os.path.join(self.checked, parent, name))
        return mode is not None and stat.S_ISDIR(mode)


def _tool_folder(name: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info")


def _environment(folder: str) -> bool:
    """Whether `folder` holds a virtual environment's or conda's marker (as a name in its listing)."""
    return any(os.path.lexists(os.path.join(folder, marker)) for marker in ENVIRONMENT_MARKERS)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """Whether the walk may enter `entry`: a folder, not a link to one (os.walk lists those and
    never enters them, nor reads them as files)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry_target(entry: os.DirEntry[str], real: str, inside: Path) -> str | None:
    """`_target` for a file met in a folder's listing, whose type the listing tells."""
    try:
        if not entry.is_symlink():
            return real if entry.is_file(follow_symlinks=False) else None
    except OSError:
        return None
    return _target(entry.path, _mode(entry.path), real, inside)


def _mode(path: str) -> int | None:
    """The mode of `path` itself (not of where a link points), None if it is not there."""
    try:
        return os.lstat(path).st_mode
    except OSError:
        return None


def _target(candidate: str, mode: int | None, real: str, inside: Path) -> str | None:
    """The real path of the file `candidate` (of mode `mode`; `real` when it is no link), or
    None: gone, a broken or looping link, a link that leaves the project, or something that is
    not a regular file (a FIFO would block the read)."""
    if mode is None:
        return None
    if not stat.S_ISLNK(mode):
        return real if stat.S_ISREG(mode) else None
    try:
        resolved = Path(candidate).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return str(resolved) if resolved.is_relative_to(inside) and resolved.is_file() else None


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
        self.repository = repository_root(root) if search_up else None  # where git would look for the ignore files
        self.top = str(self.repository or root)
        self._specs: dict[str, _IgnoreFile | None] = {}
        self._rules: dict[str, list[tuple[_IgnoreFile, str]] | None] = {}

    def __call__(self, path: Path, is_dir: bool) -> bool:
        real = path.resolve() if path.name in ("", ".", "..") else real_path(path.parent) / path.name  # not where a link points
        return self.entry(str(real.parent), real.name, is_dir)

    def entry(self, folder: str, name: str, is_dir: bool) -> bool:
        """Whether git ignores `name` in `folder`, a real path (no links, absolute)."""
        verdict = None
        for rules, prefix in self._applying(folder):  # the top itself is outside: nothing applies
            result = rules.verdict(prefix + name + ("/" if is_dir else ""))
            verdict = result if result is not None else verdict
        return bool(verdict)

    def _applying(self, folder: str) -> list[tuple[_IgnoreFile, str]]:
        """The ignore files that rule on the entries of `folder`, top first, each with the path
        from its own folder to `folder` that a name there is matched with."""
        return self._ruling(folder) or []

    def _ruling(self, folder: str) -> list[tuple[_IgnoreFile, str]] | None:
        """`_applying`, or None outside the top. Worked out once per folder (the walk asks for
        every file in it), from its parent's: the same files, each a folder further away, and
        its own; building each ancestor's path anew for every folder was half of discovery."""
        if folder not in self._rules:
            rules: list[tuple[_IgnoreFile, str]] | None
            parent, name = os.path.split(folder)
            if folder == self.top:
                rules = []
            elif parent == folder or not name:
                rules = None  # the file system's root, reached without passing the top: outside it
            else:
                above = self._ruling(parent)
                rules = None if above is None else [(spec, f"{prefix}{name}/") for spec, prefix in above]
            if rules is not None and (own := self._spec(folder)) is not None:
                rules.append((own, ""))
            self._rules[folder] = rules
        return self._rules[folder]

    def _spec(self, folder: str) -> _IgnoreFile | None:
        if folder not in self._specs:
            files = [os.path.join(folder, ".gitignore")] + ([os.path.join(folder, ".git", "info", "exclude")] if folder == self.top else [])
            lines = [line for file in files for line in _lines(Path(file))]
            spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None  # most folders have none: no spec to build
            # Comments only (git init's info/exclude): no rule, and no screen that matches every name.
            self._specs[folder] = _IgnoreFile(spec) if spec is not None and any(p.include is not None for p in spec.patterns) else None
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
