"""What the files hold, before any check: discover → extract → the registry and tooltip
tables bound to the keys the code logs (`collect`), and the pieces the other entry points
build their own collection from (the registry's knowledge, the extraction settings, the
listing, the assembly of the files' results).
"""

from __future__ import annotations

import fnmatch
import os
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from metriclint.base.paths import display, matches, relative
from metriclint.evidence import products
from metriclint.extract.aside import aside
from metriclint.extract.discover import discover
from metriclint.extract.runner import ExtractSettings, Pause, Progress, Result, default_jobs, extract_all, ready_readers
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language import tooltips
from metriclint.language.attribution import MetricIndex, by_site
from metriclint.language.phrases import read, ready
from metriclint.model import Binding, CodeProducts, ConfigError, KeyUse, ReadFailure, Span
from metriclint.settings import Config
from metriclint.sources import SUFFIXES, YAML, Extraction, Options


@dataclass(frozen=True, kw_only=True)
class Collection:
    """What the files hold, before any check: also what `metriclint sources` lists."""

    files: tuple[Path, ...]
    extractions: tuple[Extraction, ...]
    unreadable: tuple[ReadFailure, ...]
    registry: Registry | None
    vocabulary: Vocabulary
    index: MetricIndex
    names: tooltips.MetricNames
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
    registry, vocabulary, declared = project_knowledge(config)
    settings = extraction_settings(config, vocabulary, declared, pause)
    files, folders, tests = listed(config, settings, every_file_read=True)
    results = extract_all(files, settings, progress, tests)
    return assemble(config, tuple(files), tuple(results), folders, registry, vocabulary, tests, declared=declared)


Listed = tuple[list[Path], tuple[ReadFailure, ...], frozenset[str]]  # files, unlisted folders, tests


def listed(config: Config, settings: ExtractSettings, every_file_read: bool) -> Listed:
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
    return files, tuple(folders.values()), tests_among(files, config)


def project_knowledge(config: Config, registry_text: str | None = None) -> tuple[Registry | None, Vocabulary, tuple[Known, ...]]:
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


def tests_among(files: list[Path], config: Config) -> frozenset[str]:
    """The test files among `files`, as shown."""
    return frozenset(display(f) for f in files if matches(f, config.tests, config.root))


def extraction_settings(config: Config, vocabulary: Vocabulary, declared: tuple[Known, ...], pause: Pause = nullcontext) -> ExtractSettings:
    """What the workers extract each file with: the project's options and code knowledge, the
    vocabulary the texts are read with, and where the cache is."""
    options = Options(frozenset(name.rsplit(".", 1)[-1] for name in config.log_functions), declared)
    reader = partial(read, vocabulary=vocabulary)
    # The test globs count too: a test's texts are left unread, so its cache entry must not stand
    # in for the file once the globs change and it is no test.
    reading = vocabulary.fingerprint() + repr(config.tests).encode()
    return ExtractSettings(
        jobs=config.jobs or default_jobs(),
        cache_dir=config.cache_dir,
        options=options,
        read=reader,
        reading=reading,
        max_bytes=config.max_file_size,
        project=config.root,
        cache_limit=config.max_cache_size,
        pause=pause,
        ready=partial(ready, vocabulary),
    )


def assemble(
    config: Config,
    files: tuple[Path, ...],
    results: tuple[Result, ...],
    folders: tuple[ReadFailure, ...],
    registry: Registry | None,
    vocabulary: Vocabulary,
    tests: frozenset[str],
    index: MetricIndex | None = None,
    declared: tuple[Known, ...] = (),
    made: CodeProducts | None = None,
) -> Collection:
    """The collection of these files' results: the metric index of the keys they log (`index`
    if it is that one already), and the tooltip tables bound to the known keys. What the code
    of all the files makes is worked out from their code flows unless `made` gives it."""
    extractions = tuple(r for r in results if isinstance(r, Extraction))
    unreadable = (
        folders + tuple(r for r in results if isinstance(r, ReadFailure)) + tuple(e.code_unread for e in extractions if e.code_unread)
    )
    written = [use for e in extractions for use in e.keys if not use.from_keyword]
    made = made if made is not None else products.made_keys(extractions, written)
    uses = [use for use in products.own_keys(extractions, made) if not use.from_keyword] + list(made.built + made.read)
    sites = by_site(uses)
    if (
        index is None
        or index.registry is not registry
        or index.logged != {use.key for use in uses}
        or index.unnamed != made.labelled
        or index.sites != sites
    ):
        index = MetricIndex(registry, [use.key for use in uses], made.labelled, sites)
    spans = {key: entry.span for key, entry in (registry.metrics.items() if registry else ())}
    for use in uses:
        spans.setdefault(use.key, use.span)
    names = tooltips.MetricNames(index, spans)
    tables = [t for e in extractions for t in e.tables] + list(made.tables)
    bindings = tooltips.bind(tables, config.tooltips, config.root, names)
    return Collection(
        files=files,
        extractions=extractions,
        unreadable=unreadable,
        registry=registry,
        vocabulary=vocabulary,
        index=index,
        names=names,
        bindings=tuple(bindings),
        tests=tests,
        results=results,
        folders=folders,
        made=made,
        declared=declared,
    )


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
