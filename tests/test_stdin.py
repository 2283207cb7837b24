"""`metriclint check --stdin-filename PATH -`: an editor without LSP pipes its unsaved buffer
in and gets the findings touching that file, as if the file held the buffer."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, copy_fixture

from metriclint.cli import main


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = copy_fixture(ROOT / "fixtures" / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    return project


def _check(text: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args], input=text.encode(), catch_exceptions=False)
    return result.exit_code, result.output


def test_the_buffer_is_checked_in_place_of_the_file(demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    saved = source.read_text(encoding="utf-8")
    assert _check(saved, "--stdin-filename", "trainer/logging_utils.py", "-") == (
        1,
        'trainer/logging_utils.py:10:34: ML001 train/grad_norm: docstring says clipping=after ("after clipping"); '
        "registry says before (metrics.yaml:7) [error]\nFound 1 error and 0 warnings in 1 file.\n",
    )
    fixed = saved.replace("after clipping", "before clipping")
    assert _check(fixed, "--stdin-filename", "trainer/logging_utils.py", "-", "--quiet") == (0, "")
    assert source.read_text(encoding="utf-8") == saved


def test_only_the_findings_touching_the_file_are_reported(demo: Path) -> None:
    step = (demo / "trainer" / "step.py").read_text(encoding="utf-8")
    assert _check(step, "--stdin-filename", "trainer/step.py", "-", "--quiet") == (0, "")


def test_dash_and_stdin_filename_go_together(demo: Path) -> None:
    assert _check("", "-")[0] == 2
    assert _check("", "--stdin-filename", "trainer/step.py", ".")[0] == 2


def test_findings_in_other_files_are_not_reported(demo: Path) -> None:
    # The registry piped in: the docstring that contradicts it is in another file, which an
    # editor showing the registry's buffer cannot place; as ruff, only the named file's findings,
    # and the summary counts that one file.
    registry = (demo / "metrics.yaml").read_text(encoding="utf-8")
    assert _check(registry, "--stdin-filename", "metrics.yaml", "-") == (0, "All checks passed (1 file).\n")
    source = (demo / "trainer" / "logging_utils.py").read_text(encoding="utf-8")
    assert _check(source, "--stdin-filename", "trainer/logging_utils.py", "-")[1].endswith("Found 1 error and 0 warnings in 1 file.\n")
