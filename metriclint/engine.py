"""The pipeline, in order: discover → extract → read claims → attribute → check → filter.

Three entry points: `collect` (what the files hold, before any check), `analyse` (the whole
run), and `judge` (the whole run as far as its findings go, from what the last run kept of
each unchanged file). The data between the steps are the types in `model/`. Nothing here touches
process-wide state (the garbage collector, signals, the streams), so an editor server can
embed the engine; the command line passes in how to pause collection while results arrive.
"""

from __future__ import annotations

import fnmatch
import os
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from metriclint import filters
from metriclint.base.paths import display, matches, relative
from metriclint.checks import RULES, Corpus
from metriclint.evidence import products
from metriclint.extract import cache, kept
from metriclint.extract.aside import aside
from metriclint.extract.discover import discover
from metriclint.extract.runner import (
    Pause,
    Progress,
    Result,
    Settings,
    default_jobs,
    extract_all,
    extract_buffer,
    extract_changed,
    ready_readers,
    reread,
)
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.code import Known
from metriclint.knowledge.names import custom_parts
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language import tooltips, views
from metriclint.language.attribution import MetricIndex, registered_names
from metriclint.language.names import name_claims
from metriclint.language.phrases import read, ready
from metriclint.language.sightings import code_sightings, ordered
from metriclint.model import (
    Binding,
    Claim,
    CodeClaim,
    CodeProducts,
    ConfigError,
    FileView,
    KeyUse,
    Mention,
    ReadFailure,
    Reading,
    Report,
    Sighting,
    Span,
)
from metriclint.settings import Config
from metriclint.sources import SUFFIXES, YAML, Extraction, Options


@dataclass(frozen=True)
class Collection:
    """What the files hold, before any check: also what `metriclint sources` lists."""

    files: tuple[Path, ...]
    extractions: tuple[Extraction, ...]
    unreadable: tuple[ReadFailure, ...]
    registry: Registry | None
    vocabulary: Vocabulary
    index: MetricIndex
    names: tooltips.Names
    bindings: tuple[Binding, ...]
    tests: frozenset[str] = frozenset()  # the test files, as shown: counted, but they state nothing
    results: tuple[Result, ...] = ()  # one per file of `files`, in order: what `revise` replaces one of
    folders: tuple[ReadFailure, ...] = ()  # the folders that could not be listed
    # keys the project makes (built across calls, named by another module's constant, read back)
    # and the help texts of the metrics so named (evidence/products.py); not yet what the code computes
    made: CodeProducts = CodeProducts()
    buffers: tuple[tuple[Path, bytes], ...] = ()  # the files `revise` read from an editor's buffer, latest last
    declared: tuple[Known, ...] = ()  # what the project says its own helpers compute (registry, code-knowledge files)

    @property
    def uses(self) -> list[KeyUse]:
        """Every key the code logs: written in the files, built across calls, and read back."""
        return products.own_keys(self.extractions, self.made) + list(self.made.built) + list(self.made.read)


