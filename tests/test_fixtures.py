"""Fixture projects with their exact expected findings (rule, path, line, metric, facet);
a twin (fixtures/X/twin.yaml) is made from its base first (conftest.make_twin)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, Golden, fixture_project, invoke

PROJECTS = sorted(p.parent.name for p in FIXTURES.glob("*/expected.txt") if p.parent.name != "bad_registry")


@pytest.mark.parametrize("name", PROJECTS)
def test_fixture_project(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    monkeypatch.chdir(fixture_project(name, tmp_path))
    result = invoke("check", ".", "--format", "json")
    report = json.loads(result.stdout)
    got = [f"{f['rule']} {f['path']}:{f['line']} {f['metric'] or '-'} {f['facet'] or '-'}\n" for f in report["findings"]]
    unreadable = [f"{f['path']}: {f['message']}" for f in report["findings"] if f["rule"] == "ML900"]
    try:
        golden(FIXTURES / name / "expected.txt", "".join(got))
    except AssertionError as error:  # an unexpected ML900 says why its file could not be read
        raise AssertionError(f"{error}\nML900: {unreadable}" if unreadable else str(error)) from None
    has_errors = any(f["severity"] == "error" for f in report["findings"])
    assert result.exit_code == (1 if has_errors else 0)


def test_bad_registry_reports_every_problem(monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    monkeypatch.chdir(FIXTURES / "bad_registry")
    result = invoke("check", ".")
    assert result.exit_code == 2
    golden(FIXTURES / "bad_registry" / "expected.txt", result.stderr)
    assert "Traceback" not in result.output
