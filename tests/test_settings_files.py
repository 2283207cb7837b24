"""Settings files as ruff users write them: gitignore-style patterns, kebab-case keys, `extend`,
`extend-select`/`extend-ignore`/`extend-exclude`, any TOML given with --config, and a warning
for a path or pattern that matches nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, write_project

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
AFTER = 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n'


def _files(output: str) -> list[str]:
    return sorted(line.split(":", 1)[0] for line in output.splitlines() if ": ML" in line)


@pytest.mark.parametrize("pattern", ["tests", "tests/", "/tests", "**/tests", "tests/*", "tests/**"])
def test_exclude_patterns_mean_what_they_mean_in_ruff(in_tmp: Path, pattern: str) -> None:
    write_project(
        in_tmp,
        {"pyproject.toml": f'[tool.metriclint]\ntests = []\nexclude = ["{pattern}"]\n', "tests/a.py": AFTER, "b.py": AFTER},
        REGISTRY,
    )
    result = invoke("check", ".")
    assert _files(result.output) == ["b.py"]
    assert result.stderr == ""


def test_a_pattern_with_a_slash_is_anchored_at_the_project_root(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "pyproject.toml": '[tool.metriclint]\ntests = []\nexclude = ["/gen"]\nextend-exclude = ["src/old.py"]\n',
            "gen/a.py": AFTER,
            "src/gen/b.py": AFTER,
            "src/old.py": AFTER,
            "old.py": AFTER,
        },
        REGISTRY,
    )
    assert _files(invoke("check", ".").output) == ["old.py", "src/gen/b.py"]


def test_a_pattern_or_a_path_that_matches_nothing_is_a_warning(in_tmp: Path) -> None:
    write_project(
        in_tmp, {"pyproject.toml": '[tool.metriclint]\npaths = ["srcc", "b.py"]\nexclude = ["biuld/"]\n', "b.py": AFTER}, REGISTRY
    )
    result = invoke("check")
    assert result.exit_code == 1
    assert "warning: pyproject.toml:2:10: 'paths' entry 'srcc' matches nothing\n" in result.stderr
    assert "warning: 'exclude' pattern 'biuld/' matches nothing under .\n" in result.stderr


def test_per_file_ignores_take_gitignore_style_patterns(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "pyproject.toml": '[tool.metriclint.per-file-ignores]\n"scripts/" = ["ML001"]\n"*_gen.py" = ["ML001"]\n',
            "scripts/deep/a.py": AFTER,
            "pkg/x_gen.py": AFTER,
            "pkg/y.py": AFTER,
        },
        REGISTRY,
    )
    assert _files(invoke("check", ".").output) == ["pkg/y.py"]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("lint.toml", '[tool.metriclint]\nignore = ["ML001"]\n'),
        ("lint.toml", 'ignore = ["ML001"]\n'),
        ("pyproject.toml", '[tool.metriclint]\nignore = ["ML001"]\n'),
    ],
)
def test_config_takes_a_top_level_table_or_tool_metriclint_in_any_toml(in_tmp: Path, name: str, content: str) -> None:
    write_project(in_tmp, {f"conf/{name}": content, "a.py": AFTER}, REGISTRY)
    result = invoke("check", ".", "--config", f"conf/{name}")
    assert (result.exit_code, _files(result.output)) == (0, [])


def test_a_metriclint_toml_may_hold_a_tool_metriclint_table(in_tmp: Path) -> None:
    write_project(in_tmp, {".metriclint.toml": '[tool.metriclint]\nignore = ["ML001"]\n', "a.py": AFTER}, REGISTRY)
    assert invoke("check", ".").exit_code == 0


def test_snake_case_keys_are_read_with_a_deprecation_warning(in_tmp: Path) -> None:
    write_project(in_tmp, {"pyproject.toml": '[tool.metriclint]\nlog_functions = ["emit"]\n', "a.py": "emit({'train/x': 1})\n"})
    snake = invoke("audit", "--format", "json")
    assert "warning: pyproject.toml:2:1: 'log_functions' is deprecated; write 'log-functions'\n" in snake.stderr
    (in_tmp / "pyproject.toml").write_text('[tool.metriclint]\nlog-functions = ["emit"]\n', encoding="utf-8")
    kebab = invoke("audit", "--format", "json")
    assert kebab.stderr == "" and kebab.stdout == snake.stdout and '"train/x"' in kebab.stdout


def test_extend_starts_from_another_file_and_extend_keys_add_to_it(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "shared/base.toml": 'registry = "reg.yaml"\nignore = ["ML010"]\nextend-ignore = ["ML005"]\n',
            "shared/reg.yaml": REGISTRY,
            "proj/pyproject.toml": '[tool.metriclint]\nextend = "../shared/base.toml"\nextend-ignore = ["ML004"]\n',
            "proj/a.py": AFTER + "# metriclint: ignore[ML002] stale\nx = {'train/unregistered': 1}\n",
        },
    )
    result = invoke("check", "proj", "--fail-on", "warning")
    assert _files(result.output) == ["proj/a.py"]  # ML001 only: ML010 ignored by the base, ML004 by the project
    assert "registry says before (shared/reg.yaml:" in result.output


def test_extend_select_adds_to_select(in_tmp: Path) -> None:
    write_project(in_tmp, {"pyproject.toml": '[tool.metriclint]\nselect = ["ML005"]\nextend-select = ["ML001"]\n', "a.py": AFTER}, REGISTRY)
    assert "ML001" in invoke("check", ".").output


def test_extend_in_a_circle_is_an_error_at_its_line(in_tmp: Path) -> None:
    write_project(in_tmp, {"a.toml": 'extend = "b.toml"\n', "b.toml": 'extend = "a.toml"\n', "x.py": AFTER})
    result = invoke("check", ".", "--config", "a.toml")
    assert result.exit_code == 2 and "b.toml:1:10: 'extend' makes a circle through a.toml" in result.stderr


@pytest.mark.parametrize("repository", [False, True])
def test_a_settings_file_above_a_project_counts_only_inside_one_repository(in_tmp: Path, repository: bool) -> None:
    """Outside a repository, a metriclint.toml in /tmp or a home folder once took over every
    project below it; inside one, it is the repository's."""
    write_project(in_tmp, {"metriclint.toml": 'ignore = ["ML001"]\n', "proj/a.py": AFTER, "proj/metrics.yaml": REGISTRY, "b.py": AFTER})
    if repository:
        (in_tmp / ".git").mkdir()
    result = invoke("check", "proj")
    assert (result.exit_code, _files(result.output)) == ((0, []) if repository else (1, ["proj/a.py"]))


