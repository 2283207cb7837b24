"""What the package promises to the machines it is installed on: the Pythons it supports (CI
runs the tests on the lowest and the highest, .ci/run) and nothing newer used by the code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT

from metriclint.base.toml import tomllib

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LOWEST = (3, 10)
NEWER_MODULES = {"tomllib": (3, 11), "wsgiref.types": (3, 11)}  # standard modules newer than LOWEST
GUARD = ROOT / "metriclint" / "base" / "toml.py"  # imports tomllib only where it exists


def _modules() -> list[Path]:
    return sorted((ROOT / "metriclint").rglob("*.py")) + sorted((ROOT / "bench").glob("*.py"))


def test_requires_python_is_the_lowest_version_ci_tests() -> None:
    assert PYPROJECT["project"]["requires-python"] == ">=3.10"
    listed = {c.rsplit(" ", 1)[-1] for c in PYPROJECT["project"]["classifiers"] if re.fullmatch(r".*:: 3\.\d+", c)}
    assert listed == {"3.10", "3.11", "3.12", "3.13"}
    assert PYPROJECT["tool"]["mypy"]["python_version"] == "3.10"


def test_the_code_is_python_3_10_syntax() -> None:
    for path in _modules():
        ast.parse(path.read_text(encoding="utf-8"), str(path), feature_version=LOWEST)


def test_no_module_imports_a_standard_module_newer_than_3_10_unguarded() -> None:
    for path in _modules():
        if path == GUARD:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not imported & set(NEWER_MODULES), path


def test_the_license_file_is_the_license_pyproject_names() -> None:
    assert PYPROJECT["project"]["license"] == "MIT"
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")


def test_the_dependencies_whose_internals_are_used_have_upper_bounds() -> None:
    bounded = {re.split(r"[<>=;]", d, maxsplit=1)[0].strip(): d for d in PYPROJECT["project"]["dependencies"]}
    for name in ("tree-sitter", "tree-sitter-javascript", "tree-sitter-typescript", "tree-sitter-json", "pathspec"):
        assert "<" in bounded[name], bounded[name]


def test_ci_runs_the_readme_test_command() -> None:
    """The README's second Quick start command is the one .ci/run runs first: what a newcomer
    types is what CI proves, extras included."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start.*?```sh\n(.*?)```", readme, re.S)
    assert block is not None
    commands = block.group(1).splitlines()
    assert len(commands) == 2 and "pytest" in commands[1]
    run = [line.split("  #")[0].strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert commands[1] in run
