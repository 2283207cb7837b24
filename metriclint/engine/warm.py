"""The warm run's bookkeeping: `judge`, the whole run as far as its findings go, from what the
last run kept of each unchanged file (extract/kept.py), so a warm run decodes and reads only
the files that changed. Three steps, each reusing the last run's work where its inputs are
the same: what the code of all the files makes, what each file's texts state, then the checks
and what this run leaves the next."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from metriclint.engine.analysis import Analysis, analyse, code_facts, judged, view_of
from metriclint.engine.collection import Collection, assemble, extraction_settings, listed, project_knowledge
from metriclint.evidence import products
from metriclint.extract import cache, kept
from metriclint.extract.runner import Extracted, ExtractSettings, Pause, Progress, Result, extract_all, extract_changed
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary
from metriclint.language import views
from metriclint.language.attribution import registered_names
from metriclint.model import CodeProducts, FileView, ReadFailure
from metriclint.settings import Config
from metriclint.sources import Extraction


def judge(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Analysis:
    """`analyse` for what needs only the findings and the texts behind them (`check`, `audit`):
    what the last run kept of each unchanged file stands in for its texts and code flows. Its
    collection holds what each file logs, its tables, flags and suppressions, not its texts nor
    code flows."""
    if config.cache_dir is None:
        return analyse(config, progress, pause)
    run, extracted = _started(config, config.cache_dir, progress, pause)
    made = _made_by_code(run, extracted)
    views = _stated(run, made)
    return _judged_and_kept(run, made, views)


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What a warm run works from: the project's knowledge, the last run's bookkeeping, and
    this run's files in order, with their cache entries."""

    config: Config
    cache_dir: Path
    registry: Registry | None
    vocabulary: Vocabulary
    declared: tuple[Known, ...]
    settings: ExtractSettings
    salt: str  # the extraction salt, hex (extract/cache.py)
    last: kept.Kept
    files: list[Path]
    folders: tuple[ReadFailure, ...]
    tests: frozenset[str]
    shown: list[str]
    entries: list[str | None]


@dataclass(frozen=True, kw_only=True)
class _Made:
    """Step 1's outcome: the collection, what the code of all the files makes (with what it
    computes), each file's code digest and their joint key, and each file's result so far."""

    collection: Collection
    products: CodeProducts
    codes: list[str | None]
    code_key: str
    found: list[Result | None]


def _started(config: Config, cache_dir: Path, progress: Progress | None, pause: Pause) -> tuple[_Run, Extracted]:
    """The last run's bookkeeping, the files, and the changed ones extracted (the others are
    None in the results until a step needs them)."""
    registry, vocabulary, declared = project_knowledge(config)
    settings = extraction_settings(config, vocabulary, declared, pause)
    salt = cache.salt(settings.reading, settings.options)
    last = kept.load(cache_dir, config.root, salt.hex(), config.max_cache_size)
    files, folders, tests = listed(config, settings, every_file_read=not last.files)
    extracted = extract_changed(files, settings, progress, {shown: f.entry for shown, f in last.files.items()}, salt, tests)
    run = _Run(
        config=config,
        cache_dir=cache_dir,
        registry=registry,
        vocabulary=vocabulary,
        declared=declared,
        settings=settings,
        salt=salt.hex(),
        last=last,
        files=files,
        folders=folders,
        tests=tests,
        shown=extracted.shown,
        entries=extracted.entries,
    )
    return run, extracted


def _made_by_code(run: _Run, extracted: Extracted) -> _Made:
    """Step 1, what the code of all the files makes: the last run's, unless some file's code
    changed (a file's code that has no digest is never the same)."""
    last, found = run.last, extracted.results
    codes = [
        last.files[s].code if r is None else given if given is not None else kept.code_digest(r)
        for s, r, given in zip(run.shown, found, extracted.codes)
    ]
    code_key = kept.digest(run.salt, registered_names(run.registry), sorted(run.tests), list(zip(run.shown, codes)))
    common = (run.config, tuple(run.files))
    if code_key == last.code_key and None not in codes:
        lights = tuple(last.files[s].light if r is None else kept.light(r) for s, r in zip(run.shown, found))
        made_by_code = last.products
        collection = assemble(
            *common, lights, run.folders, run.registry, run.vocabulary, run.tests, declared=run.declared, made=made_by_code
        )
    else:
        found = _whole(run.files, found, run.settings, run.tests)
        results = tuple(r for r in found if r is not None)
        collection = assemble(*common, results, run.folders, run.registry, run.vocabulary, run.tests, declared=run.declared)
        made_by_code = replace(collection.made, code=code_facts(collection))
    return _Made(collection=collection, products=made_by_code, codes=codes, code_key=code_key, found=found)


@dataclass(frozen=True, kw_only=True)
class _Stated:
    """Step 2's outcome: each file's view, and the digest of what it was worked out under."""

    views: list[FileView]
    wanted: list[str]


def _stated(run: _Run, made: _Made) -> _Stated:
    """Step 2, what each file's texts state: the last run's view, unless the file, the index, the
    keys logged from the file or the flags changed. A test's texts state nothing, so its view
    has a key of its own."""
    last, collection = run.last, made.collection
    flags = products.placeholder_flags(made.products.code)
    index_key = kept.digest(collection.index.made_of(), sorted(flags))
    sites = collection.index.sites_in
    wanted = [kept.digest(index_key, s in run.tests, sites(s)) for s in run.shown]
    reusable = [
        s in last.files and last.files[s].entry == e and last.files[s].index == k for s, e, k in zip(run.shown, run.entries, wanted)
    ]
    found = _whole(run.files, made.found, run.settings, run.tests, skip=reusable)
    views = [
        last.files[s].view if ok else view_of(r.texts, collection, flags) if isinstance(r, Extraction) else FileView()
        for s, r, ok in zip(run.shown, found, reusable)
    ]
    return _Stated(views=views, wanted=wanted)


def _judged_and_kept(run: _Run, made: _Made, stated: _Stated) -> Analysis:
    """Step 3, the checks, then what this run leaves the next: the texts that are no file's come
    last among the analysis's mentions, after the files' statements."""
    statements = tuple(m for v in stated.views for m in v.statements)
    said = dict(run.last.readings)
    analysis = judged(made.collection, run.config, made.products.code, stated.views, statements, said=said)
    files = zip(run.shown, run.entries, made.codes, made.collection.results, stated.wanted, stated.views)
    now = kept.Kept(
        {s: kept.File(e, c, kept.light(r), k, v) for s, e, c, r, k, v in files if e},
        made.code_key,
        made.products,
        {(key := views.said_key(m)): said[key] for m in analysis.mentions[len(statements) :]},
    )
    if now != run.last:
        kept.save(run.cache_dir, run.config.root, run.salt, now)
    return analysis


def _whole(
    files: list[Path], found: list[Result | None], settings: ExtractSettings, tests: frozenset[str], skip: Sequence[bool] = ()
) -> list[Result | None]:
    """`found` with the files it has no result for extracted (from the cache, mostly), less
    those `skip` marks."""
    missing = [i for i, r in enumerate(found) if r is None and not (skip and skip[i])]
    if not missing:
        return found
    done = list(found)
    for i, result in zip(missing, extract_all([files[i] for i in missing], settings, tests=tests)):
        done[i] = result
    return done
