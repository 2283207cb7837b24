"""Suppression directives: `metriclint: ignore[ML001, ML002] reason` and `ignore-file[...]`.

Each source finds comments with its own parser, in its own comment syntax (`#` in Python and
YAML, `//` and `/* */` in JavaScript, TypeScript and JSON with comments, `<!-- -->` in
Markdown), and hands the comment's text to `directive`; only the directive's small grammar is
read here. What a suppression silences is decided after the checks have run (filters.py), so
no parser needs to know the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from metriclint.model import Span, Suppression

# After the comment marker, or after an earlier remark: `# pre-clip  # metriclint: ignore[ML001]`.
# A bare `metriclint: ignore` (no codes) is a directive too: it silences nothing, and ML010 says so
# rather than let it look like it works.
_DIRECTIVE = re.compile(r"(?<![\w-])metriclint:\s*(ignore-file|ignore)(?:\[([^\]]*)\]|(?![\w\[-]))")
# flake8's noqa comment with codes (noqa, a colon, then ML001, E501), honoured as flake8 plugins
# honour it, for metriclint's codes only; a noqa without codes (meant for a long line, say)
# silences no contradiction.
_NOQA = re.compile(r"(?<![\w-])noqa:[ \t]*((?:[A-Za-z]+[0-9]+[, \t]*)+)", re.IGNORECASE)
_OWN = re.compile(r"ML[0-9]+")
MARK = b"metriclint:"  # a file without it holds no directive: its comments need not be looked at
_CLOSERS = ("-->", "*/")  # what ends a Markdown or a block comment is not part of the reason


@dataclass(frozen=True, slots=True)
class Directive:
    codes: tuple[str, ...]
    file_wide: bool
    start: int  # where the directive begins in the comment text: the text before it is prose
    reason: str
    kind: str = "ignore"  # as written: ignore, ignore-file or noqa (what ML010 calls it)


def directive(comment: str) -> Directive | None:
    """The directive in a comment's text, if any; the text may start with the comment's opening
    marker, and its closing one is not part of the reason."""
    match = _DIRECTIVE.search(comment)
    if match is None:
        return _noqa(comment)
    codes = tuple(dict.fromkeys(code.strip().upper() for code in (match.group(2) or "").split(",") if code.strip()))
    reason = comment[match.end() :].strip()
    for closer in _CLOSERS:
        reason = reason.removesuffix(closer).strip()
    return Directive(codes, match.group(1) == "ignore-file", match.start(), reason, match.group(1))


def _noqa(comment: str) -> Directive | None:
    """A `noqa: CODES` naming one of metriclint's codes; other tools' codes are theirs."""
    match = _NOQA.search(comment)
    if match is None:
        return None
    codes = tuple(dict.fromkeys(code.upper() for code in re.split(r"[, \t]+", match.group(1)) if _OWN.fullmatch(code.upper())))
    return Directive(codes, False, match.start(), comment[match.end() :].strip(), "noqa") if codes else None


def suppression(found: Directive, span: Span, lines: Iterable[int]) -> Suppression:
    """The suppression a source records for a directive; `lines` are those it covers."""
    return Suppression(span, found.codes, frozenset(lines), found.file_wide, found.kind)