def collect(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Collection:
    """What the files under `config.paths` hold: their texts, keys, tables and code flows,
    the registry, and the tooltip tables bound to the known keys."""
    registry, vocabulary, declared = _knowledge(config)
    settings = _settings(config, vocabulary, declared, pause)
    files, folders, tests = _listed(config, settings, every_file_read=True)
    results = extract_all(files, settings, progress, tests)
    return _assembled(config, tuple(files), tuple(results), folders, registry, vocabulary, tests, declared=declared)


Listed = tuple[list[Path], tuple[ReadFailure, ...], frozenset[str]]  # files, unlisted folders, tests


def _listed(config: Config, settings: Settings, every_file_read: bool) -> Listed:
    """`_discovered`; on a run that will read every file, listed in a forked process while
    this one readies the workers' phrase patterns and Python parser (extract/aside.py), which
    take about as long. The parsers of the other kinds of file are readied once the list is in."""
    if not every_file_read:
        return _discovered(config)
    listing = aside(partial(_discovered_apart, config))
    ready_readers(settings, (".py",))
    found, matched = listing()
    config.exclude.note_matched(matched)  # for the warning about a pattern that matches nothing
    return found


def _discovered_apart(config: Config) -> tuple[Listed, frozenset[str]]:
    """`_discovered`, with the `exclude` patterns it matched: what they match in another
    process is not noted in this one."""
    return _discovered(config), config.exclude.matched()


def files(config: Config) -> list[Path]:
    """The files a run of the project reads (`check --show-files`)."""
    return _discovered(config)[0]


def _discovered(config: Config) -> Listed:
    """The files to check, an ML900 for each folder that could not be listed (one, however
    often the walk meets it), and which of the files are tests."""
    folders: dict[str, ReadFailure] = {}
    files = discover(config.paths, config.exclude, config.root, SUFFIXES, partial(_unlisted, folders))
    files += _configured_yaml(config, partial(_unlisted, folders))
    if config.nested:  # a nested project's files are its own, checked with its settings
        files = [f for f in files if not any(f.resolve().is_relative_to(root) for root in config.nested)]
    return files, tuple(folders.values()), _tests(files, config)


def revise(collection: Collection, config: Config, path: Path, data: bytes) -> Collection:
    """`collection` with the file at `path` read from `data` (an editor's unsaved buffer)
    instead of the disk. Only that file is extracted again; what spans the files (the metric
    index, the tooltip tables' bindings) is rebuilt; the metric index stays the same object
    while the keys logged stay the same, so `check` can keep the other files' claims. A file
    the collection lacks is added."""
    test = _tests([path], config)
    result = extract_buffer(path, data, _settings(config, collection.vocabulary, collection.declared), bool(test))
    shown = display(path)
    at = next((i for i, file in enumerate(collection.files) if display(file) == shown), None)
    files, results, tests = collection.files, collection.results, collection.tests
    if at is None:
        files, results, tests = files + (path,), results + (result,), tests | test
    else:
        results = results[:at] + (result,) + results[at + 1 :]
    registry, vocabulary = collection.registry, collection.vocabulary
    assembled = _assembled(config, files, results, collection.folders, registry, vocabulary, tests, collection.index, collection.declared)
    return replace(assembled, buffers=(*((p, d) for p, d in collection.buffers if p != path), (path, data)))  # the latest of each file only


def unchanged(collection: Collection, config: Config, path: Path, data: bytes) -> bool:
    """Whether `data` reads as what the collection read from `path`: the same extraction, or
    for the registry the same registry. `fix` writes only then, since where its phrases are and
    what surrounds them was worked out from the bytes analysed, not from those it reads later."""
    shown = display(path)
    if config.registry is not None and display(config.registry) == shown:
        try:
            return _knowledge(config, data.decode("utf-8"))[0] == collection.registry
        except (ConfigError, UnicodeDecodeError):
            return False
    at = next((i for i, file in enumerate(collection.files) if display(file) == shown), None)
    if at is None:
        return False
    settings = _settings(config, collection.vocabulary, collection.declared)
    return extract_buffer(path, data, settings, bool(_tests([path], config))) == collection.results[at]


def reregister(collection: Collection, config: Config, text: str) -> Collection:
    """`collection` with the registry read from `text` (an editor's unsaved buffer). What the
    files hold depends on the registry only through the code knowledge it declares, so they are
    parsed again only when that changes; what their texts state depends only on the facets it
    adds, so they are read again only when those change."""
    registry, vocabulary, declared = _knowledge(config, text)
    results = collection.results
    if declared != collection.declared:
        return _extracted_again(collection, config, registry, vocabulary, declared)
    if vocabulary.facets != collection.vocabulary.facets:
        results = tuple(reread(result, partial(read, vocabulary=vocabulary)) for result in results)
    assembled = _assembled(config, collection.files, results, collection.folders, registry, vocabulary, collection.tests, declared=declared)
    return replace(assembled, buffers=collection.buffers)


def _extracted_again(
    collection: Collection, config: Config, registry: Registry | None, vocabulary: Vocabulary, declared: tuple[Known, ...],
) -> Collection:
    """Every file extracted again with the project's declared code knowledge: from the disk,
    then the editor's buffers on top, as `revise` took them."""
    results = tuple(extract_all(list(collection.files), _settings(config, vocabulary, declared), tests=collection.tests))
    again = _assembled(config, collection.files, results, collection.folders, registry, vocabulary, collection.tests, declared=declared)
    for path, data in collection.buffers:
        again = revise(again, config, path, data)
    return again


def _knowledge(config: Config, registry_text: str | None = None) -> tuple[Registry | None, Vocabulary, tuple[Known, ...]]:
    """The registry (from `registry_text` when given, else its file), the vocabulary it extends,
    and the code knowledge the project declares: the registry's `code:` section, then each
    `code-knowledge` file in order (a later entry for the same helper wins)."""
    facets, cues, reach = load_builtin()
    registry = None
    if config.registry is not None:
        shown = display(config.registry)
        if registry_text is None:
            registry, facets = registry_module.load(config.registry, shown, facets, config.max_file_size)
        else:
            registry, facets = registry_module.parse(registry_text, shown, facets)
    declared = registry.code if registry is not None else ()
    problems = []
    for path in config.code_knowledge:
        try:
            declared += registry_module.load_code(path, display(path), facets, config.max_file_size)
        except ConfigError as error:  # every file's problems at once, as within one file
            problems += error.problems
    if problems:
        raise ConfigError(problems)
    return registry, Vocabulary(facets, cues, reach), declared


def _tests(files: list[Path], config: Config) -> frozenset[str]:
    """The test files among `files`, as shown."""
    return frozenset(display(f) for f in files if matches(f, config.tests, config.root))


def _settings(config: Config, vocabulary: Vocabulary, declared: tuple[Known, ...], pause: Pause = nullcontext) -> Settings:
    options = Options(frozenset(name.rsplit(".", 1)[-1] for name in config.log_functions), declared)
    reader = partial(read, vocabulary=vocabulary)
    # The test globs count too: a test's texts are left unread, so its cache entry must not stand
    # in for the file once the globs change and it is no test.
    reading = vocabulary.fingerprint() + repr(config.tests).encode()
    return Settings(
        config.jobs or default_jobs(), config.cache_dir, options, reader, reading, config.max_file_size,
        config.root, config.max_cache_size, pause, partial(ready, vocabulary),
    )


def _assembled(
    config: Config, files: tuple[Path, ...], results: tuple[Result, ...], folders: tuple[ReadFailure, ...],
    registry: Registry | None, vocabulary: Vocabulary, tests: frozenset[str], index: MetricIndex | None = None,
    declared: tuple[Known, ...] = (), made: CodeProducts | None = None,
) -> Collection:
    """The collection of these files' results: the metric index of the keys they log (`index`
    if it is that one already), and the tooltip tables bound to the known keys. What the code
    of all the files makes is worked out from their code flows unless `made` gives it."""
    extractions = tuple(r for r in results if isinstance(r, Extraction))
    unreadable = folders + tuple(r for r in results if isinstance(r, ReadFailure))
    written = [use for e in extractions for use in e.keys if not use.from_keyword]
    made = made if made is not None else products.made_keys(extractions, written)
    uses = [use for use in products.own_keys(extractions, made) if not use.from_keyword] + list(made.built + made.read)
    if index is None or index.registry is not registry or index.logged != {use.key for use in uses}:
        index = MetricIndex(registry, [use.key for use in uses])
    spans = {key: entry.span for key, entry in (registry.metrics.items() if registry else ())}
    for use in uses:
        spans.setdefault(use.key, use.span)
    names = tooltips.Names(index, spans)
    tables = [t for e in extractions for t in e.tables] + list(made.tables)
    bindings = tooltips.bind(tables, config.tooltips, config.root, names)
    return Collection(
        files, extractions, unreadable, registry, vocabulary, index, names, tuple(bindings), tests, results, folders, made,
        declared=declared,
    )


@dataclass(frozen=True)
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
    code = _code_facts(collection)
    flags = products.placeholder_flags(code)
    reuse = previous is not None and previous.collection.index is collection.index
    earlier = {id(a.extraction): a for a in previous.attributed} if reuse and previous is not None else {}
    attributed = tuple(
        a if (a := earlier.get(id(e))) is not None and a.extraction is e and a.flags == flags else Attributed(e, _view(e.texts, collection, flags), flags)
        for e in collection.extractions
        if e.texts
    )
    mentions = tuple(m for e in collection.extractions for m in e.mentions)
    return _judged(collection, config, code, [a.view for a in attributed], mentions, attributed)


def judge(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Analysis:
    """`analyse` for what needs only the findings and the texts behind them (`check`, `audit`):
    what the last run kept of each unchanged file (extract/kept.py) stands in for its texts and
    code flows, so a warm run decodes and reads only the files that changed. Its collection
    holds what each file logs, its tables, flags and suppressions, not its texts nor code flows."""
    if config.cache_dir is None:
        return analyse(config, progress, pause)
    registry, vocabulary, declared = _knowledge(config)
    settings = _settings(config, vocabulary, declared, pause)
    salt = cache.salt(settings.reading, settings.options)
    last = kept.load(config.cache_dir, config.root, salt.hex(), config.max_cache_size)
    files, folders, tests = _listed(config, settings, every_file_read=not last.files)
    extracted = extract_changed(files, settings, progress, {shown: f.entry for shown, f in last.files.items()}, salt, tests)
    shown, found, entries = extracted.shown, extracted.results, extracted.entries
    # 1. What the code of all the files makes: the last run's, unless some file's code changed.
    codes = [
        last.files[s].code if r is None else given if given is not None else kept.code_digest(r)
        for s, r, given in zip(shown, found, extracted.codes)
    ]
    code_key = kept.digest(salt.hex(), registered_names(registry), sorted(tests), list(zip(shown, codes)))
    if code_key == last.code_key and None not in codes:  # a file's code that has no digest is never the same
        lights = tuple(last.files[s].light if r is None else kept.light(r) for s, r in zip(shown, found))
        made_by_code = last.products
        collection = _assembled(config, tuple(files), lights, folders, registry, vocabulary, tests, declared=declared, made=made_by_code)
    else:
        found = _whole(files, found, settings, tests)
        collection = _assembled(config, tuple(files), tuple(r for r in found if r is not None), folders, registry, vocabulary, tests, declared=declared)
        made_by_code = replace(collection.made, code=_code_facts(collection))
    # 2. What each file's texts state: the last run's view, unless the file, the index or the flags changed.
    flags = products.placeholder_flags(made_by_code.code)
    index_key = kept.digest(collection.index.made_of(), sorted(flags))
    keys = {test: kept.digest(index_key, test) for test in (False, True)}  # a test's texts state nothing
    wanted = [keys[s in tests] for s in shown]
    reusable = [s in last.files and last.files[s].entry == e and last.files[s].index == k for s, e, k in zip(shown, entries, wanted)]
    found = _whole(files, found, settings, tests, skip=reusable)
    made_views = [
        last.files[s].view if ok else _view(r.texts, collection, flags) if isinstance(r, Extraction) else FileView()
        for s, r, ok in zip(shown, found, reusable)
    ]
    # 3. The checks, then what this run leaves the next: the texts that are no file's come last
    # among the analysis's mentions, after the files' statements.
    statements = tuple(m for v in made_views for m in v.statements)
    said = dict(last.readings)
    analysis = _judged(collection, config, made_by_code.code, made_views, statements, said=said)
    now = kept.Kept(
        {s: kept.File(e, c, kept.light(r), k, v) for s, e, c, r, k, v in zip(shown, entries, codes, collection.results, wanted, made_views) if e},
        code_key, made_by_code, {m.text: said[m.text] for m in analysis.mentions[len(statements):]},
    )
    if now != last:
        kept.save(config.cache_dir, config.root, salt.hex(), now)
    return analysis


def _whole(files: list[Path], found: list[Result | None], settings: Settings, tests: frozenset[str], skip: Sequence[bool] = ()) -> list[Result | None]:
    """`found` with the files it has no result for extracted (from the cache, mostly), less
    those `skip` marks."""
    missing = [i for i, r in enumerate(found) if r is None and not (skip and skip[i])]
    if not missing:
        return found
    done = list(found)
    for i, result in zip(missing, extract_all([files[i] for i in missing], settings, tests=tests)):
        done[i] = result
    return done


def _judged(
    collection: Collection, config: Config, code: tuple[CodeClaim, ...], file_views: Sequence[FileView], mentions: tuple[Mention, ...],
    attributed: tuple[Attributed, ...] = (), said: dict[str, tuple[Reading, ...]] | None = None,
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
    said.update((o.text, tuple(read(o.text, collection.vocabulary))) for o in others if o.text not in said)
    every = [*file_views, *(_view(((o, said[o.text]),), collection, flags_named) for o in others)]
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
        claims, registry, collection.unreadable + tuple(unsafe) + tuple(failures.values()), mismatches, seen, collection.vocabulary,
        code, names, flags, named,
    )
    findings = [f for rule in RULES if rule.check is not None for f in rule.check(corpus)]
    kept_findings = filters.reported(findings, config, [s for e in collection.extractions for s in e.suppressions])
    report = Report(tuple(sorted(kept_findings, key=lambda f: f.sort_key)), len(collection.files))
    facets = tuple(sorted(collection.vocabulary.facets))
    return Analysis(report, registry, mentions + others, claims, seen, facets, code, collection, attributed)


def _code_facts(collection: Collection) -> tuple[CodeClaim, ...]:
    return products.code_facts(collection.extractions, collection.uses, collection.index, collection.tests, collection.made)


def _view(texts: Sequence[tuple[Mention, Sequence[Reading]]], collection: Collection, flags: frozenset[str]) -> FileView:
    return views.view(texts, collection.index, bool(texts) and texts[0][0].path in collection.tests, flags)


def _unlisted(folders: dict[str, ReadFailure], error: OSError) -> None:
    shown = display(Path(os.fsdecode(error.filename))) if error.filename is not None else "."
    message = f"cannot read this folder: {error.strerror or error}; the files in it were not checked"
    folders.setdefault(shown, ReadFailure(Span(shown, 1, 1, 1, 1), message))


def _configured_yaml(config: Config, on_error: Callable[[OSError], None]) -> list[Path]:
    """YAML files are read only where a tooltip table is configured: most YAML is not about metrics."""
    globs = [s.path for s in config.tooltips if s.path.endswith(YAML)]
    if not globs:
        return []
    found = discover(config.paths, config.exclude, config.root, YAML, on_error)
    return [p for p in found if any(fnmatch.fnmatchcase(relative(p, config.root), g) for g in globs)]
