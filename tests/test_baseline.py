"""The baseline: write it, edit elsewhere, only new findings come back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, finding_lines, invoke

NEW = '\n\ndef log_new(grad_norm):\n    """Args:\n        grad_norm: The post-clip norm.\n    """\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(FIXTURES / "suppressions", tmp_path / "proj")
    monkeypatch.chdir(tmp_path / "proj")
    return tmp_path / "proj"


def test_round_trip(project: Path) -> None:
    before = finding_lines(invoke("check", "."))
    assert len(before) == 8
    written = invoke("check", ".", "--write-baseline", "baseline.json")
    assert written.exit_code == 0 and written.stdout == ""
    assert written.stderr == "Recorded 8 findings in baseline.json.\n"

    stale = project / "stale.py"
    stale.write_text("# An unrelated new first line moves every finding down.\n\n" + stale.read_text())
    clean = invoke("check", ".", "--baseline", "baseline.json")
    assert clean.exit_code == 0, clean.output
    assert finding_lines(clean) == []
    assert finding_lines(invoke("check", ".")) != before  # the lines did move

    stale.write_text(stale.read_text() + NEW)
    new = invoke("check", ".", "--baseline", "baseline.json")
    assert new.exit_code == 1
    assert finding_lines(new) == ["ML001 stale.py:35"]


def test_the_file_is_sorted_stable_and_line_free(project: Path) -> None:
    invoke("check", ".", "--write-baseline", "baseline.json")
    text = (project / "baseline.json").read_text()
    document = json.loads(text)
    entries = document["findings"]
    assert document["version"] == 1
    assert entries == sorted(entries, key=lambda e: (e["rule"], e["path"], e["metric"], e["facet"], e["phrase"]))
    assert set(entries[0]) == {"rule", "path", "metric", "facet", "phrase", "count"}
    recorded = {"rule": "ML001", "path": "stale.py", "metric": "train/grad_norm", "facet": "clipping", "phrase": "after clipping"}
    assert {**recorded, "count": 2} in entries
    invoke("check", ".", "--write-baseline", "baseline.json")
    assert (project / "baseline.json").read_text() == text


def test_a_repeated_finding_beyond_the_recorded_count_is_new(project: Path) -> None:
    invoke("check", ".", "--write-baseline", "baseline.json")
    stale = project / "stale.py"
    stale.write_text(stale.read_text() + NEW.replace("The post-clip norm", "Norm after clipping"))
    assert finding_lines(invoke("check", ".", "--baseline", "baseline.json")) == ["ML001 stale.py:33"]


def test_rewriting_drops_fixed_entries(project: Path) -> None:
    invoke("check", ".", "--write-baseline", "baseline.json")
    (project / "stale.py").unlink()
    invoke("check", ".", "--baseline", "baseline.json", "--write-baseline", "baseline.json")
    entries = json.loads((project / "baseline.json").read_text())["findings"]
    assert [e["path"] for e in entries] == ["silenced.py"]


def test_paths_are_relative_to_the_baseline_file(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    invoke("check", ".", "--write-baseline", "baseline.json")
    monkeypatch.chdir(project.parent)
    assert finding_lines(invoke("check", "proj", "--baseline", "proj/baseline.json")) == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{\n  nope", "baseline.json:2:3: invalid JSON: Expecting property name enclosed in double quotes"),
        ('{"findings": []}', 'baseline.json:1:1: not a metriclint baseline (expected "version": 1); rewrite it with --write-baseline'),
        (
            '{"version": 1.0, "findings": []}',
            'baseline.json:1:13: not a metriclint baseline (expected "version": 1, not 1.0); rewrite it with --write-baseline',
        ),
        (
            '{"version": 1, "findings": {}}',
            "baseline.json:1:28: 'findings' must be a list of entries, not {}; rewrite it with --write-baseline",
        ),
        (
            '{"version": 1,\n "findings": [\n  {"rule": "ML001", "path": "a.py", "metric": "m", "facet": "f", "phrase": "p", "count": "3"},\n'
            '  {"rule": "ML001", "path": ["a.py"], "metric": "m", "facet": "f", "phrase": "p", "count": 1},\n  7,\n  {"rule": "ML001"}]}',
            "baseline.json:3:90: 'count' must be a positive whole number, not \"3\"; rewrite it with --write-baseline\n"
            "baseline.json:4:29: 'path' must be a string, not [\"a.py\"]; rewrite it with --write-baseline\n"
            "baseline.json:5:3: a baseline entry must be an object, not 7; rewrite it with --write-baseline\n"
            "baseline.json:6:3: a baseline entry needs path, metric, facet, phrase, count; rewrite it with --write-baseline",
        ),
    ],
)
def test_a_bad_baseline_is_exit_2(project: Path, content: str, expected: str) -> None:
    (project / "baseline.json").write_text(content)
    result = invoke("check", ".", "--baseline", "baseline.json")
    assert result.exit_code == 2
    assert result.stderr == expected + "\n"
