"""The whole run, in order: discover → extract → read claims → attribute → check → filter.

`analyse` runs it from the files; `check` runs the steps after `collect` (collection.py) on a
collection, keeping what an earlier analysis worked out per file where it still holds (the
editor session, session.py); `judged` is the checks and the filters, which the warm run
(warm.py) shares. The data between the steps are the types in `model/`. Nothing here touches
process-wide state (the garbage collector, signals, the streams), so an editor server can
embed the engine; the command line passes in how to pause collection while results arrive.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Sequence

from metriclint import filters
from metriclint.checks import RULES, Corpus
from metriclint.engine.collection import Collection, collect
from metriclint.evidence import products
from metriclint.extract.runner import Pause, Progress
from metriclint.knowledge.names import custom_parts
from metriclint.knowledge.registry import Registry
from metriclint.language import tooltips, views
from metriclint.language.names import name_claims
from metriclint.language.phrases import read
from metriclint.language.sightings import code_sightings, ordered
from metriclint.model import Claim, CodeClaim, FileView, Mention, ReadFailure, Reading, Report, Sighting
from metriclint.settings import Config
from metriclint.sources import Extraction


@dataclass(frozen=True, kw_only=True)
class Analysis:
    """Everything one run found: the report, and what the audit shows beside it."""

    report: Report
    registry: Registry | None
    mentions: tuple[Mention, ...]  # every text (`judge`: those that state a claim or name a metric)
    claims: tuple[Claim, ...]
    sightings: tuple[Sighting, ...]  # every place that names a metric (language/sightings.py)
    facets: tuple[str, ...]  # every facet known to the run, built-in and the registry's own
    code: tuple[CodeClaim, ...]  # what the code computes (evidence/code_claims.py), with the computing sites
    collection: Collection  # what the files hold, as `collect` found it (`judge`: less the texts and code flows)
    attributed: tuple[Attributed, ...] = ()  # each file's view, for the next check after an edit


@dataclass(frozen=True)
class Attributed:
    """What one file's texts state (its view), the extraction and the flags it was worked out for."""

    extraction: Extraction
    view: FileView
    flags: frozenset[str]


def analyse(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Analysis:
    """The whole run: every claim, sighting and code fact, and the findings that are reported."""
    return check(collect(config, progress, pause), config)


def check(collection: Collection, config: Config, previous: Analysis | None = None) -> Analysis:
    """The steps after `collect`: attribute the texts, run the checks, keep what is reported.
    An editor server runs them again after each `revise`, passing the last analysis as
    `previous`, whose per-file work is kept where it still holds: a file's view depends only
    on its extraction, the metric index and the placeholders' flags."""
    code = code_facts(collection)
    flags = products.placeholder_flags(code)
    reuse = previous is not None and previous.collection.index is collection.index
    earlier = {id(a.extraction): a for a in previous.attributed} if reuse and previous is not None else {}
    attributed = tuple(
        a
        if (a := earlier.get(id(e))) is not None and a.extraction is e and a.flags == flags
        else Attributed(e, view_of(e.texts, collection, flags), flags)
        for e in collection.extractions
        if e.texts
    )
    mentions = tuple(m for e in collection.extractions for m in e.mentions)
    return judged(collection, config, code, [a.view for a in attributed], mentions, attributed)


def judged(
    collection: Collection,
    config: Config,
    code: tuple[CodeClaim, ...],
    file_views: Sequence[FileView],
    mentions: tuple[Mention, ...],
    attributed: tuple[Attributed, ...] = (),
    said: dict[str, tuple[Reading, ...]] | None = None,
) -> Analysis:
    """The checks over the files' views, the texts that are not a file's (tooltips, registry
    descriptions) and the code facts, and what is reported of their findings. `said`: what
    texts that are no file's state, where known already (kept by the last run); those read
    now are added to it."""
    registry, index = collection.registry, collection.index
    shown, unsafe = tooltips.shown_in(collection.bindings, collection.names)
    others = views.other_texts([tooltips.mention(s) for s in shown], registry)
    flags_named = products.placeholder_flags(code)
    said = {} if said is None else said
    said.update((key, tuple(read(o.text, collection.vocabulary, o.values))) for o in others if (key := views.said_key(o)) not in said)
    every = [*file_views, *(view_of(((o, said[views.said_key(o)]),), collection, flags_named) for o in others)]
    claims = tuple(c for v in every for c in v.claims)
    failures: dict[str, ReadFailure] = {}
    for view in every:
        if view.failure is not None:
            failures.setdefault(view.failure.span.path, view.failure)
    mismatches = tuple(m for s in shown if (m := tooltips.mismatch(s, collection.names)) is not None)
    seen = ordered([*code_sightings(collection.uses, index, collection.tests), *(s for v in every for s in v.sightings)])
    names = name_claims(collection.uses, index, collection.tests, custom_parts(collection.vocabulary.facets))
    flags = tuple(f for e in collection.extractions for f in e.flags if f.span.path not in collection.tests)
    named = frozenset(span for v in every for span in v.named)
    corpus = Corpus(
        claims=claims,
        registry=registry,
        unreadable=collection.unreadable + tuple(unsafe) + tuple(failures.values()),
        mismatches=mismatches,
        sightings=seen,
        vocabulary=collection.vocabulary,
        code=code,
        names=names,
        flags=flags,
        naming_flags=named,
    )
    findings = [f for rule in RULES if rule.check is not None for f in rule.check(corpus)]
    kept_findings = filters.reported(findings, config, [s for e in collection.extractions for s in e.suppressions])
    report = Report(tuple(sorted(kept_findings, key=lambda f: f.sort_key)), len(collection.files))
    facets = tuple(sorted(collection.vocabulary.facets))
    return Analysis(
        report=report,
        registry=registry,
        mentions=mentions + others,
        claims=claims,
        sightings=seen,
        facets=facets,
        code=code,
        collection=collection,
        attributed=attributed,
    )


def code_facts(collection: Collection) -> tuple[CodeClaim, ...]:
    return products.code_facts(collection.extractions, collection.uses, collection.index, collection.tests, collection.made)


def view_of(texts: Sequence[tuple[Mention, Sequence[Reading]]], collection: Collection, flags: frozenset[str]) -> FileView:
    return views.view(texts, collection.index, bool(texts) and texts[0][0].path in collection.tests, flags)
