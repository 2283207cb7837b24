"""`metriclint fix`: write each finding's fix (model.Fix) into its file, and nothing else.

Edits are made on the file's own text, decoded the way the source read it, so quotes,
indentation, line endings, a byte-order mark and the encoding stay as they were. A file is
written only if the rewritten text still parses with the parser that read it, and only if it
has not changed since it was read; the write goes to a temporary file in the same folder,
which then replaces the original with the original's mode.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from metriclint.base import files
from metriclint.model import Finding
from metriclint.sources import Unreadable, extractor_for, language_for

_GAP = re.compile(r"\s+")
_LINE_END = re.compile(r"\r\n|\r|\n")
NO_FIX = "no automatic fix for this rule"


@dataclass
class FileFix:
    """The rewrite of one file: what it held, what it will hold, and which findings it settles."""

    path: str
    original: bytes
    rewritten: bytes
    encoding: str
    fixed: list[Finding] = field(default_factory=list)
    unfixed: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def diff(self) -> str:
        old = self.original.decode(self.encoding).splitlines(keepends=True)
        new = self.rewritten.decode(self.encoding).splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"a/{self.path}", f"b/{self.path}"))


def plan(findings: tuple[Finding, ...]) -> tuple[list[FileFix], list[tuple[Finding, str]]]:
    """The rewrite of every file with a fix, and the findings no rewrite will settle."""
    by_path: dict[str, list[Finding]] = {}
    unfixed: list[tuple[Finding, str]] = []
    for finding in findings:
        if finding.fix is None:
            unfixed.append((finding, NO_FIX))
        elif finding.fix.reason:
            unfixed.append((finding, finding.fix.reason))
        else:
            by_path.setdefault(finding.fix.span.path, []).append(finding)
    files = []
    for path, group in sorted(by_path.items()):
        rewrite = rewrite_file(path, group)
        unfixed += rewrite.unfixed
        if rewrite.fixed:
            files.append(rewrite)
    return files, unfixed


def rewrite_file(path: str, findings: list[Finding]) -> FileFix:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        return FileFix(path, b"", b"", "utf-8", unfixed=[(f, f"cannot read the file: {error.strerror or error}") for f in findings])
    return rewrite_data(path, data, findings)


def rewrite_data(path: str, data: bytes, findings: list[Finding]) -> FileFix:
    """The rewrite of `data`, the contents of `path` (an editor's unsaved buffer, or the file)."""
    encoding = _encoding(path, data)
    result = FileFix(path, data, data, encoding)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        result.unfixed = [(f, f"cannot decode the file: {error}") for f in findings]
        return result
    edits: dict[tuple[int, int], str] = {}
    starts = _line_starts(text)
    for finding in findings:
        fix = finding.fix
        assert fix is not None
        start, end = _offset(starts, fix.span.line, fix.span.column), _offset(starts, fix.span.end_line, fix.span.end_column)
        written = text[start:end] if 0 <= start <= end <= len(text) else ""
        if " ".join(written.split()) != fix.phrase:
            result.unfixed.append((finding, f'the file does not say "{fix.phrase}" in one piece there; reword it by hand'))
            continue
        replacement = respaced(written, fix.replacement)
        if edits.get((start, end), replacement) != replacement or _overlaps(edits, start, end):
            result.unfixed.append((finding, "another fix rewrites the same words differently; reword it by hand"))
            continue
        edits[(start, end)] = replacement
        result.fixed.append(finding)
    if not edits:
        return result
    new_text = text
    for (start, end), replacement in sorted(edits.items(), reverse=True):
        new_text = new_text[:start] + replacement + new_text[end:]
    problem = _unparsable(path, new_text, encoding)
    if problem:
        result.unfixed += [(f, problem) for f in result.fixed]
        result.fixed = []
        return result
    result.rewritten = new_text.encode(encoding)
    return result


def respaced(written: str, wording: str) -> str:
    """`wording`, keeping the line break of a phrase wrapped across lines of a docstring."""
    gaps = _GAP.findall(written)
    words = wording.split()
    if len(gaps) == len(words) - 1:
        return "".join(word + gap for word, gap in zip(words, gaps + [""]))
    breaks = [i for i, gap in enumerate(gaps) if "\n" in gap]
    if not breaks or len(words) < 2:
        return wording
    at = min(breaks[0], len(words) - 2)
    return " ".join(words[: at + 1]) + gaps[breaks[0]] + " ".join(words[at + 1 :])


def write(rewrite: FileFix, roots: Sequence[Path]) -> str:
    """Write the rewrite over the file (through a link, to the file it names, inside one of
    the project `roots` only); returns why it was not written, or ""."""
    path = Path(rewrite.path)
    try:
        target = path.resolve(strict=True)
        if not any(target.is_relative_to(root.resolve()) for root in roots):
            return "a link to a file outside the project; not written"
        mode = stat.S_IMODE(target.stat().st_mode)
        if not mode & 0o222 or not os.access(target, os.W_OK):
            return "the file is read-only; not written"
        if target.read_bytes() != rewrite.original:
            return "the file changed since it was read; not written (run fix again)"
        files.rewrite(target, rewrite.rewritten)
    except OSError as error:
        return f"cannot write the file: {error.strerror or error}"
    return ""


def _encoding(path: str, data: bytes) -> str:
    """How the file's source decoded it, so the columns of its findings are columns here."""
    language = language_for(Path(path).suffix)
    try:
        return language.encoding(data) if language is not None else "utf-8"
    except SyntaxError:  # a Python coding cookie naming no codec: decoding reports it
        return "utf-8"


def _line_starts(text: str) -> list[int]:
    """Lines end as the sources end them: at "\\r\\n", "\\r" or "\\n" (see `source_lines`)."""
    return [0, *(match.end() for match in _LINE_END.finditer(text))]


def _offset(starts: list[int], line: int, column: int) -> int:
    return starts[line - 1] + column - 1 if 1 <= line <= len(starts) else -1


def _overlaps(edits: dict[tuple[int, int], str], start: int, end: int) -> bool:
    return any(s < end and start < e and (s, e) != (start, end) for s, e in edits)


def _unparsable(path: str, text: str, encoding: str) -> str:
    """Why the rewritten file would not parse with its source's parser, or "" if it does."""
    extractor = extractor_for(Path(path).suffix)
    if extractor is None:
        return ""
    try:
        extractor(path, text.encode(encoding))
    except Unreadable as error:
        return f"the rewrite would not parse ({error.message}); not written"
    except UnicodeEncodeError:
        return f"the new wording cannot be written in {encoding}; reword it by hand"
    return ""
