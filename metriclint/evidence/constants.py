"""Metrics named by a constant of another module, with their help texts.

An exporter often keeps its metrics' names in one module and creates each metric elsewhere,
`Gauge(series.LOSS_LATEST, "Latest loss")`: the file that holds the help text cannot know the
key. Each file gives its own top-level names bound to one string (`Extraction.constants`) and
the help texts it could not place (`Extraction.constant_help`); here each constant is looked up
among the project's definitions as its import path spells it (evidence/dotted.py: a path that
is no definition's own reaches the one whose name ends in it). A constant defined outside the
project, or that two definitions could be, names nothing: a guessed key would give its help
text to another metric.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from metriclint.base import keys
from metriclint.evidence.dotted import Dotted
from metriclint.model import KeyUse, TooltipEntry, TooltipTable
from metriclint.sources import Extraction


def constant_keys(extractions: Iterable[Extraction]) -> tuple[tuple[KeyUse, ...], tuple[TooltipTable, ...]]:
    """The key each placeable help text is for, as a key the code defines where the metric is
    created, and each file's help texts as one table, as a literal name gives them."""
    extractions = list(extractions)
    resolve = Dotted({name: value for e in extractions for name, value in e.constants}).resolve
    uses: list[KeyUse] = []
    entries: dict[str, list[TooltipEntry]] = defaultdict(list)
    for extraction in extractions:
        for help_text in extraction.constant_help:
            name = resolve(help_text.constant)
            key = keys.prometheus_name(help_text.prefix, name, help_text.unit) if name is not None else None
            if key is None:
                continue
            entry = help_text.entry
            uses.append(KeyUse(key, entry.span))
            entries[entry.span.path].append(TooltipEntry(key, entry.text, entry.span, entry.order))
    tables = tuple(TooltipTable(path, "prometheus", "prometheus_client", tuple(found), shape=True) for path, found in entries.items())
    return tuple(uses), tables
