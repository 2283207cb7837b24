"""Rule selection and severity: config keys, command-line flags, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
AFTER = 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n'
STALE = 'def g(grad_norm):\n    """Args:\n        grad_norm: norm before clipping.\n    """  # metriclint: ignore[ML001]\n'


@pytest.fixture
def project(in_tmp: Path) -> Path:
    """Two texts state the same wrong value; scripts/, not tests/, since test files state nothing."""
    return write_project(in_tmp, {"src/a.py": AFTER, "scripts/b.py": AFTER, "src/c.py": STALE}, REGISTRY)


def config(base: Path, body: str) -> None:
    (base / "pyproject.toml").write_text("[tool.metriclint]\n" + body)


def test_everything_runs_by_default(project: Path) -> None:
    assert finding_lines(invoke("check", ".")) == ["ML001 scripts/b.py:3", "ML001 src/a.py:3", "ML010 src/c.py:4"]


def test_select_and_ignore_in_the_config(project: Path) -> None:
    config(project, 'select = ["ML0"]\nignore = ["ML010"]\n')
    assert finding_lines(invoke("check", ".")) == ["ML001 scripts/b.py:3", "ML001 src/a.py:3"]


def test_per_file_ignores(project: Path) -> None:
    config(project, '[tool.metriclint.per-file-ignores]\n"scripts/*" = ["ML001"]\n')
    assert finding_lines(invoke("check", ".")) == ["ML001 src/a.py:3", "ML010 src/c.py:4"]


def test_severity_override_changes_the_exit_status(project: Path) -> None:
    config(project, 'severity = {ML001 = "warning"}\n')
    result = invoke("check", ".")
    assert result.exit_code == 0
    assert "Found 0 errors and 3 warnings" in result.output
    assert invoke("check", ".", "--fail-on", "warning").exit_code == 1


def test_command_line_select_replaces_and_ignore_adds(project: Path) -> None:
    config(project, 'select = ["ML001"]\nignore = ["ML900"]\n')
    assert finding_lines(invoke("check", ".")) == ["ML001 scripts/b.py:3", "ML001 src/a.py:3"]
    assert finding_lines(invoke("check", ".", "--select", "ML0")) == ["ML001 scripts/b.py:3", "ML001 src/a.py:3", "ML010 src/c.py:4"]
    repeated = invoke("check", ".", "--select", "ML001", "--select", "ML010", "--ignore", "ML010")
    assert finding_lines(repeated) == ["ML001 scripts/b.py:3", "ML001 src/a.py:3"]


def test_a_suppression_of_a_rule_that_is_off_is_idle_not_stale(project: Path) -> None:
    assert finding_lines(invoke("check", ".", "--select", "ML010")) == []


def test_fail_on_warning_and_exit_zero(in_tmp: Path) -> None:
    write_project(in_tmp, {"c.py": STALE}, REGISTRY)
    assert invoke("check", ".").exit_code == 0
    assert invoke("check", ".", "--fail-on", "warning").exit_code == 1
    assert invoke("check", ".", "--fail-on", "warning", "--exit-zero").exit_code == 0
    write_project(in_tmp, {"a.py": AFTER})
    assert invoke("check", ".", "--exit-zero").exit_code == 0


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('select = ["ML001", "XX1"]\n', "pyproject.toml:2:20: unknown rule selector 'XX1'; see `metriclint rules`"),
        ('ignore = "ML001"\n', "pyproject.toml:2:10: 'ignore' must be a list of strings, not \"ML001\""),
        (
            '\n[tool.metriclint.severity]\nML001 = "fatal"\n',
            'pyproject.toml:4:9: severity of ML001 must be "error" or "warning", not "fatal"',
        ),
        (
            'per-file-ignores = {"tests/*" = "ML001"}\n',
            "pyproject.toml:2:33: 'per-file-ignores' must map globs to lists of rule codes, not \"ML001\"",
        ),
    ],
)
def test_bad_selection_config_is_exit_2_with_its_line(project: Path, body: str, expected: str) -> None:
    config(project, body)
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == expected + "\n"


def test_unknown_selector_on_the_command_line(project: Path) -> None:
    result = invoke("check", ".", "--select", "ML0O1")
    assert result.exit_code == 2
    assert "unknown rule selector 'ML0O1'" in result.stderr


def test_metriclint_toml_is_found_from_the_checked_path(in_tmp: Path) -> None:
    write_project(in_tmp / "proj", {"metriclint.toml": 'ignore = ["ML001"]\n', "a.py": AFTER}, REGISTRY)
    write_project(in_tmp / "proj", {}, REGISTRY)
    assert invoke("check", "proj").exit_code == 0
    (in_tmp / "proj" / "metriclint.toml").write_text('ignor = ["ML001"]\n')
    result = invoke("check", "proj")
    assert result.exit_code == 2
    assert result.stderr.startswith("proj/metriclint.toml:1:1: unknown key 'ignor'")
