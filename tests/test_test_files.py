"""Test files count for the inventory but state nothing about a metric (the `tests` setting)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, finding_lines, invoke

PROJECT = FIXTURES / "attribution_tests"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(PROJECT, tmp_path / "project", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_an_empty_tests_setting_makes_test_files_speak(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.metriclint]\ntests = []\n")
    assert finding_lines(invoke("check", ".")) == [
        "ML001 checks/conftest.py:1",
        "ML001 checks/norm_test.py:2",
        "ML001 tests/unit/test_step.py:6",
        "ML001 trainer/step.py:8",
    ]


def test_the_tests_setting_replaces_the_default(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metriclint]\ntests = ["checks/*"]\n')
    assert finding_lines(invoke("check", ".")) == ["ML001 tests/unit/test_step.py:6", "ML001 trainer/step.py:8"]


def test_a_test_file_keeps_a_metric_from_being_stale(project: Path) -> None:
    """eval/pass_rate is logged only in tests/: no ML005."""
    assert "ML005" not in invoke("check", ".", "--select", "ML005").output


def test_the_tests_setting_must_be_globs(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metriclint]\ntests = "tests"\n')
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == "pyproject.toml:2:1: 'tests' must be a list of strings\n"
