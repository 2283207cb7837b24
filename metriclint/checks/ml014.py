"""ML014 undetermined-by-run: a statement about a metric that the run's values neither prove
nor disprove, with the reason. Off by default: `--select ML014` shows them."""

from __future__ import annotations

from metriclint.checks.live_snippets import CONFIG, LIVE, LOGGED, REGISTRY, run
from metriclint.checks.rule import Example, Rule
from metriclint.model import Severity

ML014 = Rule(
    code="ML014",
    name="undetermined-by-run",
    severity=Severity.NOTE,
    kind="hygiene",
    summary="A statement the run's values leave undetermined, with the reason (`metriclint live-check --select ML014`).",
    why="A live check that says nothing about a statement is not an endorsement: a missing fact (no max_grad_norm), "
    "values kept in float32, or a run with one rank leave it open. The note says what would settle it.",
    fix="Supply what the note asks for (`--fact max_grad_norm=1.0`, a run with several ranks), or accept the statement as unchecked.",
    check=None,
    good=(
        Example(
            {"train.py": LOGGED.format(wording="after clipping"), "run/log.jsonl": run(0.5), "run/config.yaml": CONFIG},
            REGISTRY,
            command=(*LIVE, "--select", "ML014"),
        ),
    ),
    bad=(
        Example(
            {"train.py": LOGGED.format(wording="after clipping"), "run/log.jsonl": run(0.5)},
            REGISTRY,
            ("ML014 train.py:3",),
            command=(*LIVE, "--select", "ML014"),
        ),
    ),
    default=False,
    command="live-check",
)
