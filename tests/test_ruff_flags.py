"""The flags a ruff user reaches for: `check --fix`, `--show-settings`, `--show-files`,
`--exclude`/`--extend-exclude`/`--extend-select` on the command line, `--output-format`,
`--config KEY=VALUE`, and `audit -o`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
AFTER = 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n'


@pytest.fixture
def project(in_tmp: Path) -> Path:
    return write_project(
        in_tmp, {"a.py": AFTER, "legacy/b.py": AFTER, "pyproject.toml": '[tool.metriclint]\nexclude = ["legacy"]\n'}, REGISTRY
    )


def test_check_fix_applies_the_fixes_then_reports_what_is_left(project: Path) -> None:
    result = invoke("check", "--fix", ".")
    assert result.exit_code == 0, result.output
    assert "before clipping" in (project / "a.py").read_text(encoding="utf-8")
    assert result.stdout == "All checks passed (1 file).\n" and "Fixed 1 finding in 1 file." in result.stderr


def test_show_files_and_show_settings(project: Path) -> None:
    assert invoke("check", "--show-files").output == "a.py\n"
    assert invoke("check", "--show-files", "--exclude", "a.py").output == "legacy/b.py\n"  # replaces the settings' exclude
    shown = invoke("check", "--show-settings").output.splitlines()
    assert 'registry = "metrics.yaml"' in shown and 'exclude = ["legacy"]' in shown and 'select = ["ML"]' in shown


def test_exclude_options_on_the_command_line(project: Path) -> None:
    assert finding_lines(invoke("check", "--exclude", "nothing")) == ["ML001 a.py:3", "ML001 legacy/b.py:3"]
    assert finding_lines(invoke("check", "--extend-exclude", "a.py")) == [
        "ML005 metrics.yaml:3"
    ]  # legacy/ and a.py left out: nothing logs it


def test_extend_select_adds_to_the_selection(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metriclint]\nselect = ["ML010"]\n', encoding="utf-8")
    assert finding_lines(invoke("check")) == []
    assert finding_lines(invoke("check", "--extend-select", "ML001")) == ["ML001 a.py:3", "ML001 legacy/b.py:3"]


def test_output_format_is_format(project: Path) -> None:
    assert invoke("check", "--output-format", "json").output == invoke("check", "--format", "json").output
    assert json.loads(invoke("audit", "--output-format", "json").output)["version"] == 1


def test_config_key_value_settings_over_the_files(project: Path) -> None:
    assert finding_lines(invoke("check", "--config", "exclude = []")) == ["ML001 a.py:3", "ML001 legacy/b.py:3"]
    assert finding_lines(invoke("check", "--config", 'ignore = ["ML001"]', "--config", "exclude=[]")) == []
    bad = invoke("check", "--config", 'select = ["XX"]')
    assert (bad.exit_code, bad.stderr) == (2, "--config: unknown rule selector 'XX'; see `metriclint rules`\n")
    broken = invoke("check", "--config", "paths = [")
    assert broken.exit_code == 2 and broken.stderr.startswith("--config: 'paths = [' is neither a file nor KEY = VALUE in TOML")


def test_audit_writes_to_an_output_file(project: Path) -> None:
    result = invoke("audit", "--format", "json", "-o", "audit.json")
    assert result.exit_code == 1 and result.stdout == ""
    assert json.loads((project / "audit.json").read_text(encoding="utf-8"))["summary"]["contradicted"] == 1


def test_help_says_what_config_takes() -> None:
    shown = " ".join(invoke("check", "--help").output.split())
    assert "--config FILE|KEY=VALUE" in shown and "else its top level" in shown
