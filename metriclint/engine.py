"""The pipeline, in order: discover → extract → read claims → resolve → check → filter → report.

Each step is one call below; the data between them are the types in `model.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from metriclint import baseline
from metriclint import registry as registry_module
from metriclint import suppress
from metriclint.checks import RULES, Corpus, Unreadable
from metriclint.claims import read
from metriclint.config import Config
from metriclint.discover import discover, display
from metriclint.model import Finding, Report, Span, Suppression
from metriclint.resolve import MetricIndex, attribute
from metriclint.sources import SUFFIXES, Extraction, extractor_for
from metriclint.sources import Unreadable as UnreadableSource
from metriclint.vocabulary import Vocabulary, load_builtin


Progress = Callable[[int, int], None]  # files parsed, total


def run(config: Config, progress: Progress | None = None) -> Report:
    facets, cues, reach = load_builtin()
    registry = None
    if config.registry is not None:
        registry, facets = registry_module.load(config.registry, display(config.registry), facets)
    vocabulary = Vocabulary(facets, cues, reach)

    files = discover(config.paths, config.exclude, config.root, SUFFIXES)
    extractions, unreadable = [], []
    for done, path in enumerate(files, 1):
        result = extract(path)
        if progress is not None:
            progress(done, len(files))
        if isinstance(result, Unreadable):
            unreadable.append(result)
        else:
            extractions.append(result)

    logged = [use.key for e in extractions for use in e.keys if not use.from_keyword]
    index = MetricIndex(registry, logged)
    mentions = [m for e in extractions for m in e.mentions]
    if registry is not None:
        mentions += [entry.description for entry in registry.metrics.values() if entry.description]
    claims = tuple(claim for m in mentions for claim in attribute(m, read(m.text, vocabulary), index))

    corpus = Corpus(claims, registry, tuple(unreadable))
    findings = [f for rule in RULES if rule.check is not None for f in rule.check(corpus)]
    kept = filter_findings(findings, config, [s for e in extractions for s in e.suppressions])
    return Report(tuple(sorted(kept, key=lambda f: f.sort_key)), len(files))


def filter_findings(findings: list[Finding], config: Config, suppressions: list[Suppression]) -> list[Finding]:
    """Rule selection, suppression comments, the pre-commit scope, then the baseline."""
    selection = config.selection
    kept, unused = suppress.apply(selection.apply(findings), suppressions, selection.active)
    kept += selection.apply(unused)
    if config.changed is not None:
        changed = set(config.changed)
        kept = [f for f in kept if f.span.path in changed or any(r.span.path in changed for r in f.related)]
    if config.baseline is not None:
        kept = baseline.hide(config.baseline, kept)
    return kept


def extract(path: Path) -> Extraction | Unreadable:
    """One file's mentions and keys; any failure on this file is reported, never raised."""
    shown = display(path)
    extractor = extractor_for(path.suffix)
    try:
        data = path.read_bytes()
        return extractor(shown, data) if extractor else Extraction()
    except OSError as error:
        return Unreadable(Span(shown, 1, 1, 1, 1), f"cannot read file: {error.strerror or error}")
    except UnreadableSource as error:
        return Unreadable(Span(shown, error.line, error.column, error.line, error.column), error.message)
