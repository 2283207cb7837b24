"""The pipeline, in order: discover → extract → read claims → attribute → check → filter.

Two entry points: `collect` (what the files hold, before any check) and `analyse` (the whole
run). The data between the steps are the types in `model.py`. Nothing here touches
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
from metriclint.base import keys, patterns
from metriclint.base.paths import display, matches, relative
from metriclint.checks import RULES, Corpus
from metriclint.evidence.built_keys import built_keys, read_back
from metriclint.evidence.callbacks import silence, silenced_files
from metriclint.evidence.code_claims import code_claims
from metriclint.evidence.constants import constant_keys
from metriclint.evidence.inherited import inherited_flows
from metriclint.extract.discover import discover
from metriclint.extract.runner import Pause, Progress, Result, Settings, default_jobs, extract_all, extract_buffer, reread
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.code import Known, knowledge
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language import tooltips
from metriclint.language.attribution import MetricIndex, attribute
from metriclint.language.names import name_claims
from metriclint.language.phrases import read
from metriclint.language.sightings import naming, sightings
from metriclint.model import Binding, Claim, CodeClaim, ConfigError, KeyUse, Mention, ReadFailure, Reading, Report, Sighting, Span
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
    # keys the project makes: by calls that pass a string to a key template (evidence/built_keys.py),
    # and by another module's constant naming a metric (evidence/constants.py)
    built: tuple[KeyUse, ...] = ()
    read: tuple[KeyUse, ...] = ()  # keys read back from a dict that a logged template covers (evidence/built_keys.py)
    buffers: tuple[tuple[Path, bytes], ...] = ()  # the files `revise` read from an editor's buffer, latest last
    declared: tuple[Known, ...] = ()  # what the project says its own helpers compute (registry, code-knowledge files)

    @property
    def uses(self) -> list[KeyUse]:
        """Every key the code logs: written in the files, built across calls, and read back."""
        return [use for e in self.extractions for use in e.keys] + list(self.built) + list(self.read)


def collect(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Collection:
    """What the files under `config.paths` hold: their texts, keys, tables and code flows,
    the registry, and the tooltip tables bound to the known keys."""
    registry, vocabulary, declared = _knowledge(config)
    folders: dict[str, ReadFailure] = {}  # a folder that cannot be listed: one ML900, however often the walk meets it
    files = discover(config.paths, config.exclude, config.root, SUFFIXES, partial(_unlisted, folders))
    files += _configured_yaml(config, partial(_unlisted, folders))
    results = extract_all(files, _settings(config, vocabulary, declared, pause), progress)
    tests = _tests(files, config)
    return _assembled(config, tuple(files), tuple(results), tuple(folders.values()), registry, vocabulary, tests, declared=declared)


def revise(collection: Collection, config: Config, path: Path, data: bytes) -> Collection:
    """`collection` with the file at `path` read from `data` (an editor's unsaved buffer)
    instead of the disk. Only that file is extracted again; what spans the files (the metric
    index, the tooltip tables' bindings) is rebuilt; the metric index stays the same object
    while the keys logged stay the same, so `check` can keep the other files' claims. A file
    the collection lacks is added."""
    result = extract_buffer(path, data, _settings(config, collection.vocabulary, collection.declared))
    shown = display(path)
    at = next((i for i, file in enumerate(collection.files) if display(file) == shown), None)
    files, results, tests = collection.files, collection.results, collection.tests
    if at is None:
        files, results, tests = files + (path,), results + (result,), tests | _tests([path], config)
    else:
        results = results[:at] + (result,) + results[at + 1 :]
    registry, vocabulary = collection.registry, collection.vocabulary
    assembled = _assembled(config, files, results, collection.folders, registry, vocabulary, tests, collection.index, collection.declared)
    return replace(assembled, buffers=(*collection.buffers, (path, data)))


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
    return at is not None and extract_buffer(path, data, _settings(config, collection.vocabulary, collection.declared)) == collection.results[at]


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
    results = tuple(extract_all(list(collection.files), _settings(config, vocabulary, declared)))
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
    return Settings(
        config.jobs or default_jobs(), config.cache_dir, options, reader, vocabulary.fingerprint(), config.max_file_size,
        config.root, config.max_cache_size, pause,
    )


def _assembled(
    config: Config, files: tuple[Path, ...], results: tuple[Result, ...], folders: tuple[ReadFailure, ...],
    registry: Registry | None, vocabulary: Vocabulary, tests: frozenset[str], index: MetricIndex | None = None,
    declared: tuple[Known, ...] = (),
) -> Collection:
    """The collection of these files' results: the metric index of the keys they log (`index`
    if it is that one already), and the tooltip tables bound to the known keys."""
    extractions = tuple(r for r in results if isinstance(r, Extraction))
    unreadable = folders + tuple(r for r in results if isinstance(r, ReadFailure))
    uses = [use for e in extractions for use in e.keys if not use.from_keyword]
    named, help_tables = constant_keys(extractions)
    made = [*built_keys([f for e in extractions for f in e.functions], [c for e in extractions for c in e.calls]), *named]
    built = tuple(use for use in made if not keys.too_generic(use.key))
    read = tuple(dict.fromkeys(read_back([r for e in extractions for r in e.reads], [*uses, *made])))
    uses += built + read
    if index is None or index.registry is not registry or index.logged != {use.key for use in uses}:
        index = MetricIndex(registry, [use.key for use in uses])
    spans = {key: entry.span for key, entry in (registry.metrics.items() if registry else ())}
    for use in uses:
        spans.setdefault(use.key, use.span)
    names = tooltips.Names(index, spans)
    tables = [t for e in extractions for t in e.tables] + list(help_tables)
    bindings = tooltips.bind(tables, config.tooltips, config.root, names)
    return Collection(
        files, extractions, unreadable, registry, vocabulary, index, names, tuple(bindings), tests, results, folders, built, read=read,
        declared=declared,
    )


@dataclass(frozen=True)
class Analysis:
    """Everything one run found: the report, and what the audit shows beside it."""

    report: Report
    registry: Registry | None
    mentions: tuple[Mention, ...]
    claims: tuple[Claim, ...]
    sightings: tuple[Sighting, ...]  # every place that names a metric (language/sightings.py)
    facets: tuple[str, ...]  # every facet known to the run, built-in and the registry's own
    code: tuple[CodeClaim, ...]  # what the code computes (evidence/code_claims.py), with the computing sites
    collection: Collection  # what the files hold, as `collect` found it
    attributed: tuple[Attributed, ...] = ()  # each file's claims, for the next check after an edit


@dataclass(frozen=True)
class Attributed:
    """The claims one file's texts state (or the ML900 for them), and the extraction they are of."""

    extraction: Extraction | None
    claims: tuple[Claim, ...]
    failure: ReadFailure | None


def analyse(config: Config, progress: Progress | None = None, pause: Pause = nullcontext) -> Analysis:
    """The whole run: every claim, sighting and code fact, and the findings that are reported."""
    return check(collect(config, progress, pause), config)


def check(collection: Collection, config: Config, previous: Analysis | None = None) -> Analysis:
    """The steps after `collect`: attribute the texts, run the checks, keep what is reported.
    An editor server runs them again after each `revise`, passing the last analysis as
    `previous`, whose per-file work is kept where it still holds."""
    registry, index = collection.registry, collection.index
    shown, unsafe = _shown_tooltips(collection)
    mentions = _texts(collection, shown)
    found, failed, attributed = _attributed(collection, mentions, previous)
    claims = tuple(found)
    mismatches = tuple(m for s in shown if (m := tooltips.mismatch(s, collection.names)) is not None)

    seen = sightings(collection.uses, mentions, index, collection.tests)
    code = _code_facts(collection)

    names = name_claims(collection.uses, index, collection.tests)
    flags = tuple(f for e in collection.extractions for f in e.flags if f.span.path not in collection.tests)
    corpus = Corpus(
        claims, registry, collection.unreadable + tuple(unsafe + failed), mismatches, seen, collection.vocabulary, code, names,
        flags, naming(_placeholder_flags(code), mentions),
    )
    findings = [f for rule in RULES if rule.check is not None for f in rule.check(corpus)]
    kept = filters.reported(findings, config, [s for e in collection.extractions for s in e.suppressions])
    report = Report(tuple(sorted(kept, key=lambda f: f.sort_key)), len(collection.files))
    facets = tuple(sorted(collection.vocabulary.facets))
    return Analysis(report, registry, tuple(mentions), claims, seen, facets, code, collection, attributed)


def _placeholder_flags(code: tuple[CodeClaim, ...]) -> set[str]:
    """The flags some logged value is a placeholder without: a text that names one states the
    condition, so ML006 does not hold it to the default path."""
    return {f.placeholder.flag_name for c in code if (f := c.fact).placeholder is not None}


def _texts(collection: Collection, shown: list[tooltips.Shown]) -> list[Mention]:
    """Every text that can state a claim: docstrings and comments, the tooltips the dashboards
    show for known keys, and the registry's descriptions."""
    mentions = [m for e in collection.extractions for m in e.mentions] + [tooltips.mention(s) for s in shown]
    if collection.registry is not None:
        mentions += [entry.description for entry in collection.registry.metrics.values() if entry.description]
    return mentions


def _shown_tooltips(collection: Collection) -> tuple[list[tooltips.Shown], list[ReadFailure]]:
    """The entry each table shows for each known key; a regex table with a pattern that cannot
    be matched in bounded time is not read, and is an ML900 at that pattern (base/patterns.py)."""
    shown: list[tooltips.Shown] = []
    failures = []
    for binding in collection.bindings:
        try:
            shown += list(tooltips.select(binding, collection.names))
        except patterns.Unsafe as error:
            span = next(e.span for e in binding.table.entries if e.pattern == error.pattern)
            failures.append(ReadFailure(span, f"tooltip table '{binding.table.name}' not read: {error}"))
    return shown, failures


def _code_facts(collection: Collection) -> tuple[CodeClaim, ...]:
    """What the code outside the test files computes for each metric: a test's arithmetic
    shows what it expects, not how the project computes the value (nor does its subclass of a
    project's trainer change what the project's own runs log)."""
    entries = knowledge().entry_points
    classes = [c for e in collection.extractions for c in e.classes if c.span.path not in collection.tests]
    passed = (p for e in collection.extractions for p in e.callbacks)
    lists = (listed for e in collection.extractions for listed in e.callback_lists)
    silenced = silenced_files(passed, classes, lists, entries)
    functions, classes = silence([f for e in collection.extractions for f in e.functions], classes, silenced, entries)
    functions += inherited_flows(classes, entries)
    calls = [c for e in collection.extractions for c in e.calls if c.span.path not in collection.tests]
    own = frozenset(
        m for use in collection.uses if use.measured and not use.from_keyword and use.span.path not in collection.tests for m in collection.index.for_key(use.key)
    )
    rewritten = frozenset(p for e in collection.extractions for r in e.rewrites if r.span.path not in collection.tests for p in r.entry)
    return tuple(c for c in code_claims(functions, calls, collection.index, own, rewritten) if c.fact.span.path not in collection.tests)


def _attributed(collection: Collection, mentions: list[Mention], previous: Analysis | None) -> tuple[list[Claim], list[ReadFailure], tuple[Attributed, ...]]:
    """Every claim `mentions` state, and an ML900 for each file whose texts could not be
    attributed: a bug met in one file's texts costs that file, not the run.

    The mentions come as `_texts` lists them, the files' own first: those were read with their
    files (extract/runner.py), the rest (tooltips, registry descriptions) are read here. A
    file's claims depend only on its extraction and the metric index, so those of `previous`
    are kept for every file whose extraction is the same object, if the index is too."""
    reuse = previous is not None and previous.collection.index is collection.index
    kept = {id(a.extraction): a for a in previous.attributed} if reuse and previous is not None else {}
    own = tuple(
        a if (a := kept.get(id(e))) is not None and a.extraction is e else _attribute_file(e, e.texts, collection)
        for e in collection.extractions
        if e.texts
    )
    count = sum(len(e.texts) for e in collection.extractions)
    rest = [_attribute_file(None, [(m, tuple(read(m.text, collection.vocabulary)))], collection) for m in mentions[count:]]
    claims: list[Claim] = []
    failures: dict[str, ReadFailure] = {}
    for done in own + tuple(rest):
        claims += done.claims
        if done.failure is not None:
            failures.setdefault(done.failure.span.path, done.failure)
    return claims, list(failures.values()), own


def _attribute_file(extraction: Extraction | None, pairs: Sequence[tuple[Mention, tuple[Reading, ...]]], collection: Collection) -> Attributed:
    """The claims of one file's texts (or of one text not from a file's extraction)."""
    path = pairs[0][0].path
    if path in collection.tests:
        return Attributed(extraction, (), None)  # a test's texts state nothing about a metric (settings.DEFAULT_TESTS)
    try:
        return Attributed(extraction, tuple(claim for m, said in pairs for claim in attribute(m, said, collection.index)), None)
    except Exception as error:  # noqa: BLE001 - one file's odd text must not end the run
        message = f"internal error while reading this file's texts: {type(error).__name__}: {error}; please report it"
        return Attributed(extraction, (), ReadFailure(Span(path, 1, 1, 1, 1), message))


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
