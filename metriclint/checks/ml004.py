"""ML004 unregistered-metric: a name the code logs, or a docs page or tooltip names, that the
registry does not cover."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.snippets import REGISTRY, WANDB
from metriclint.language.sightings import names_a_metric
from metriclint.model import Finding, Related, Severity, Sighting, SourceKind

_SEEN_AS = {SourceKind.CODE: "logged"}
_MORE_PLACES = 3  # other places quoted in `related`; the message gives the full count


def _seen(sighting: Sighting) -> str:
    return f"{_SEEN_AS.get(sighting.source, sighting.source + ' names it')} as '{sighting.name}'"


def unregistered_metrics(corpus: Corpus) -> Iterator[Finding]:
    registry = corpus.registry
    if registry is None:
        return
    places: dict[tuple[str, ...], list[Sighting]] = defaultdict(list)
    lines: set[tuple[tuple[str, ...], str, int]] = set()  # one place per line: a row's cells are one
    for sighting in corpus.sightings:
        if names_a_metric(sighting) and not any(m in registry.metrics for m in sighting.metrics):
            metrics = sighting.metrics or (sighting.name,)
            if (metrics, sighting.span.path, sighting.span.line) not in lines:
                lines.add((metrics, sighting.span.path, sighting.span.line))
                places[metrics].append(sighting)
    for metrics, group in places.items():
        group.sort(key=lambda s: (s.source != SourceKind.CODE, s.span))  # report where the code logs it
        first, others = group[0], group[1:]
        more = f" (and {len(others)} more place{'s' if len(others) > 1 else ''})" if others else ""
        message = f"{metrics[0]}: {_seen(first)}{more}, but no registry key, template or alias covers it; add it to {registry.path}"
        related = tuple(Related(s.span, _seen(s)) for s in others[:_MORE_PLACES])
        yield ML004.finding(first.span, message, metric=metrics[0], source=first.source, related=related, phrase=first.name)


ML004 = Rule(
    code="ML004",
    name="unregistered-metric",
    severity=Severity.WARNING,
    kind="gap",
    summary="A key the code logs, or a docs page or tooltip names, that no registry key, template or alias covers.",
    why="Nothing is checked for a metric the registry does not know: its texts can contradict each "
    "other on any facet the registry would have settled, and readers find no one definition.",
    fix="Add the key (or a `{name}` template covering it) to the registry with a description and "
    "its semantics, or an alias if it is another name of a registered metric.",
    check=unregistered_metrics,
    good=(
        Example({"train.py": WANDB}, REGISTRY),
        Example({"train.py": WANDB + 'wandb.log({f"eval/{task}/accuracy": 0.5})\n'}, REGISTRY + "  eval/{task}/accuracy: {}\n"),
        Example({"docs/metrics.md": "| Metric | Meaning |\n|---|---|\n| `grad_norm` | norm before clipping |\n"}, REGISTRY),
        # A list of options is not an inventory: unknown names count only where the page is about metrics.
        Example({"train.py": WANDB, "docs/flags.md": "## Options\n\n- `timeout`: seconds to wait\n"}, REGISTRY),
    ),
    bad=(
        Example({"train.py": WANDB + 'wandb.log({"train/loss": 0.1})\n'}, REGISTRY, ("ML004 train.py:3",)),
        Example(
            {"train.py": WANDB, "docs/metrics.md": "## Metrics\n\n- `train/grad_norm`: norm before clipping\n- `eval/accuracy`: solved\n"},
            REGISTRY,
            ("ML004 docs/metrics.md:4",),
        ),
    ),
)
