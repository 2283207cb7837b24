"""ML010 unused-suppression: a `metriclint: ignore[...]` comment that silences nothing.

Its findings are made where suppressions are applied (`apply_suppressions`, which filters.py
calls after every other rule has run), since what a comment silences is known only then."""

from __future__ import annotations

from collections import defaultdict
from textwrap import dedent
from typing import Callable, Iterable, Sequence

from metriclint.checks.rule import Example, Rule
from metriclint.checks.snippets import REGISTRY
from metriclint.model import Finding, Severity, Suppression

_DOC = dedent('''\
    def log(grad_norm):
        """Args:
            grad_norm: Norm {value} clipping.
        """  {comment}
''')

ML010 = Rule(
    code="ML010",
    name="unused-suppression",
    severity=Severity.WARNING,
    kind="hygiene",
    summary="A `metriclint: ignore[...]` comment silences nothing.",
    why="A suppression outlives the finding it was written for; left in place, it would silence "
    "the next real contradiction on that line without anyone deciding to.",
    fix="Remove the stale code from the comment, or the whole comment when no code is left.",
    check=None,  # apply_suppressions reports it, after every other rule has run
    good=(
        Example(
            {"train.py": _DOC.format(value="after", comment="# metriclint: ignore[ML001] legacy wording")},
            REGISTRY,
        ),
    ),
    bad=(
        Example(
            {"train.py": _DOC.format(value="before", comment="# metriclint: ignore[ML001]")},
            REGISTRY,
            ("ML010 train.py:4",),
        ),
    ),
    by_comment=False,  # it reports the comments themselves
)


def apply_suppressions(
    findings: Iterable[Finding],
    suppressions: Iterable[Suppression],
    active: Callable[[str, str], bool],
    rules: Sequence[Rule],
    command: str = "check",
) -> tuple[list[Finding], list[Finding]]:
    """The findings no suppression covers, and an ML010 for each code that covered nothing.

    `active(code, path)` tells whether a rule runs on a file: a suppression for a rule that is
    switched off there is not stale, just idle, and stays unreported; so is one for a rule
    another command reports (`live-check`'s, in a `check` run, and the other way round).
    `rules`: every rule, whose codes a suppression may name.
    """
    known = frozenset(rule.code for rule in rules)
    reported_elsewhere = {rule.code for rule in rules if rule.command != command}
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
        _unused(item, code, known)
        for items in by_path.values()
        for item in items
        for code in item.codes or ("",)
        if (item, code) not in used and (not code or active(code, item.span.path) or code not in known) and code not in reported_elsewhere
    ]
    return kept, unused


def _unused(item: Suppression, code: str, known: frozenset[str]) -> Finding:
    kind = "ignore-file" if item.file_wide else item.kind
    written = f"noqa: {code}" if kind == "noqa" else f"metriclint: {kind}[{code}]"
    if not code:
        message = f"metriclint: {kind}[] names no rule; name the codes to silence, or remove it"
    elif code not in known:
        message = f"{written} names an unknown rule; see `metriclint rules`"
    else:
        message = f"{written} silences nothing here; remove it"
    return ML010.finding(item.span, message, phrase=f"{kind}[{code}]")
