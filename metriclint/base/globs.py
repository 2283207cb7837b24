"""`exclude`, `extend-exclude` and `per-file-ignores` patterns, read as ruff reads them: in
.gitignore's syntax, relative to the project root.

A pattern without a slash names a file or folder anywhere (`tests`, `*_pb2.py`); one with a
slash is anchored at the root (`build/*`, `/tests`, `src/gen/`); `**` spans folders
(`**/tests`); a trailing slash matches folders only; a folder's pattern covers everything in
it. pathspec implements git's rules; a home-made matcher (fnmatch) read `**/tests`, `tests/`
and `/tests` as matching nothing.

Each set remembers which of its patterns matched, so that one matching nothing (a typo, a
folder since renamed) can be reported instead of silently excluding nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import pathspec

from metriclint.base.paths import real_path


class Patterns:
    """Patterns relative to `root`; called with a path, whether one matches it."""

    def __init__(self, patterns: tuple[str, ...], root: Path) -> None:
        self.patterns, self.root = patterns, root.resolve()
        self._inside = os.path.join(str(self.root), "")  # what a path inside the root starts with
        self._specs = [(p, pathspec.GitIgnoreSpec.from_lines([p])) for p in patterns]
        self._used: set[str] = set()

    def __call__(self, path: Path, is_dir: bool = False) -> bool:
        if not self._specs:
            return False
        # Each folder resolved once, a link in full, and no path objects built from the result:
        # resolving and relating every file and folder asked about in full was a quarter of a
        # discovery with `exclude` set (Megatron-LM: 0.234 -> 0.178 CPU s; pathspec's matching
        # is most of the rest).
        real = str(real_path(path))
        inside = real[len(self._inside) :]
        if not real.startswith(self._inside) or not inside:
            return False  # outside the project, or the project itself: no pattern of its own reaches there
        name = matchable(inside.replace(os.sep, "/")) + ("/" if is_dir else "")
        hits = [p for p, spec in self._specs if spec.match_file(name)]
        self._used.update(hits)
        return bool(hits)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def unused(self) -> tuple[str, ...]:
        """The patterns that matched nothing they were asked about."""
        return tuple(p for p in self.patterns if p not in self._used)

    def matched(self) -> frozenset[str]:
        """The patterns that matched something: what a walk in another process hands back."""
        return frozenset(self._used)

    def note_matched(self, patterns: Iterable[str]) -> None:
        self._used.update(patterns)


_UNDECODED = dict.fromkeys(range(0xDC80, 0xDD00), "\ufffd")  # os.fsdecode's stand-ins for bytes that are not UTF-8


def matchable(name: str) -> str:
    """`name` as pathspec can match it. A file name that is not UTF-8 reaches us with one
    surrogate for each byte that does not decode (os.fsdecode); pathspec's re2 backend refuses
    surrogates with UnicodeEncodeError. Each becomes U+FFFD, one character for one byte as
    git counts it, which no pattern written in UTF-8 spells but `*` and `?` match."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.translate(_UNDECODED)
    return name
