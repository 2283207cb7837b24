"""The pipeline, in order: discover → extract → read claims → resolve → check → filter → report.

Each step is one call below; the data between them are the types in `model.py`.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from metriclint import baseline, suppress, tooltips
from metriclint import registry as registry_module
from metriclint.checks import RULES, Corpus, Unreadable
from metriclint.claims import read
from metriclint.codefacts import code_claims
from metriclint.config import Config
from metriclint.discover import discover, display, relative
from metriclint.extract_all import Progress, Settings, default_jobs, extract_all
from metriclint.inventory import sightings
from metriclint.model import Claim, CodeClaim, Finding, Mention, Report, Sighting, Suppression
from metriclint.registry import Registry
from metriclint.resolve import MetricIndex, attribute
from metriclint.sources import SUFFIXES, YAML, Extraction, Options
from metriclint.vocabulary import Vocabulary, load_builtin


@dataclass(frozen=True)
class Inventory:
    """What the files hold, before any check: also what `metriclint sources` lists."""

    files: tuple[Path, ...]
    extractions: tuple[Extraction, ...]
    unreadable: tuple[Unreadable, ...]
    registry: Registry | None
    vocabulary: Vocabulary
    index: MetricIndex
    names: tooltips.Names
    bindings: tuple[tooltips.Binding, ...]


def collect(config: Config, progress: Progress | None = None) -> Inventory:
    facets, cues, reach = load_builtin()
    registry = None
    if config.registry is not None:
        registry, facets = registry_module.load(config.registry, display(config.registry), facets)

    vocabulary = Vocabulary(facets, cues, reach)
    files = discover(config.paths, config.exclude, config.root, SUFFIXES) + _configured_yaml(config)
    extractions, unreadable = [], []
    options = Options(frozenset(name.rsplit(".", 1)[-1] for name in config.log_functions))
    settings = Settings(config.jobs or default_jobs(), config.cache_dir, config.registry, options, vocabulary)
    for result in extract_all(files, settings, progress):
        if isinstance(result, Unreadable):
            unreadable.append(result)
        else:
            extractions.append(result)

    uses = [use for e in extractions for use in e.keys if not use.from_keyword]
    index = MetricIndex(registry, [use.key for use in uses])
    spans = {key: entry.span for key, entry in (registry.metrics.items() if registry else ())}
    for use in uses:
        spans.setdefault(use.key, use.span)
    names = tooltips.Names(index, spans)
    tables = [t for e in extractions for t in e.tables]
    bindings = tooltips.bind(tables, config.tooltips, config.root, names)
    return Inventory(
        tuple(files), tuple(extractions), tuple(unreadable), registry, vocabulary, index, names, tuple(bindings)
    )


@dataclass(frozen=True)
class Analysis:
    """Everything one run found: the report, and what the audit shows beside it."""

    report: Report
    registry: Registry | None
    mentions: tuple[Mention, ...]
    claims: tuple[Claim, ...]
    sightings: tuple[Sighting, ...]  # every place that names a metric (inventory.py)
    facets: tuple[str, ...]  # every facet known to the run, built-in and the registry's own
    code: tuple[CodeClaim, ...] = ()  # what the code computes (codefacts.py), with the computing sites


def run(config: Config, progress: Progress | None = None) -> Report:
    return analyse(config, progress).report


def analyse(config: Config, progress: Progress | None = None) -> Analysis:
    inventory = collect(config, progress)
    registry, index = inventory.registry, inventory.index
    selections = [s for binding in inventory.bindings for s in tooltips.select(binding, inventory.names)]
    mentions = texts(inventory, selections)
    claims = tuple(read_claims(inventory, mentions))
    mismatches = tuple(m for s in selections if (m := tooltips.mismatch(s, inventory.names)) is not None)

    seen = sightings([use for e in inventory.extractions for use in e.keys], mentions, index)
    functions = [f for e in inventory.extractions for f in e.functions]
    code = code_claims(functions, [c for e in inventory.extractions for c in e.calls], index)

    corpus = Corpus(claims, registry, inventory.unreadable, mismatches, seen, inventory.vocabulary, code)
    findings = [f for rule in RULES if rule.check is not None for f in rule.check(corpus)]
    kept = filter_findings(findings, config, [s for e in inventory.extractions for s in e.suppressions])
    report = Report(tuple(sorted(kept, key=lambda f: f.sort_key)), len(inventory.files))
    return Analysis(report, registry, tuple(mentions), claims, seen, tuple(sorted(inventory.vocabulary.facets)), code)


def texts(inventory: Inventory, selections: list[tooltips.Selection] | None = None) -> list[Mention]:
    """Every text that can state a claim: docstrings and comments, the tooltips the dashboards
    show for known keys, and the registry's descriptions."""
    if selections is None:
        selections = [s for binding in inventory.bindings for s in tooltips.select(binding, inventory.names)]
    mentions = [m for e in inventory.extractions for m in e.mentions] + [tooltips.mention(s) for s in selections]
    if inventory.registry is not None:
        mentions += [entry.description for entry in inventory.registry.metrics.values() if entry.description]
    return mentions


def read_claims(inventory: Inventory, mentions: list[Mention]) -> list[Claim]:
    """Every claim `mentions` state. They come as `texts` lists them, the files' own first:
    those were read with their files (extract_all.py), the rest are read here."""
    own = [pair for e in inventory.extractions for pair in zip(e.mentions, e.readings, strict=True)]
    rest = [(m, read(m.text, inventory.vocabulary)) for m in mentions[len(own) :]]
    return [claim for m, said in own + rest for claim in attribute(m, said, inventory.index)]


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


def _configured_yaml(config: Config) -> list[Path]:
    """YAML files are read only where a tooltip table is configured: most YAML is not about metrics."""
    globs = [s.path for s in config.tooltips if s.path.endswith(YAML)]
    if not globs:
        return []
    found = discover(config.paths, config.exclude, config.root, YAML)
    return [p for p in found if any(fnmatch.fnmatchcase(relative(p, config.root), g) for g in globs)]
