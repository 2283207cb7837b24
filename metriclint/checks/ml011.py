"""ML011 run-contradiction: the values a run logged disprove what a text or the registry says
a metric is. Its findings are made by the live check (metriclint/live/judge.py)."""

from __future__ import annotations

from metriclint.checks.live_snippets import CONFIG, LIVE, LOGGED, REGISTRY, run
from metriclint.checks.rule import Example, Rule
from metriclint.model import Severity

ML011 = Rule(
    code="ML011",
    name="run-contradiction",
    severity=Severity.ERROR,
    kind="contradiction",
    summary="The values a run logged disprove what a text or the registry says a metric is (`metriclint live-check`).",
    why="A statement the numbers contradict is wrong however consistent the words are: a norm said to be after "
    "clipping that exceeds the clip threshold, a fraction of 31, a KL estimate below zero. Anyone reading "
    "the dashboard through that statement misreads the run.",
    fix="Correct the text or the registry to what the values show (the message says which values and where), "
    "or, if the run is not the project's current code, check against a run that is.",
    check=None,  # the live check reports it (metriclint/live/)
    good=(
        Example(
            {"train.py": LOGGED.format(wording="after clipping"), "run/log.jsonl": run(0.4, 1.0), "run/config.yaml": CONFIG},
            REGISTRY,
            command=LIVE,
        ),
    ),
    bad=(
        Example(
            {"train.py": LOGGED.format(wording="after clipping"), "run/log.jsonl": run(0.4, 2.5), "run/config.yaml": CONFIG},
            REGISTRY,
            ("ML011 train.py:3",),
            command=LIVE,
        ),
    ),
    command="live-check",
)
