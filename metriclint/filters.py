"""Which findings are reported: the one place that decides, after every check has run.

In order: rule selection (`select`, `ignore`, `per-file-ignores`, `severity`), suppression
comments (each code that covered nothing is reported as ML010, so stale suppressions do not
pile up), the checked paths of a project read whole, the pre-commit scope (`--changed-only`),
then the baseline.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable

from metriclint import baseline
from metriclint.checks import ML010, RULES
from metriclint.model import Finding, Suppression
from metriclint.settings import Config


def reported(findings: list[Finding], config: Config, suppressions: list[Suppression], command: str = "check") -> list[Finding]:
    """Rule selection, suppression comments, the pre-commit scope, then the baseline; `command`
    is the one reporting (a suppression of a rule another command reports is left alone)."""
    selection = config.selection
    kept, unused = apply(selection.apply(findings), suppressions, selection.active, command)
    kept += selection.apply(unused)
    if config.scope is not None:
        kept = [f for f in kept if _inside(f.span.path, config.scope)]
    if config.changed is not None:
        changed = set(config.changed)
        kept = [f for f in kept if f.span.path in changed or any(r.span.path in changed for r in f.related)]
    if config.baseline is not None:
        kept = baseline.hide(config.baseline, kept)
    return kept


def _inside(shown: str, scope: tuple[Path, ...]) -> bool:
    """Whether the file shown as `shown` is one of `scope` or in one of its folders."""
    where = Path(shown).resolve()
    return any(where.is_relative_to(p.resolve()) for p in scope)


def apply(
    findings: Iterable[Finding], suppressions: Iterable[Suppression], active: Callable[[str, str], bool], command: str = "check",
) -> tuple[list[Finding], list[Finding]]:
    """The findings no suppression covers, and an ML010 for each code that covered nothing.

    `active(code, path)` tells whether a rule runs on a file: a suppression for a rule that is
    switched off there is not stale, just idle, and stays unreported; so is one for a rule
    another command reports (`live-check`'s, in a `check` run, and the other way round).
    """
    reported_elsewhere = {rule.code for rule in RULES if rule.command != command}
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
        if (item, code) not in used and (not code or active(code, item.span.path) or not _known(code)) and code not in reported_elsewhere
    ]
    return kept, unused


def _known(code: str) -> bool:
    return any(rule.code == code for rule in RULES)


def _unused(item: Suppression, code: str) -> Finding:
    kind = "ignore-file" if item.file_wide else item.kind
    written = f"noqa: {code}" if kind == "noqa" else f"metriclint: {kind}[{code}]"
    if not code:
        message = f"metriclint: {kind}[] names no rule; name the codes to silence, or remove it"
    elif not _known(code):
        message = f"{written} names an unknown rule; see `metriclint rules`"
    else:
        message = f"{written} silences nothing here; remove it"
    return ML010.finding(item.span, message, phrase=f"{kind}[{code}]")