@pytest.mark.parametrize(
    ("setting", "entry"),
    [
        ("paths", '["src", "../../../../etc"]'),
        ("registry", '"/etc/hostname"'),
        ("registry", '"../metrics.yaml"'),
        ("code-knowledge", '["../metrics.yaml"]'),
    ],
)
def test_paths_and_registry_in_settings_stay_inside_the_project(in_tmp: Path, setting: str, entry: str) -> None:
    write_project(
        in_tmp, {"proj/pyproject.toml": f"[tool.metriclint]\n{setting} = {entry}\n", "proj/src/a.py": AFTER, "metrics.yaml": REGISTRY}
    )
    result = invoke("check", "proj")
    outside = entry.split(", ")[-1].strip('[]"')
    column = 1 + len(f"{setting} = ") + entry.index(f'"{outside}"')  # where the entry is written
    assert result.exit_code == 2
    assert (
        f"proj/pyproject.toml:2:{column}: '{setting}' entry '{outside}' is outside the project (proj); give it on the command line instead"
        in result.output
    )


def test_a_registry_outside_the_project_may_be_given_on_the_command_line(in_tmp: Path) -> None:
    write_project(in_tmp, {"proj/pyproject.toml": "[tool.metriclint]\n", "proj/a.py": AFTER, "shared/metrics.yaml": REGISTRY})
    result = invoke("check", "proj", "--registry", str(in_tmp / "shared/metrics.yaml"))
    assert result.exit_code == 1 and _files(result.output) == ["proj/a.py"]


