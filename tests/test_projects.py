"""Project discovery, as ruff's: each checked path finds its settings and registry upward, its
project is read whole, and only the findings in the checked paths are reported."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, copy_fixture, invoke, write_project

from metriclint.base import files
from metriclint.report import once

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
AFTER = 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n'
POST_CLIP = 'def g(grad_norm):\n    """Args:\n        grad_norm: the post-clip norm.\n    """\n'
ML001 = 'ML001 train/grad_norm: docstring says clipping=after ("after clipping"); registry says before'


def _locations(output: str) -> list[str]:
    return [line.split(": ", 1)[0] for line in output.splitlines() if ": ML" in line]


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    return project


@pytest.mark.parametrize(
    ("cwd", "path"), [(".", "trainer"), (".", "trainer/logging_utils.py"), ("trainer", "logging_utils.py"), ("trainer", ".")]
)
def test_a_subfolder_or_a_file_finds_the_registry_above_it(demo: Path, monkeypatch: pytest.MonkeyPatch, cwd: str, path: str) -> None:
    monkeypatch.chdir(demo / cwd)
    result = invoke("check", path)
    assert result.exit_code == 1, result.output
    assert ML001 in result.output


def test_no_path_checks_the_working_directory_inside_its_project(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo / "trainer")
    result = invoke("check")
    assert _locations(result.output) == ["logging_utils.py:10:34"]
    assert "(../metrics.yaml:7)" in result.output


def test_only_the_findings_in_the_checked_paths_are_reported(in_tmp: Path) -> None:
    write_project(in_tmp, {"a/x.py": AFTER, "b/y.py": AFTER}, REGISTRY)
    assert _locations(invoke("check", "a").output) == ["a/x.py:3:25"]
    assert _locations(invoke("check", "b/y.py").output) == ["b/y.py:3:25"]
    assert _locations(invoke("check", ".").output) == ["a/x.py:3:25", "b/y.py:3:25"]


@pytest.mark.parametrize("name", [".metriclint.toml", "metriclint.toml", "pyproject.toml"])
def test_a_settings_file_above_the_checked_path_is_found(in_tmp: Path, name: str) -> None:
    table = "[tool.metriclint]\n" if name == "pyproject.toml" else ""
    write_project(in_tmp, {name: table + 'registry = "reg/semantics.yaml"\n', "reg/semantics.yaml": REGISTRY, "src/x.py": AFTER})
    result = invoke("check", "src/x.py")
    assert _locations(result.output) == ["src/x.py:3:25"]
    assert "(reg/semantics.yaml:" in result.output


def test_a_nearer_settings_file_wins_and_the_search_stops_at_the_repository_root(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "metriclint.toml": 'ignore = ["ML001"]\n',
            "repo/.git/HEAD": "",
            "repo/pkg/x.py": AFTER,
            "repo/pkg/metriclint.toml": "",
        },
        None,
    )
    (in_tmp / "repo" / "metrics.yaml").write_text(REGISTRY, encoding="utf-8")
    assert _locations(invoke("check", "repo/pkg/x.py").output) == ["repo/pkg/x.py:3:25"]  # the outer ignore does not apply
    (in_tmp / "repo" / "pkg" / "metriclint.toml").unlink()
    assert _locations(invoke("check", "repo/pkg/x.py").output) == ["repo/pkg/x.py:3:25"]  # nor above the repository


def test_paths_of_two_projects_are_each_checked_with_their_own_registry(in_tmp: Path) -> None:
    write_project(in_tmp, {"one/metrics.yaml": REGISTRY, "one/x.py": AFTER, "two/metrics.yaml": REGISTRY, "two/y.py": AFTER})
    result = invoke("check", "two/y.py", "one/x.py")
    assert _locations(result.output) == ["one/x.py:3:25", "two/y.py:3:25"]
    assert "(one/metrics.yaml:" in result.output and "(two/metrics.yaml:" in result.output


def test_a_command_that_shows_one_project_refuses_paths_of_two(in_tmp: Path) -> None:
    write_project(in_tmp, {"one/metrics.yaml": REGISTRY, "one/x.py": AFTER, "two/metrics.yaml": REGISTRY, "two/y.py": AFTER})
    result = invoke("audit", "one", "two")
    assert result.exit_code == 2
    assert "the paths belong to 2 projects (one, two)" in result.stderr


@pytest.mark.parametrize("order", [("README.md", "proj/x.py"), ("proj/x.py", "README.md")])
def test_changed_only_in_a_monorepo_does_not_depend_on_the_order_of_the_files(in_tmp: Path, order: tuple[str, str]) -> None:
    write_project(in_tmp, {"README.md": "# Tools\n", "proj/metrics.yaml": REGISTRY, "proj/x.py": AFTER, "proj/y.py": POST_CLIP})
    result = invoke("check", "--changed-only", *order)
    assert result.exit_code == 1
    assert _locations(result.output) == ["proj/x.py:3:25"]


CHECK_CHUNK = "from metriclint.cli import main; main()"


def _chunk(project: Path, *files: str, parent: str = "") -> str:
    """One of pre-commit's split invocations: a child of this process, or of a `parent` of its own."""
    command = [sys.executable, "-c", CHECK_CHUNK, "check", "--changed-only", "-q", *files]
    if parent:
        command = [sys.executable, "-c", f"import subprocess, sys; sys.exit(subprocess.run({command!r}).returncode)"]
    env = {**os.environ, "PRE_COMMIT": "1"}
    return subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, check=False).stdout


