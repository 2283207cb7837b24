"""`metriclint init`: a draft registry that validates, keeps templates and names each dispute."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, invoke

from metriclint.knowledge import registry
from metriclint.knowledge.vocabulary import load_builtin

PROJECT = FIXTURES / "init_project"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(PROJECT, tmp_path / "project", "*.expected", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_init_drafts_the_expected_registry(project: Path) -> None:
    result = invoke("init", ".")
    assert result.exit_code == 0, result.output
    assert result.output == "Wrote metrics.yaml: 4 metrics, 1 with semantics, 1 disagreement to settle.\n"
    assert (project / "metrics.yaml").read_text() == (PROJECT / "metrics.yaml.expected").read_text()


def test_the_draft_passes_registry_validation(project: Path) -> None:
    invoke("init", ".")
    loaded, _ = registry.load(project / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert list(loaded.metrics) == ["perf/step_time", "train/grad_norm", "train/lr", "train/{role}/entropy"]
    assert loaded.metrics["train/{role}/entropy"].aliases == ("entropy_value",)
    assert {f: s.value for f, s in loaded.metrics["train/grad_norm"].semantics.items()} == {"scope": "global", "clipping": "before"}
    assert loaded.metrics["perf/step_time"].semantics == {}  # disputed: left to a human


def test_init_never_overwrites_without_force(project: Path) -> None:
    (project / "metrics.yaml").write_text("version: 1\n")
    result = invoke("init", ".")
    assert result.exit_code == 2
    assert result.stderr == "metrics.yaml:1:1: a registry already exists; pass --force to overwrite it\n"
    assert (project / "metrics.yaml").read_text() == "version: 1\n"
    assert invoke("init", ".", "--force").exit_code == 0
    assert (project / "metrics.yaml").read_text() == (PROJECT / "metrics.yaml.expected").read_text()


def test_with_the_dispute_settled_the_project_checks_against_the_draft(project: Path) -> None:
    invoke("init", ".")
    (project / "trainer/timing.py").write_text((project / "trainer/timing.py").read_text().replace("in ms", "in seconds"))
    assert invoke("check", ".").exit_code == 0


def test_an_empty_project_gets_an_empty_valid_registry(in_tmp: Path) -> None:
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(in_tmp / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert loaded.metrics == {}
