"""ML003 tooltip-mismatch: the tooltip a dashboard shows for a metric was written for another."""

from __future__ import annotations

from textwrap import dedent
from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.snippets import TOOLTIP_CONFIG
from metriclint.language.tooltips import advice
from metriclint.model import Finding, Related, Severity, SourceKind


def tooltip_mismatches(corpus: Corpus) -> Iterator[Finding]:
    for item in corpus.mismatches:
        entry = item.entry
        message = (
            f"{item.key} shows the tooltip written for {item.owner} (entry '{entry.pattern}', {item.binding.match} match); {advice(item)}"
        )
        yield ML003.finding(
            entry.span,
            message,
            metric=item.key,
            source=SourceKind.TOOLTIP,
            phrase=entry.pattern,
            related=(Related(item.owner_span, item.owner), Related(entry.text.span(0, len(entry.text.text)), entry.text.text)),
        )


_TABLE = """// Hover texts, matched by substring against the key after its category.
export const DESCRIPTIONS = [
  ["value", "value-head estimate"],
  ["value_loss", "critic regression loss"],
];
"""
_LOGGED = 'def log(tracker, v, loss):\n    tracker.log({"train/value": v, "train/value_loss": loss})\n'

ML003 = Rule(
    code="ML003",
    name="tooltip-mismatch",
    severity=Severity.ERROR,
    kind="contradiction",
    summary="The tooltip a dashboard shows for a metric was written for another metric.",
    why="Pattern tables match loosely: with first-substring matching, `value` listed before "
    "`value_loss` gives `train/value_loss` the text written for `train/value`, and the reader "
    "of that chart is told what another chart means.",
    fix="Add a more specific entry for the key (before the generic one when the first match "
    "wins), or make the generic entry's text true of every key it reaches.",
    check=tooltip_mismatches,
    good=(
        Example(
            {
                "pyproject.toml": TOOLTIP_CONFIG,
                "train.py": _LOGGED,
                "ui/metrics.js": dedent("""\
                export const DESCRIPTIONS = [
                  ["value_loss", "critic regression loss"],
                  ["value", "value-head estimate"],
                ];
            """),
            }
        ),
    ),
    bad=(Example({"pyproject.toml": TOOLTIP_CONFIG, "train.py": _LOGGED, "ui/metrics.js": _TABLE}, None, ("ML003 ui/metrics.js:3",)),),
)
