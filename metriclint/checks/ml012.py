"""ML012 unlogged-registry-entry: a registry metric that the run never logged. Reported by the
live check (metriclint/live/judge.py)."""

from __future__ import annotations

from metriclint.checks.live_snippets import LIVE, LOGGED, TWO_METRICS, run
from metriclint.checks.rule import Example, Rule
from metriclint.model import Severity

ML012 = Rule(
    code="ML012",
    name="unlogged-registry-entry",
    severity=Severity.WARNING,
    kind="gap",
    summary="A registered metric that the run never logged (`metriclint live-check`).",
    why="The registry describes a metric the run does not have: it was renamed, is logged under another key, or "
    "only by a path this run did not take. Dashboards and checks built on the entry see nothing.",
    fix="Correct the entry's key or aliases to what the run logs, or check a run that takes the path that logs it.",
    check=None,
    good=(
        Example(
            {"train.py": LOGGED.format(wording="before clipping"), "run/log.jsonl": run(0.5, extra='"eval/loss": 2.0')},
            TWO_METRICS,
            command=LIVE,
        ),
    ),
    bad=(
        Example(
            {"train.py": LOGGED.format(wording="before clipping"), "run/log.jsonl": run(0.5)},
            TWO_METRICS,
            ("ML012 metrics.yaml:5",),
            command=LIVE,
        ),
    ),
    by_comment=False,
    command="live-check",  # it reports a registry line, and the registry's comments are not read
)
