"""The engine embedded in an editor: one file, or the registry, taken from an unsaved buffer.
An analysis revised from a buffer must be the one a run over the saved file would give."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from metriclint import engine, settings
from metriclint.language import views
from metriclint.model import Claim, ConfigError, Mention

DEMO_FINDING = "ML001 trainer/logging_utils.py:10 clipping=after"


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "fixtures" / "demo", project, ignore=shutil.ignore_patterns(".metriclint_cache"))
    monkeypatch.chdir(project)
    return project


def _config() -> settings.Config:
    return settings.with_speed(settings.load((".",), None, None), 1, None, True)


def _findings(analysis: engine.Analysis) -> list[str]:
    return [f"{f.rule} {f.span.path}:{f.span.line} {f.facet}={f.found}" for f in analysis.report.findings]


def test_a_buffer_replaces_its_file_and_the_run_matches_a_saved_one(demo: Path) -> None:
    config = _config()
    collection = engine.collect(config)
    assert _findings(engine.check(collection, config)) == [DEMO_FINDING]
    source = demo / "trainer" / "logging_utils.py"
    edited = source.read_bytes().replace(b"after clipping", b"before clipping")
    revised = engine.check(engine.revise(collection, config, source, edited), config)
    assert _findings(revised) == []
    assert b"after clipping" in source.read_bytes()  # the buffer is not written
    source.write_bytes(edited)
    assert revised.report == engine.analyse(config).report


def test_a_buffer_of_a_file_the_run_did_not_hold_is_added(demo: Path) -> None:
    config = _config()
    collection = engine.collect(config)
    added = demo / "trainer" / "extra.py"
    text = b'def log(tracker, grad_norm):\n    tracker.log({"train/grad_norm": grad_norm})  # post-clip\n'
    revised = engine.revise(collection, config, added, text)
    assert len(revised.files) == len(collection.files) + 1
    assert "ML001 trainer/extra.py:2 clipping=after" in _findings(engine.check(revised, config))


def test_a_test_files_buffer_is_read_as_the_run_read_the_file(demo: Path) -> None:
    """A test file from an editor is walked as a run walks it: for its keys, its texts unread."""
    test = demo / "tests" / "test_log.py"
    test.parent.mkdir()
    test.write_text('def test_log(tracker, norm):\n    tracker.log({"train/grad_norm": norm.sum()})  # after clipping\n', encoding="utf-8")
    config = _config()
    collection = engine.collect(config)
    assert engine.unchanged(collection, config, test, test.read_bytes())
    assert engine.revise(collection, config, test, test.read_bytes()).results == collection.results


def test_a_registry_buffer_moves_the_findings(demo: Path) -> None:
    config = _config()
    collection = engine.collect(config)
    text = (demo / "metrics.yaml").read_text(encoding="utf-8").replace("clipping: before", "clipping: after")
    revised = engine.reregister(collection, config, text)
    assert revised.extractions == collection.extractions  # same facets: nothing read again
    assert _findings(engine.check(revised, config)) == ["ML001 metrics.yaml:5 clipping=before"]


def test_a_registry_buffer_with_new_facets_reads_the_texts_again(demo: Path) -> None:
    config = _config()
    collection = engine.collect(config)
    text = (
        (demo / "metrics.yaml")
        .read_text(encoding="utf-8")
        .replace(
            "metrics:",
            "facets:\n  stage:\n    description: When.\n    values:\n      warmup: [warm-up phase]\n      main: [main phase]\nmetrics:",
        )
    )
    source = demo / "trainer" / "logging_utils.py"
    edited = source.read_bytes().replace(b"Gradient norm after clipping.", b"Gradient norm in the warm-up phase.")
    revised = engine.reregister(engine.revise(collection, config, source, edited), config, text)
    claims = [(c.facet, c.value) for c in engine.check(revised, config).claims if c.span.path == "trainer/logging_utils.py"]
    assert ("stage", "warmup") in claims


def test_a_broken_registry_buffer_is_a_config_error_at_its_line(demo: Path) -> None:
    config = _config()
    collection = engine.collect(config)
    text = (demo / "metrics.yaml").read_text(encoding="utf-8").replace("clipping: before", "clipping: sideways")
    with pytest.raises(ConfigError) as raised:
        engine.reregister(collection, config, text)
    assert [(p.path, p.line) for p in raised.value.problems] == [("metrics.yaml", 7)]


def test_a_registry_buffer_declaring_code_knowledge_extracts_the_files_again_buffers_kept(demo: Path) -> None:
    """What the files hold depends on the registry's `code:` section: a helper it declares
    computes a fact, in the saved files and in the buffers the editor holds alike."""
    config = _config()
    source = demo / "trainer" / "logging_utils.py"
    helper = b"\n\ndef norm_report(grads):\n    return {'train/helper_norm': raw_norm(grads)}  # norm after clipping\n"
    collection = engine.revise(engine.collect(config), config, source, source.read_bytes() + helper)
    text = (
        (demo / "metrics.yaml")
        .read_text(encoding="utf-8")
        .replace(
            "metrics:",
            "code:\n  results:\n    - function: raw_norm\n      says: measures the gradients before clipping\n      facts: {clipping: before}\nmetrics:",
        )
    )
    revised = engine.reregister(collection, config, text)
    assert revised.registry is not None and [k.pattern for k in revised.registry.code] == ["raw_norm()"]
    assert "ML006 trainer/logging_utils.py:25 clipping=after" in _findings(engine.check(revised, config))


def _claims(analysis: engine.Analysis) -> list[str]:
    return [f"{c.span.path}:{c.span.line} {c.metric} {c.facet}={c.value}" for c in analysis.claims]


def test_a_check_after_an_edit_attributes_only_the_edited_files_texts(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The metric index is unchanged by an edit that logs the same keys: the other files'
    claims are the last check's, and the result is what a check from scratch gives."""
    config = _config()
    collection = engine.collect(config)
    before = engine.check(collection, config)
    source = demo / "trainer" / "logging_utils.py"
    revised = engine.revise(collection, config, source, source.read_bytes().replace(b"after clipping", b"before clipping"))
    attributed: list[str] = []
    attribute = views.attribute

    def counted(mention: Mention, *rest: Any) -> list[Claim]:
        attributed.append(mention.path)
        return attribute(mention, *rest)

    monkeypatch.setattr(views, "attribute", counted)
    again = engine.check(revised, config, before)
    assert revised.index is collection.index
    assert set(attributed) == {"trainer/logging_utils.py", "metrics.yaml"}  # the registry's descriptions are read each time
    monkeypatch.setattr(views, "attribute", attribute)
    fresh = engine.check(revised, config)
    assert (_claims(again), again.report) == (_claims(fresh), fresh.report)
    assert _findings(again) == []


def test_a_check_after_an_edit_that_logs_a_new_key_attributes_every_file_again(demo: Path) -> None:
    """A new logged key can make another file's text about it: step.py documents `max_norm`."""
    config = _config()
    collection = engine.collect(config)
    before = engine.check(collection, config)
    added = demo / "trainer" / "extra.py"
    text = b'def log(tracker, value):\n    tracker.log({"train/max_norm": value})\n'
    revised = engine.revise(collection, config, added, text)
    again = engine.check(revised, config, before)
    assert revised.index is not collection.index
    assert "trainer/step.py:12 train/max_norm clipping=after" in _claims(again)
    assert (_claims(again), again.report) == (_claims(engine.check(revised, config)), engine.check(revised, config).report)
