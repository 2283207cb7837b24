"""What one file's texts state and name under a run's metric index: its view.

A view depends only on the file's texts, the index, whether the file is a test, and the
placeholders' flags, so a warm run takes an unchanged file's from the last run
(extract/kept.py) instead of reading its texts again (engine.judge).
"""

from __future__ import annotations

from typing import AbstractSet, Sequence

from metriclint.knowledge.registry import Registry
from metriclint.language.attribution import MetricIndex, attribute
from metriclint.language.sightings import naming, text_sightings
from metriclint.model import Claim, FileView, Mention, ReadFailure, Reading, Span


def view(texts: Sequence[tuple[Mention, Sequence[Reading]]], index: MetricIndex, test: bool, flags: AbstractSet[str]) -> FileView:
    """What the texts of one file (or one text that is no file's) state: the claims (or an
    ML900, so that a bug met in one file's texts costs that file, not the run), the metrics
    they name, and which of them name one of `flags`. A test's texts state nothing about a
    metric (settings.DEFAULT_TESTS)."""
    if not texts:
        return FileView()
    mentions = [m for m, _ in texts]
    claims: tuple[Claim, ...] = ()
    failure = None
    if not test:
        try:
            claims = tuple(claim for m, said in texts for claim in attribute(m, said, index))
        except Exception as error:  # noqa: BLE001 - one file's odd text must not end the run
            message = f"internal error while reading this file's texts: {type(error).__name__}: {error}; please report it"
            failure = ReadFailure(Span(mentions[0].path, 1, 1, 1, 1), message)
    seen = tuple(text_sightings(mentions, index))
    stated = {c.statement for c in claims} | {s.span for s in seen if not s.passing}
    # Most files state nothing: no span of each text to work out then.
    statements = tuple(m for m in mentions if m.span(0, len(m.text)) in stated) if stated else ()
    return FileView(claims, seen, statements, tuple(sorted(naming(flags, mentions))), failure)


def said_key(text: Mention) -> str:
    """What the readings of a text that is no file's are kept by: its words, and where it reads
    a unit's symbol (an OpenTelemetry instrument's `unit="s"`), since "s" alone states nothing."""
    return text.text if not text.values else f"{text.text}\0{text.values}"


def other_texts(tooltips: Sequence[Mention], registry: Registry | None) -> tuple[Mention, ...]:
    """The texts that are no file's own: the tooltips the dashboards show for known keys, and
    the registry's descriptions."""
    described = [entry.description for entry in registry.metrics.values() if entry.description] if registry is not None else []
    return (*tooltips, *described)
