"""ML013 unregistered-logged-key: a key the run logged that no registry entry covers. Reported
by the live check (metriclint/live/judge.py)."""

from __future__ import annotations

from metriclint.checks.live_snippets import LIVE, LOGGED, REGISTRY, run
from metriclint.checks.rule import Example, Rule
from metriclint.model import Severity

ML013 = Rule(
    code="ML013",
    name="unregistered-logged-key",
    severity=Severity.WARNING,
    kind="gap",
    summary="A key the run logged that no registry key, template or alias covers (`metriclint live-check`).",
    why="Whatever the run logs beyond the registry is unchecked: nothing says what it means, and a typo in a "
    "key goes unnoticed (a dashboard shows an empty panel for the registered spelling).",
    fix="Register the key (or a template or alias covering it), or stop logging it.",
    check=None,
    good=(Example({"train.py": LOGGED.format(wording="before clipping"), "run/log.jsonl": run(0.5)}, REGISTRY, command=LIVE),),
    bad=(
        Example(
            {"train.py": LOGGED.format(wording="before clipping"), "run/log.jsonl": run(0.5, extra='"train/grad_nrom": 0.5')},
            REGISTRY,
            ("ML013 run/log.jsonl:1",),
            command=LIVE,
        ),
    ),
    by_comment=False,
    command="live-check",  # it reports a place in a run file
)
