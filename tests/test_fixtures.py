"""Fixture projects with their exact expected findings (rule, path, line, metric, facet)."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, invoke

PROJECTS = sorted(p.parent.name for p in FIXTURES.glob("*/expected.txt") if p.parent.name != "bad_registry")


@pytest.mark.parametrize("name", PROJECTS)
def test_fixture_project(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / name)
    result = invoke("check", ".", "--format", "json")
    report = json.loads(result.stdout)
    got = [
        f"{f['rule']} {f['path']}:{f['line']} {f['metric'] or '-'} {f['facet'] or '-'}" for f in report["findings"]
    ]
    expected = (FIXTURES / name / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert got == expected
    has_errors = any(f["severity"] == "error" for f in report["findings"])
    assert result.exit_code == (1 if has_errors else 0)


def test_bad_registry_reports_every_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "bad_registry")
    result = invoke("check", ".")
    assert result.exit_code == 2
    expected = (FIXTURES / "bad_registry" / "expected.txt").read_text(encoding="utf-8")
    assert result.stderr == expected
    assert "Traceback" not in result.output
