"""Bad input is exit 2 with `file:line:col: message` (or the option's name), never a
traceback: recursion, huge numbers, unusable paths. And a failure nobody foresaw is one line
and exit 2, with the traceback only on request."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES, invoke, write_project

from metriclint import engine
from metriclint.base import marked_yaml

OK = {"a.py": "x = 1\n"}
DIGITS = "9" * 5000


def _alias_chain() -> str:
    """Each anchor wraps the one before in 90 brackets: shallow as written, 2,700 levels deep once expanded."""
    lines = ["version: 1", "metrics:", "  x0: &a0 " + "[" * 90 + "1" + "]" * 90]
    lines += [f"  x{i}: &a{i} " + "[" * 90 + f"*a{i - 1}" + "]" * 90 for i in range(1, 30)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("registry", "expected"),
    [
        ("version: 1\nmetrics: &a\n  x: *a\n", "r.yaml:2:10: this value contains itself through an alias (a recursive alias)"),
        ("version: 1\nmetrics:\n  x: &a\n    - [*a]\n", "r.yaml:3:6: this value contains itself through an alias (a recursive alias)"),
        ("version: 1\nmetrics:\n  x: " + "[" * 900 + "]" * 900 + "\n", "r.yaml:3:104: invalid YAML: nested deeper than 100 levels"),
        (_alias_chain(), "r.yaml:3:19: aliases nest values deeper than 100 levels"),
        (f"version: 1\nmetrics:\n  x:\n    description: {DIGITS}\n", "r.yaml:4:18: 'description' must be text, not 999"),
        # issue 36: an integer too long to print in decimal (Python refuses past 4,300 digits) was an internal error
        pytest.param("version: 0x" + "f" * 5000 + "\nmetrics: {}\n", "r.yaml:1:10: unsupported version 0xfff", id="hex version"),
        pytest.param("version: 0b" + "1" * 100_000 + "\nmetrics: {}\n", "r.yaml:1:10: unsupported version 0b111", id="binary version"),
        pytest.param("version: " + "9" * 100_000 + "\nmetrics: {}\n", "r.yaml:1:10: unsupported version 999", id="decimal version"),
    ],
)
def test_a_hostile_registry_is_exit_2_at_its_place(in_tmp: Path, registry: str, expected: str) -> None:
    write_project(in_tmp, {**OK, "r.yaml": registry})
    result = invoke("check", ".", "--registry", "r.yaml")
    assert result.exit_code == 2 and result.stderr.startswith(expected), result.stderr


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (f"[tool.metriclint]\nexclude = [{DIGITS}]\n", "pyproject.toml:2:12: invalid TOML: a number of more than 4300 digits"),
        ("[tool.metriclint]\nx = " + "[" * 100_000 + "]" * 100_000 + "\n", "pyproject.toml:2:100004: invalid TOML: nested too deeply"),
        ('[tool.metriclint]\npaths = ["a\\u0000b"]\n', "pyproject.toml:2:10: 'paths' holds a NUL character, which no path can"),
        ('[tool.metriclint]\nregistry = "a\\u0000b"\n', "pyproject.toml:2:12: 'registry' holds a NUL character, which no path can"),
    ],
)
def test_a_hostile_config_is_exit_2_at_its_place(in_tmp: Path, config: str, expected: str) -> None:
    write_project(in_tmp, {**OK, "pyproject.toml": config})
    result = invoke("check", ".")
    assert result.exit_code == 2 and result.stderr == expected + "\n"


def test_no_settings_value_writes_a_control_character_to_the_terminal(in_tmp: Path) -> None:
    """A value quoted in a warning is escaped as in a problem: a 'paths' entry carried an
    escape sequence (a window title here) and a bell onto the user's terminal (issue 36)."""
    settings = '[tool.metriclint]\npaths = [".", "\\u001b]0;title\\u0007x"]\nexclude = ["\\u001b[31mRED", "\\u009b1m"]\n'
    write_project(in_tmp, {**OK, "pyproject.toml": settings})
    result = invoke("check", ".")
    assert "pyproject.toml:2:15: 'paths' entry '\\x1b]0;title\\x07x' matches nothing" in result.stderr, result.stderr
    assert not {"\x1b", "\x07", "\x9b"} & set(result.output + result.stderr)