@pytest.mark.parametrize(
    ("setting", "entry", "shown"),
    [
        ("paths", '["src", "docs"]', "docs"),
        ("registry", '"shared/metrics.yaml"', "shared/metrics.yaml"),
        ("code-knowledge", '["shared/helpers.yaml"]', "shared/helpers.yaml"),
    ],
)
def test_a_link_in_settings_that_leads_out_of_the_project_is_refused(in_tmp: Path, setting: str, entry: str, shown: str) -> None:
    write_project(
        in_tmp,
        {
            "proj/pyproject.toml": f"[tool.metriclint]\n{setting} = {entry}\n",
            "proj/src/a.py": AFTER,
            "proj/metrics.yaml": REGISTRY,
            "elsewhere/metrics.yaml": REGISTRY,
            "elsewhere/helpers.yaml": "version: 1\ncode: []\n",
            "elsewhere/b.py": AFTER,
        },
    )
    (in_tmp / "proj" / "docs").symlink_to(in_tmp / "elsewhere")
    (in_tmp / "proj" / "shared").symlink_to(in_tmp / "elsewhere")
    result = invoke("check", "proj")
    column = 1 + len(f"{setting} = ") + entry.index(f'"{shown}"')
    assert result.exit_code == 2
    assert (
        f"proj/pyproject.toml:2:{column}: '{setting}' entry '{shown}' is outside the project (proj); give it on the command line instead"
        in result.output
    )


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('severity = {"ML010" = [1, 2]}', 'metriclint.toml:2:23: severity of ML010 must be "error" or "warning", not [1, 2]'),
        ("severity = { ML010 = {} }", 'metriclint.toml:2:22: severity of ML010 must be "error" or "warning", not {}'),
        (
            'tooltips = ["\\u0000"]',
            "metriclint.toml:2:13: 'tooltips' must be an array of tables: [[tool.metriclint.tooltips]], not \"\\u0000\"",
        ),
        ('paths = "src"  # registry = 1', "metriclint.toml:2:9: 'paths' must be a list of strings, not \"src\""),
        ('text = "registry = 7"\nregistry = 2020-01-01', "metriclint.toml:2:1: unknown key 'text' in [tool.metriclint]; expected one of: "),
        ('"registry" = 2020-01-01', "metriclint.toml:2:14: 'registry' must be a string (a path), not 2020-01-01"),
        ("tool.metriclint.max-file-size = -1", "metriclint.toml:2:33: 'max-file-size' must be a positive number of bytes, not -1"),
        ("exclude = ['build', '!']", "metriclint.toml:2:21: 'exclude' pattern \"!\" is not a valid gitignore-style pattern"),
        (
            '[tool.metriclint.per-file-ignores]\n"!" = ["ML001"]',
            "metriclint.toml:3:1: 'per-file-ignores' pattern \"!\" is not a valid gitignore-style pattern",
        ),
        (
            '[[tool.metriclint.tooltips]]\npath = "ui.js"\n\n[[tool.metriclint.tooltips]]\npath = "b.js"\nmatch = 1.5',
            "metriclint.toml:7:9: unknown match mode 1.5; expected one of: ",
        ),
    ],
)
def test_a_bad_setting_is_reported_where_it_is_written_with_the_value_as_written(in_tmp: Path, settings: str, expected: str) -> None:
    """Found in the parsed document, not by searching the text: a key named in a comment or a
    string, a quoted or dotted key, and a value tomllib turns into a date or a list."""
    write_project(in_tmp, {"metriclint.toml": f"# metriclint's settings\n{settings}\n", "a.py": AFTER, "metrics.yaml": REGISTRY})
    result = invoke("check", ".")
    assert result.exit_code == 2 and "internal error" not in result.output
    assert result.stderr.startswith(expected), result.stderr


@pytest.mark.parametrize("args", [(), (".",), ("src", "legacy/old.py")])
def test_discovered_paths_choose_what_is_read(in_tmp: Path, args: tuple[str, ...]) -> None:
    # `paths` in a discovered settings file, as with --config: the project is what they name,
    # and a path named on the command line is read too.
    write_project(in_tmp, {"pyproject.toml": '[tool.metriclint]\npaths = ["src"]\n', "src/a.py": AFTER, "legacy/old.py": AFTER}, REGISTRY)
    expected = ["legacy/old.py", "src/a.py"] if "legacy/old.py" in args else ["src/a.py"]
    assert _files(invoke("check", *args).output) == expected
