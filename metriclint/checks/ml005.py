"""ML005 stale-registry-entry: a registry metric that no checked file logs or mentions."""

from __future__ import annotations

from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.snippets import REGISTRY, TOOLTIP_CONFIG, WANDB
from metriclint.model import Finding, Related, Severity, SourceKind


def stale_registry_entries(corpus: Corpus) -> Iterator[Finding]:
    if corpus.registry is None:
        return
    # A tooltip pattern reaches registry keys too: only a written name shows the metric exists.
    seen = {metric for s in corpus.sightings if not s.inferred for metric in s.metrics}
    for key, entry in corpus.registry.metrics.items():
        if key not in seen:
            message = f"{key}: registered, but no checked file logs or mentions it; remove it or correct its key"
            yield ML005.finding(
                entry.span, message, metric=key, source=SourceKind.REGISTRY, related=(Related(entry.span, key),), phrase=key
            )


ML005 = Rule(
    code="ML005",
    name="stale-registry-entry",
    severity=Severity.WARNING,
    kind="gap",
    summary="A registry metric that no checked file logs or mentions.",
    why="A renamed or removed metric leaves its entry behind: the registry then describes a metric "
    "nobody can see, and the real one goes unchecked.",
    fix="Remove the entry, or correct its key to the one the code logs now (keep the old one as an "
    "alias if dashboards still use it). Run the check on the whole project: a partial run sees "
    "only part of the inventory.",
    check=stale_registry_entries,
    good=(
        Example({"train.py": WANDB}, REGISTRY),
        Example({"docs/metrics.md": "## `grad_norm`\n\nThe norm before clipping.\n"}, REGISTRY),
    ),
    bad=(
        Example({"train.py": 'wandb.log({"train/gradient_norm": 1.0})\n'}, REGISTRY, ("ML005 metrics.yaml:3",)),
        # A tooltip pattern that would match the key if it were logged does not mention it.
        Example(
            {
                "pyproject.toml": TOOLTIP_CONFIG,
                "ui/metrics.js": 'export const DESCRIPTIONS = [\n  ["grad_norm", "norm before clipping"],\n];\n',
            },
            REGISTRY,
            ("ML005 metrics.yaml:3",),
        ),
    ),
    by_comment=False,  # it reports a registry line, and the registry's comments are not read
)
