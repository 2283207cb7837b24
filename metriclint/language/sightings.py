"""The inventory: every place that names a metric, resolved to the metrics it stands for.

Code contributes the keys it logs; docs and tooltips the names their tables and lists are
about; any other text the registry keys and aliases it spells out. ML004 and ML005 and the
audit all read this one list, so "logged or mentioned" means the same thing everywhere.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Iterable, Iterator

from metriclint.language.attribution import MetricIndex
from metriclint.model import KeyUse, Mention, Sighting, SourceKind, Span

# Sources whose subjects are always metric names (a dashboard's tooltip table): an unknown one
# still names a metric, which ML004 reports. Other sources say so per text (`names_metrics`).
NAMING_SOURCES = frozenset({SourceKind.TOOLTIP})


def ordered(found: Iterable[Sighting]) -> tuple[Sighting, ...]:
    return tuple(sorted(found, key=lambda s: (s.span, s.name)))


def code_sightings(uses: Iterable[KeyUse], index: MetricIndex, tests: frozenset[str] = frozenset()) -> list[Sighting]:
    """The keys the code logs; one logged by a test in `tests`, or never with a measurement,
    keeps its registry entry alive but is no metric a registry should know (ML004)."""
    found: list[Sighting] = []
    for use in uses:
        if not use.from_keyword or use.key in index.by_alias:
            incidental = not use.measured or use.span.path in tests
            found.append(Sighting(use.key, use.span, SourceKind.CODE, index.for_key(use.key), incidental=incidental, sink=use.sink))
    return found


def text_sightings(mentions: Iterable[Mention], index: MetricIndex) -> list[Sighting]:
    """The metrics texts name: by their subjects and the keys their values flow to, and the
    registry keys and aliases they write out."""
    found: list[Sighting] = []
    for mention in mentions:
        if mention.source == SourceKind.REGISTRY:
            continue
        if mention.flows_to or mention.subjects:  # most texts have neither: no span to work out
            found += _subject_sightings(mention, index)
        for start, end, metric in index.registered_in(mention.text):
            found.append(Sighting(mention.text[start:end], mention.span(start, end), mention.source, (metric,), passing=True))
    return found


def _subject_sightings(mention: Mention, index: MetricIndex) -> Iterator[Sighting]:
    """The keys a text's value flows to and the names it documents, sighted on the whole text."""
    whole = mention.span(0, len(mention.text))
    for key in mention.flows_to:
        yield Sighting(key, whole, mention.source, index.for_key(key), inferred=True)
    for name in mention.subjects:
        sure = mention.names_metrics or mention.source in NAMING_SOURCES
        metrics = index.for_name(name) or ((name,) if sure else ())
        if metrics:
            yield Sighting(name, whole, mention.source, metrics, named=sure)


def names_a_metric(sighting: Sighting) -> bool:
    """Whether this sighting is a name a registry should know: a key the code outside the tests
    logs a measurement under, or a docs subject."""
    return (sighting.source == SourceKind.CODE and not sighting.incidental) or sighting.named


def naming(names: AbstractSet[str], mentions: Iterable[Mention]) -> frozenset[Span]:
    """The texts that spell out one of `names` (a flag's name: `track_slots` or `--track-slots`,
    underscore and hyphen alike), as whole words."""
    if not names:
        return frozenset()
    pattern = re.compile("|".join(r"(?<!\w)" + re.escape(n).replace("_", "[-_]") + r"(?![\w-])" for n in sorted(names)))
    return frozenset(m.span(0, len(m.text)) for m in mentions if pattern.search(m.text))
