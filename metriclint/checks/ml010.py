"""ML010 unused-suppression: a `metriclint: ignore[...]` comment that silences nothing.

Its findings are made where suppressions are applied (filters.py), after every other rule."""

from __future__ import annotations

from metriclint.checks.rule import Example, Rule
from metriclint.checks.snippets import REGISTRY
from metriclint.model import Severity

_DOC = 'def log(grad_norm):\n    """Args:\n        grad_norm: Norm {value} clipping.\n    """  {comment}\n'

ML010 = Rule(
    "ML010",
    "unused-suppression",
    Severity.WARNING,
    "A `metriclint: ignore[...]` comment silences nothing.",
    "A suppression outlives the finding it was written for; left in place, it would silence "
    "the next real contradiction on that line without anyone deciding to.",
    "Remove the stale code from the comment, or the whole comment when no code is left.",
    None,  # metriclint.suppress reports it, after every other rule has run
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
