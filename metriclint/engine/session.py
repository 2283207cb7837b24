"""The editor session: a collection kept up to date with the buffers an editor holds
(`revise` for a file, `reregister` for the registry), and whether bytes read as what was
analysed (`unchanged`, before `fix` writes). The server runs `analysis.check` after each."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

from metriclint.base.paths import display
from metriclint.engine.collection import Collection, assemble, extraction_settings, project_knowledge, tests_among
from metriclint.extract.runner import extract_all, extract_buffer, reread
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary
from metriclint.language.phrases import read
from metriclint.model import ConfigError
from metriclint.settings import Config


def revise(collection: Collection, config: Config, path: Path, data: bytes) -> Collection:
    """`collection` with the file at `path` read from `data` (an editor's unsaved buffer)
    instead of the disk. Only that file is extracted again; what spans the files (the metric
    index, the tooltip tables' bindings) is rebuilt; the metric index stays the same object
    while the keys logged stay the same, so `check` can keep the other files' claims. A file
    the collection lacks is added."""
    test = tests_among([path], config)
    result = extract_buffer(path, data, extraction_settings(config, collection.vocabulary, collection.declared), bool(test))
    shown = display(path)
    at = next((i for i, file in enumerate(collection.files) if display(file) == shown), None)
    files, results, tests = collection.files, collection.results, collection.tests
    if at is None:
        files, results, tests = files + (path,), results + (result,), tests | test
    else:
        results = results[:at] + (result,) + results[at + 1 :]
    registry, vocabulary = collection.registry, collection.vocabulary
    assembled = assemble(config, files, results, collection.folders, registry, vocabulary, tests, collection.index, collection.declared)
    return replace(assembled, buffers=(*((p, d) for p, d in collection.buffers if p != path), (path, data)))  # the latest of each file only


def unchanged(collection: Collection, config: Config, path: Path, data: bytes) -> bool:
    """Whether `data` reads as what the collection read from `path`: the same extraction, or
    for the registry the same registry. `fix` writes only then, since where its phrases are and
    what surrounds them was worked out from the bytes analysed, not from those it reads later."""
    shown = display(path)
    if config.registry is not None and display(config.registry) == shown:
        try:
            return project_knowledge(config, data.decode("utf-8"))[0] == collection.registry
        except (ConfigError, UnicodeDecodeError):
            return False
    at = next((i for i, file in enumerate(collection.files) if display(file) == shown), None)
    if at is None:
        return False
    settings = extraction_settings(config, collection.vocabulary, collection.declared)
    return extract_buffer(path, data, settings, bool(tests_among([path], config))) == collection.results[at]


def reregister(collection: Collection, config: Config, text: str) -> Collection:
    """`collection` with the registry read from `text` (an editor's unsaved buffer). What the
    files hold depends on the registry only through the code knowledge it declares, so they are
    parsed again only when that changes; what their texts state depends only on the facets it
    adds, so they are read again only when those change."""
    registry, vocabulary, declared = project_knowledge(config, text)
    results = collection.results
    if declared != collection.declared:
        return _extracted_again(collection, config, registry, vocabulary, declared)
    if vocabulary.facets != collection.vocabulary.facets:
        results = tuple(reread(result, partial(read, vocabulary=vocabulary)) for result in results)
    assembled = assemble(config, collection.files, results, collection.folders, registry, vocabulary, collection.tests, declared=declared)
    return replace(assembled, buffers=collection.buffers)


def _extracted_again(
    collection: Collection,
    config: Config,
    registry: Registry | None,
    vocabulary: Vocabulary,
    declared: tuple[Known, ...],
) -> Collection:
    """Every file extracted again with the project's declared code knowledge: from the disk,
    then the editor's buffers on top, as `revise` took them."""
    results = tuple(extract_all(list(collection.files), extraction_settings(config, vocabulary, declared), tests=collection.tests))
    again = assemble(config, collection.files, results, collection.folders, registry, vocabulary, collection.tests, declared=declared)
    for path, data in collection.buffers:
        again = revise(again, config, path, data)
    return again
