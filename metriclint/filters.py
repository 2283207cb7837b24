"""Which findings are reported: the one place that decides, after every check has run.

In order: rule selection (`select`, `ignore`, `per-file-ignores`, `severity`), suppression
comments (each code that covered nothing is reported as ML010, so stale suppressions do not
pile up), the checked paths of a project read whole, the pre-commit scope (`--changed-only`),
then the baseline.
"""

from __future__ import annotations

from pathlib import Path

from metriclint import baseline
from metriclint.checks import RULES
from metriclint.checks.ml010 import apply_suppressions
from metriclint.model import Finding, Suppression
from metriclint.settings import Config


def reported(findings: list[Finding], config: Config, suppressions: list[Suppression], command: str = "check") -> list[Finding]:
    """Rule selection, suppression comments, the pre-commit scope, then the baseline; `command`
    is the one reporting (a suppression of a rule another command reports is left alone)."""
    selection = config.selection
    kept, unused = apply_suppressions(selection.apply(findings), suppressions, selection.active, RULES, command)
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