def test_a_registry_path_too_long_for_the_file_system_is_an_error_at_the_option(in_tmp: Path) -> None:
    write_project(in_tmp, OK)
    result = invoke("check", ".", "--registry", "r" * 5000)
    assert result.exit_code == 2
    assert result.stderr == "--registry: registry file cannot be used: File name too long (given with --registry)\n"


def test_a_deeply_nested_baseline_is_exit_2_at_its_place(in_tmp: Path) -> None:
    write_project(in_tmp, {**OK, "base.json": "[" * 100_000 + "]" * 100_000})
    result = invoke("check", ".", "--baseline", "base.json")
    assert result.exit_code == 2 and result.stderr == "base.json:1:100000: invalid baseline: nested too deeply\n"


@pytest.mark.parametrize(
    ("target", "expected"),
    [("folder", "cannot write folder: is a folder"), ("missing/base.json", "cannot write missing/base.json: No such file or directory")],
)
def test_write_baseline_where_no_file_can_be_is_an_error_at_the_option(in_tmp: Path, target: str, expected: str) -> None:
    write_project(in_tmp, OK)
    (in_tmp / "folder").mkdir()
    result = invoke("check", ".", "--write-baseline", target)
    assert result.exit_code == 2 and result.stderr == f"--write-baseline: {expected}\n"
    assert list((in_tmp / "folder").iterdir()) == []  # no temporary file left behind


def _break_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(engine, "analyse", broken)
    monkeypatch.setattr(engine, "judge", broken)


def test_an_internal_error_is_one_line_and_exit_2(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(in_tmp, OK)
    _break_the_engine(monkeypatch)
    monkeypatch.delenv("METRICLINT_DEBUG", raising=False)
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == "metriclint: internal error: ZeroDivisionError: division by zero second line; please report it\n"


@pytest.mark.parametrize("how", ["--verbose", "METRICLINT_DEBUG"])
def test_an_internal_errors_traceback_is_printed_on_request(in_tmp: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    write_project(in_tmp, OK)
    _break_the_engine(monkeypatch)
    if how == "METRICLINT_DEBUG":
        monkeypatch.setenv("METRICLINT_DEBUG", "1")
    result = invoke(*(["--verbose"] if how == "--verbose" else []), "check", ".")
    assert result.exit_code == 2
    assert result.stderr.startswith("Traceback") and result.stderr.endswith(
        "ZeroDivisionError: division by zero second line; please report it\n"
    )


def test_the_console_script_shows_no_traceback_for_a_hostile_registry(in_tmp: Path) -> None:
    """The same as a user's shell sees it, in a process of its own (recursion in-process differs)."""
    write_project(in_tmp, {**OK, "r.yaml": "version: 1\nmetrics: &a\n  x: *a\n"})
    result = subprocess.run(
        [sys.executable, "-m", "metriclint", "check", ".", "--registry", "r.yaml"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr and result.stderr.startswith("r.yaml:2:10:")


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML built without libyaml")
def test_a_users_yaml_is_composed_by_libyaml_only_within_the_depth_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[type] = []
    original = yaml.compose

    def recording(text: str, Loader: type) -> object:  # noqa: N803 - PyYAML's spelling
        used.append(Loader)
        return original(text, Loader=Loader)

    monkeypatch.setattr(yaml, "compose", recording)
    assert marked_yaml.load("version: 1\nmetrics: {a: [1, 2]}\n", "r.yaml")[1] == []
    problems = marked_yaml.load("x: " + "[" * 150 + "]" * 150 + "\n", "r.yaml")[1]
    assert used == [yaml.CSafeLoader, marked_yaml._BoundedLoader]
    assert [str(p) for p in problems] == ["r.yaml:1:103: invalid YAML: nested deeper than 100 levels"]


@pytest.mark.parametrize("registry", sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.glob("*/metrics.yaml")))
def test_libyaml_and_pyyaml_make_the_same_nodes_of_a_registry(monkeypatch: pytest.MonkeyPatch, registry: str) -> None:
    text = (FIXTURES / registry).read_text(encoding="utf-8")
    fast = marked_yaml.load(text, registry)
    monkeypatch.setattr(marked_yaml, "_FAST_LOADER", None)
    assert fast == marked_yaml.load(text, registry)