def test_split_invocations_of_one_hook_run_print_each_finding_once(tmp_path: Path) -> None:
    project = write_project(tmp_path, {"a.py": AFTER, "b.py": POST_CLIP}, REGISTRY)
    (project / "c.py").write_text(AFTER.replace("def f", "def h"), encoding="utf-8")
    first, second = _chunk(project, "a.py", "metrics.yaml"), _chunk(project, "b.py", "c.py")
    assert _locations(first) == ["a.py:3:25", "b.py:3:24", "c.py:3:25"]  # metrics.yaml is the other side of each
    assert _locations(second) == []  # printed by the first invocation of this run
    assert _locations(_chunk(project, "b.py", parent="another run")) == ["b.py:3:24"]


def test_outside_pre_commit_every_run_prints_its_findings(in_tmp: Path) -> None:
    write_project(in_tmp, {"a.py": AFTER}, REGISTRY)
    assert invoke("check", "--changed-only", "a.py").output == invoke("check", "--changed-only", "a.py").output


LOGGED_AFTER = (
    'def f(grad_norm, log):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n    log({"train/grad_norm": grad_norm})\n'
)


@pytest.mark.parametrize("path", ["a", "a/x.py"])
def test_without_settings_or_registry_a_repository_is_one_project(in_tmp: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    # Two texts disagree across folders, in a git repository with neither settings nor a
    # registry: checked from a subfolder or a file, the other side is still read, and the cache
    # is the repository's, not one in each folder checked.
    monkeypatch.delenv("METRICLINT_CACHE_DIR")
    write_project(in_tmp, {".git/HEAD": "", "a/x.py": LOGGED_AFTER, "b/y.py": "# train/grad_norm is the norm before clipping.\n"})
    assert _locations(invoke("check", path).output) == ["a/x.py:3:25"]
    assert not (in_tmp / "a" / ".metriclint_cache").exists() and (in_tmp / ".metriclint_cache").is_dir()


def test_a_run_from_the_root_of_a_monorepo_applies_each_nested_projects_settings(in_tmp: Path) -> None:
    # As ruff applies the nearest settings to each file: pkg's own settings (which ignore ML001)
    # and registry hold for its files from the root as when pkg is checked alone, and the root
    # project does not read pkg's files with its own settings.
    write_project(
        in_tmp,
        {
            ".git/HEAD": "",
            "pyproject.toml": "[tool.metriclint]\n",
            "x.py": AFTER,
            "pkg/pyproject.toml": '[tool.metriclint]\nignore = ["ML001"]\n',
            "pkg/metrics.yaml": REGISTRY,
            "pkg/y.py": AFTER,
            "pkg/z.py": POST_CLIP,
        },
        REGISTRY,
    )
    alone = _locations(invoke("check", "pkg").output)
    assert alone == []
    assert _locations(invoke("check", ".").output) == ["x.py:3:25"]
    assert _locations(invoke("check").output) == ["x.py:3:25"]


@pytest.mark.parametrize("error", [errno.EROFS, errno.ENOSPC], ids=["read-only", "full"])
@pytest.mark.parametrize("hook", [True, False], ids=["hook", "command line"])
def test_a_cache_that_cannot_be_written_costs_the_run_nothing_but_one_warning(
    in_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: int,
    hook: bool,
) -> None:
    """The hook opened its lock in the cache folder unguarded: a read-only or full folder ended
    its run in a traceback, where the command line went on (issue 36). Both now run without
    the cache and say so once. (Tests run as root, whom no permission stops: the refusals are
    the system's answers, put in place of its calls.)"""
    monkeypatch.delenv("METRICLINT_CACHE_DIR")  # the project's own cache folder, as the hook's
    write_project(in_tmp, {"a.py": AFTER, "b.py": POST_CLIP}, REGISTRY)
    assert invoke("check", "a.py").exit_code == 1  # the cache folder made and written
    cache = (in_tmp / ".metriclint_cache").resolve()
    with (in_tmp / "b.py").open("a", encoding="utf-8") as edited:  # to be read again, and its entry written
        edited.write("# edited\n")
    expected = invoke("check", "--no-cache", "a.py", "b.py").output

    def refused(*args: object, **kwargs: object) -> None:
        raise OSError(error, os.strerror(error))

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if Path(file).resolve().is_relative_to(cache) and set(mode) & set("wax+"):
            refused()
        return open(file, mode, *args, **kwargs)

    monkeypatch.setattr(files, "write_new", refused)
    monkeypatch.setattr(once, "open", guarded_open, raising=False)
    if hook:
        monkeypatch.setenv("PRE_COMMIT", "1")
    result = invoke("check", *(["--changed-only"] if hook else []), "a.py", "b.py")
    assert (result.exit_code, result.stdout) == (1, expected)
    warned = [line for line in result.stderr.splitlines() if "cache" in line]
    assert warned == [f"warning: the cache in .metriclint_cache cannot be written ({os.strerror(error)}); the run went on without it"]
