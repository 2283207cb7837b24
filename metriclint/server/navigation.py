"""From a place in a file to the metric named there, and from a metric to what is said about
it: the hover (the `explain-metric` view), its registry entry, and every place that names it.

The places come from the run itself: the sightings (every logged key, docs and tooltip
subject, alias in a text; language/sightings.py) and the registry's keys, so the editor sees
the same names the checks do.
"""

from __future__ import annotations

from pathlib import Path

from metriclint.engine import Analysis
from metriclint.model import Span
from metriclint.report import audit
from metriclint.report.metric import describe
from metriclint.server.locations import contains


def metric_at(analysis: Analysis, shown: str, line: int, column: int, word: str | None = None) -> str | None:
    """The metric named at a position: a registry key, a name a sighting resolved, the metric
    a text there states something about, or the metric of the name `word` under the cursor."""
    registry = analysis.registry
    if registry is not None and registry.path == shown:
        for key, entry in registry.metrics.items():
            if contains(entry.span, line, column):
                return key
    for sighting in analysis.sightings:
        if sighting.span.path == shown and contains(sighting.span, line, column):
            return sighting.metrics[0] if sighting.metrics else sighting.name
    for claim in analysis.claims:  # a text about one metric speaks for it throughout
        if claim.statement.path == shown and contains(claim.statement, line, column):
            return claim.metric
    return _named(analysis, shown, word) if word else None


def _named(analysis: Analysis, shown: str, word: str) -> str | None:
    """The metric a name in the file stands for: the metric its documentation in the file
    speaks for (an `Args:` entry's name, and the parameter it documents, are that text's
    subject), else the metric the name is an alias or key of. A name no text of the file
    documents is left alone, so that a word that merely looks like a metric's last segment
    does not show it."""
    documented = [m for m in analysis.mentions if m.path == shown and word in m.subjects]
    if not documented:
        return None
    wholes = {m.span(0, len(m.text)) for m in documented}
    spoken = [metric for s in analysis.sightings if s.span in wholes for metric in s.metrics]
    found = spoken or list(analysis.collection.index.for_name(word))
    return found[0] if found else None


def word_at(text: str, column: int) -> str | None:
    """The identifier at 1-based character `column` of a line (the cursor on it or just after
    it); a column past the line's end is at its end, as a client may send any."""
    at = min(column - 1, len(text))
    start = at
    while start > 0 and _identifier(text[start - 1]):
        start -= 1
    end = at
    while end < len(text) and _identifier(text[end]):
        end += 1
    return text[start:end] if end > start and not text[start].isdigit() else None


def _identifier(char: str) -> bool:
    return char.isalnum() or char == "_"


def explanation(analysis: Analysis, key: str, run: list[str] | None = None) -> str:
    """The hover text: what the registry, the code and the texts say, where it is logged, and
    what the last run logged (`run`)."""
    lines = describe(audit.build(analysis, only=key), key)
    return "```text\n" + "\n".join([*(lines or [f"{key}: nothing is known about it"]), *(run or [])]) + "\n```"


def last_run(root: Path, runs: tuple[str, ...], analysis: Analysis, key: str) -> list[str]:
    """What the newest of the folder's `runs` logged for `key`; nothing without the setting or
    the `live` extra."""
    if not runs:
        return []
    try:
        from metriclint.live.summary import hover

        return ["", *hover(root, runs, analysis.registry, key)]
    except ImportError:  # the extra's CRC-32C, needed by an event file
        return ["", "(the last run's values need the live extra: pip install 'metriclint[live]')"]


def definition(analysis: Analysis, key: str) -> Span | None:
    """The registry entry of `key`."""
    entry = analysis.registry.metrics.get(key) if analysis.registry is not None else None
    return entry.span if entry is not None else None


def references(analysis: Analysis, key: str, declaration: bool) -> list[Span]:
    """Every place that names `key`: logging sites and texts, and its registry entry if asked."""
    found = sorted({s.span for s in analysis.sightings if key in s.metrics})
    entry = definition(analysis, key) if declaration else None
    return ([entry] if entry is not None else []) + found
