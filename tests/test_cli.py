"""The command line as users and CI see it: output, exit codes, configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, Golden, copy_fixture, invoke, write_project

DEMO_LINE = (
    "fixtures/demo/trainer/logging_utils.py:10:34: ML001 train/grad_norm: docstring says clipping=after "
    '("after clipping"); registry says before (fixtures/demo/metrics.yaml:7) [error]'
)


@pytest.fixture
def repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES.parent)
    return FIXTURES.parent


def test_demo_prints_the_contradiction(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == DEMO_LINE


def test_demo_with_the_docstring_corrected_is_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    module = tmp_path / "demo" / "trainer" / "logging_utils.py"
    module.write_text(module.read_text().replace("Gradient norm after clipping.", "Global gradient L2 norm before clipping."))
    monkeypatch.chdir(tmp_path)
    result = invoke("check", "demo")
    assert result.exit_code == 0, result.output
    assert result.output == "All checks passed (3 files).\n"


def test_json_report_matches_golden(repo_root: Path, golden: Golden) -> None:
    result = invoke("check", "fixtures/demo", "--format", "json")
    golden("demo_check.json", result.output)
    assert json.loads(result.output)["findings"][0]["related"][0]["text"] == "clipping: before"


@pytest.mark.slow
def test_two_runs_print_the_same_bytes(repo_root: Path) -> None:
    assert invoke("check", "fixtures", "--format", "json").output == invoke("check", "fixtures", "--format", "json").output


def test_quiet_prints_findings_only(repo_root: Path) -> None:
    assert invoke("check", "fixtures/demo", "-q").output == DEMO_LINE + "\n"


def test_registry_option_wins(repo_root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text("version: 1\nmetrics:\n  train/grad_norm:\n    semantics: {clipping: after}\n")
    assert invoke("check", "fixtures/demo", "--registry", str(other)).exit_code == 0


def test_missing_registry_option_is_a_usage_error(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo", "--registry", "nope.yaml")
    assert result.exit_code == 2
    assert result.stderr == "nope.yaml: registry file not found (given with --registry)\n"


def test_unknown_format_is_a_usage_error(repo_root: Path) -> None:
    assert invoke("check", "fixtures/demo", "--format", "xml").exit_code == 2


def test_pyproject_settings_resolve_against_its_folder(in_tmp: Path) -> None:
    write_project(
        in_tmp / "proj",
        {
            "pyproject.toml": '[tool.metriclint]\nregistry = "meta/semantics.yaml"\npaths = ["src"]\nexclude = ["src/skip_*"]\n',
            "meta/semantics.yaml": "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n",
            "src/a.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
            "src/skip_b.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
            "outside.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
        },
    )
    result = invoke("check", "proj/src")
    assert result.exit_code == 1
    assert result.output.splitlines()[0].startswith("proj/src/a.py:3:")
    assert "skip_b" not in result.output and "outside" not in result.output


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[tool.metriclint]\nregistri = "m.yaml"\n',
            "pyproject.toml:2:1: unknown key 'registri' in [tool.metriclint]; expected one of: registry, extend, paths, exclude, extend-exclude, tests, select, extend-select, ignore, extend-ignore, per-file-ignores, severity, tooltips, log-functions, code-knowledge, max-file-size, max-cache-size",
        ),
        ('[tool.metriclint]\npaths = "src"\n', "pyproject.toml:2:9: 'paths' must be a list of strings, not \"src\""),
        ('[tool.metriclint]\nregistry = "absent.yaml"\n', "pyproject.toml:2:12: registry file 'absent.yaml' not found"),
        ("[tool.metriclint\n", "pyproject.toml:1:17: invalid TOML: Expected ']' at the end of a table declaration"),
    ],
)
def test_bad_config_is_exit_2_with_position(in_tmp: Path, toml: str, expected: str) -> None:
    (in_tmp / "pyproject.toml").write_text(toml)
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == expected + "\n"


def test_config_file_option_resolves_against_cwd(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "conf/lint.toml": '[tool.metriclint]\nregistry = "reg.yaml"\n',
            "reg.yaml": "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n",
            "a.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
        },
    )
    assert invoke("check", ".", "--config", "conf/lint.toml").exit_code == 1


def test_unreadable_file_is_a_warning_and_the_run_goes_on(in_tmp: Path) -> None:
    write_project(in_tmp, {"bad.py": "def (\n", "good.py": "x = 1\n"})
    result = invoke("check", ".")
    assert result.exit_code == 0
    assert "bad.py:1:5: ML900 cannot parse Python: invalid syntax" in result.output


def test_rules_lists_every_rule_once() -> None:
    from metriclint.checks import RULES

    lines = invoke("rules").output.splitlines()
    assert [line.split()[:3] for line in lines] == [[r.code, r.name, r.severity.value] for r in RULES]
    assert lines[0].endswith(RULES[0].summary)


def test_explain_prints_the_rule_docs_and_examples() -> None:
    from metriclint.checks import ML001

    result = invoke("explain", "ml001")
    assert result.exit_code == 0
    parts = (ML001.summary, ML001.why, ML001.fix, "Bad example", "Good example", "grad_norm: Norm after clipping.")
    for part in (*parts, "-> ML001 train.py:5", "# metriclint: ignore[ML001] reason"):
        assert part in result.output


def test_explain_unknown_rule_is_a_usage_error() -> None:
    result = invoke("explain", "ML123")
    assert result.exit_code == 2
    assert result.stderr.startswith("unknown rule 'ML123'; known rules: ML001, ML002")


def test_changed_only_reports_findings_touching_the_changed_files(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "a.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
            "b.py": 'def g(grad_norm):\n    """Args:\n        grad_norm: the post-clip norm.\n    """\n',
        },
        "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n",
    )
    assert [line.split(":")[0] for line in invoke("check", "--changed-only", "b.py", "-q").output.splitlines()] == ["b.py"]
    assert [line.split(":")[0] for line in invoke("check", "--changed-only", "metrics.yaml", "-q").output.splitlines()] == ["a.py", "b.py"]
    assert invoke("check", "--changed-only", "-q").output == ""


def test_dash_v_prints_the_version() -> None:
    from metriclint import __version__

    assert invoke("-V").output == f"metriclint, version {__version__}\n"


def test_statistics_print_a_count_per_rule_instead_of_the_findings(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo", "--statistics")
    assert (result.exit_code, result.stdout) == (1, "    1\tML001\tregistry-contradiction\n")


def test_output_file_holds_what_would_be_printed(repo_root: Path, tmp_path: Path) -> None:
    printed = invoke("check", "fixtures/demo", "--format", "json").stdout
    result = invoke("check", "fixtures/demo", "--format", "json", "--output-file", str(tmp_path / "report.json"))
    assert (result.exit_code, result.stdout) == (1, "")
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == printed


def test_a_bad_option_value_is_not_shown_as_a_place_in_a_file(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo", "--jobs", "0")
    assert (result.exit_code, result.stderr) == (2, "--jobs: must be at least 1, not 0\n")


def test_fix_diff_says_what_it_would_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(copy_fixture(FIXTURES / "demo", tmp_path / "demo"))
    result = invoke("fix", "--diff", ".")
    assert result.stderr.splitlines()[-1] == "Would fix 1 finding in 1 file; 0 findings left."


def test_a_settings_file_that_cannot_be_read_is_an_option_error_not_a_line(in_tmp: Path) -> None:
    # As --registry's: the file named, no line or column it does not have.
    result = invoke("check", ".", "--config", "nope.toml")
    assert (result.exit_code, result.stderr) == (2, "nope.toml: settings file not found (given with --config)\n")


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("# settings\n\ntool.metriclint.registry = 1\n", "pyproject.toml:3:28: 'registry' must be a string (a path), not 1"),
        (
            '[tool]\nname = "x"\nmetriclint.select = [\n  "ML001",\n]\nmetriclint.paths = "src"\n',
            "pyproject.toml:6:20: 'paths' must be a list of strings, not \"src\"",
        ),
        ('[tool.metriclint]\nregistry_path = "m.yaml"\n', "pyproject.toml:2:1: unknown key 'registry_path'"),
    ],
)
def test_a_settings_problem_is_at_the_line_the_toml_parser_sets_it(in_tmp: Path, toml: str, expected: str) -> None:
    (in_tmp / "pyproject.toml").write_text(toml)
    result = invoke("check", ".")
    assert result.exit_code == 2 and result.stderr.startswith(expected), result.stderr
