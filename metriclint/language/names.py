"""Names as claims: what a logged key's last segment, and each variable, attribute and parameter
its value went by, say about the metric (the parts are in knowledge/names.py).

A name is the weakest statement there is, so its claims are kept apart from the texts' claims:
ML007 holds them against the code and the registry, and ML002 holds a text against a logged
key's own name only where the name states a facet names are sure of (rules/names.yaml
`against_texts`). A name in a test file states nothing, as a test's texts do not.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from metriclint.base import keys
from metriclint.knowledge.names import NamePart, stated
from metriclint.language.attribution import MetricIndex
from metriclint.model import KeyUse, NameClaim


def name_claims(
    uses: Iterable[KeyUse],
    index: MetricIndex,
    tests: frozenset[str] = frozenset(),
    extra: tuple[NamePart, ...] = (),
) -> tuple[NameClaim, ...]:
    """`extra`: the parts a registry's own facets give names (knowledge/names.py custom_parts)."""
    found: dict[NameClaim, None] = {}
    for use in uses:
        if use.from_keyword or use.span.path in tests:
            continue
        for metric in index.for_key(use.key):
            found.update((claim, None) for claim in _claims(use, metric, extra))
    return tuple(found)


def _claims(use: KeyUse, metric: str, extra: tuple[NamePart, ...]) -> Iterator[NameClaim]:
    named = ((keys.last_segment(use.key), use.span, True), *((name, span, False) for name, span in use.through))
    for name, span, own in named:
        for said in stated(name, extra):
            part = said.part
            yield NameClaim(
                metric=metric,
                facet=part.facet,
                value=part.value,
                also=part.also,
                name=name,
                part=said.phrase,
                span=span,
                own=own,
                outright=said.outright,
            )
