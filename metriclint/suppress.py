"""Suppression comments: `metriclint: ignore[ML001, ML002] reason` and `ignore-file[...]`.

Each source finds comments with its own parser and hands the comment's text to `directive`;
only the directive's small grammar is read here. The pipeline then drops the findings a
suppression covers and reports each code that covered nothing (ML010), so stale suppressions
do not pile up.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable

from metriclint.checks import ML010, RULES
from metriclint.model import Finding, Span, Suppression

# After the comment marker, or after an earlier remark: `# pre-clip  # metriclint: ignore[ML001]`.
_DIRECTIVE = re.compile(r"(?<![\w-])metriclint:\s*(ignore-file|ignore)\[([^\]]*)\]")


@dataclass(frozen=True, slots=True)
class Directive:
    codes: tuple[str, ...]
    file_wide: bool
    start: int  # where the directive begins in the comment text: the text before it is prose
    reason: str


def directive(comment: str) -> Directive | None:
    """The directive in a comment's text (without its `#`, `//` or `<!--` marker), if any."""
    match = _DIRECTIVE.search(comment)
    if match is None:
        return None
    codes = tuple(dict.fromkeys(code.strip().upper() for code in match.group(2).split(",") if code.strip()))
    reason = comment[match.end():].strip().removesuffix("-->").strip()
    return Directive(codes, match.group(1) == "ignore-file", match.start(), reason)


def suppression(found: Directive, span: Span, lines: Iterable[int]) -> Suppression:
    """The suppression a source records for a directive; `lines` are those it covers."""
    return Suppression(span, found.codes, frozenset(lines), found.file_wide)


def apply(
    findings: Iterable[Finding], suppressions: Iterable[Suppression], active: Callable[[str, str], bool]
) -> tuple[list[Finding], list[Finding]]:
    """The findings no suppression covers, and an ML010 for each code that covered nothing.

    `active(code, path)` tells whether a rule runs on a file: a suppression for a rule that is
    switched off there is not stale, just idle, and stays unreported.
    """
    by_path: dict[str, list[Suppression]] = defaultdict(list)
    for item in suppressions:
        by_path[item.span.path].append(item)
    used: set[tuple[Suppression, str]] = set()
    kept = []
    for finding in findings:
        covering = [s for s in by_path[finding.span.path] if finding.rule in s.codes and (s.file_wide or finding.span.line in s.lines)]
        used.update((s, finding.rule) for s in covering)
        if not covering:
            kept.append(finding)
    unused = [
        _unused(item, code)
        for items in by_path.values()
        for item in items
        for code in item.codes or ("",)
        if (item, code) not in used and (not code or active(code, item.span.path) or not _known(code))
    ]
    return kept, unused


def _known(code: str) -> bool:
    return any(rule.code == code for rule in RULES)


def _unused(item: Suppression, code: str) -> Finding:
    kind = "ignore-file" if item.file_wide else "ignore"
    if not code:
        message = f"metriclint: {kind}[] names no rule; name the codes to silence, or remove it"
    elif not _known(code):
        message = f"metriclint: {kind}[{code}] names an unknown rule; see `metriclint rules`"
    else:
        message = f"metriclint: {kind}[{code}] silences nothing here; remove it"
    return ML010.finding(item.span, message, phrase=f"{kind}[{code}]")
