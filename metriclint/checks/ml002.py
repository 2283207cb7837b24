"""ML002 source-contradiction: two texts state different values for a facet that the registry
does not settle."""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations, product
from typing import Iterator

from metriclint.base import keys
from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.statements import allows, by_statement
from metriclint.model import Claim, Finding, Related, Severity, Span


def source_contradictions(corpus: Corpus) -> Iterator[Finding]:
    registry = corpus.registry
    unsettled = [c for c in corpus.claims if registry is None or registry.setting(c.metric, c.facet) is None]
    for (metric_a, span_a, a), (metric_b, span_b, b) in _comparable_pairs(by_statement(tuple(unsettled))):
        if span_a.path == span_b.path and metric_a != metric_b and _tooltip(a) and _tooltip(b):
            continue  # one table gives two keys two texts by design, not by contradiction
        left = next((c for c in a if not allows(b, c.value) and not c.negated), None)
        right = next((c for c in b if not allows(a, c.value) and not c.negated), None)
        if left is None or right is None:
            continue
        facet = left.facet
        message = (
            f'{metric_a}: {left.source} says {facet}={left.value} ("{left.phrase}"); '
            f'{right.source} at {right.span.path}:{right.span.line} says {right.value} ("{right.phrase}")'
        )
        yield ML002.finding(
            left.span, message, metric=metric_a, facet=facet, found=left.value, expected=right.value,
            source=left.source, related=(Related(right.span, right.phrase),), phrase=left.phrase,
        )


Statement = tuple[str, Span, list[Claim]]  # metric, the text's span, its claims on one facet


def _comparable_pairs(groups: dict[tuple[str, str, Span], list[Claim]]) -> Iterator[tuple[Statement, Statement]]:
    """Pairs of different texts about the same metric and facet, the earlier text first.

    Metric names are compared with each other (templates can name the same series), not every
    text with every other, so the work grows with the pairs that matter, not with the square
    of all the texts in a large tree.
    """
    by_facet: dict[str, dict[str, list[Statement]]] = defaultdict(lambda: defaultdict(list))
    for (metric, facet, statement), claims in groups.items():
        by_facet[facet][metric].append((metric, statement, claims))
    for facet in sorted(by_facet):
        metrics = sorted(by_facet[facet])
        for i, metric_a in enumerate(metrics):
            for metric_b in metrics[i:]:
                if not keys.same_metric(metric_a, metric_b):
                    continue
                texts_a, texts_b = by_facet[facet][metric_a], by_facet[facet][metric_b]
                pairs = combinations(texts_a, 2) if metric_a == metric_b else product(texts_a, texts_b)
                for a, b in pairs:
                    if a[1] != b[1]:
                        yield (a, b) if (a[1], a[0]) < (b[1], b[0]) else (b, a)


def _tooltip(claims: list[Claim]) -> bool:
    return claims[0].source == "tooltip"


ML002 = Rule(
    "ML002",
    "source-contradiction",
    Severity.ERROR,
    "Two texts state different values for a facet that the registry does not settle.",
    "When a docstring and a dashboard disagree, at least one of them is wrong, and nothing "
    "tells the reader which.",
    "Decide which is right, fix the other, and record the answer in the registry so the "
    "next change is checked against it.",
    source_contradictions,
    good=(
        Example({"train.py": 'def log(norm):\n    """Args:\n        norm: Norm before clipping.\n    """\n    m = {"train/grad_norm": norm}  # pre-clip\n'}),
    ),
    bad=(
        Example(
            {"train.py": 'def log(norm):\n    """Args:\n        norm: Norm after clipping.\n    """\n    m = {"train/grad_norm": norm}  # pre-clip\n'},
            None,
            ("ML002 train.py:3",),
        ),
    ),
)
