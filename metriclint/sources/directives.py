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
MARK = b"metriclint:"  # a file without it holds no directive: its comments need not be looked at
_CLOSERS = ("-->", "*/")  # what ends a Markdown or a block comment is not part of the reason


@dataclass(frozen=True, slots=True)
class Directive:
    codes: tuple[str, ...]
    file_wide: bool
    start: int  # where the directive begins in the comment text: the text before it is prose
    reason: str


def directive(comment: str) -> Directive | None:
    """The directive in a comment's text, if any; the text may start with the comment's opening
    marker, and its closing one is not part of the reason."""
    match = _DIRECTIVE.search(comment)
    if match is None:
        return None
    codes = tuple(dict.fromkeys(code.strip().upper() for code in (match.group(2) or "").split(",") if code.strip()))
    reason = comment[match.end():].strip()
    for closer in _CLOSERS:
        reason = reason.removesuffix(closer).strip()
    return Directive(codes, match.group(1) == "ignore-file", match.start(), reason)


def suppression(found: Directive, span: Span, lines: Iterable[int]) -> Suppression:
    """The suppression a source records for a directive; `lines` are those it covers."""
    return Suppression(span, found.codes, frozenset(lines), found.file_wide)
