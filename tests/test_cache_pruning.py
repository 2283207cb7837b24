"""The cache keeps what the last few runs of each project used, within a size cap, and
`metriclint clean` removes it: it never grows without end, and never deletes what is not its own."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, invoke

from metriclint.extract import cache, prune

DEMO = ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / cache.FORMAT).rglob("*") if p.is_file() and len(p.name) == 64)


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    return project


def _check() -> str:
    return invoke("check", ".", "--cache-dir", "c").output


def _touch(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")


def test_the_entry_of_a_deleted_file_goes(demo: Path) -> None:
    _check()
    assert len(_entries(demo / "c")) == 3
    (demo / "trainer" / "step.py").unlink()
    _check()
    assert len(_entries(demo / "c")) == 2


def test_entries_of_runs_older_than_the_last_few_go(demo: Path) -> None:
    edited = demo / "trainer" / "logging_utils.py"
    _check()
    for edit in range(5):
        _touch(edited, f"# edit {edit}\n")
        assert "ML001" in _check()
    assert len(_entries(demo / "c")) == len(DEMO) + prune.RUNS - 1


def test_a_file_edited_and_reverted_is_read_from_the_cache(demo: Path, extracted: list[str]) -> None:
    edited = demo / "trainer" / "logging_utils.py"
    original = edited.read_bytes()
    _check()
    _touch(edited, "# trying something\n")
    _check()
    extracted.clear()
    edited.write_bytes(original)
    _check()
    assert extracted == []


def test_the_entries_fit_in_the_size_cap(demo: Path) -> None:
    (demo / "metriclint.toml").write_text("max-cache-size = 1\n", encoding="utf-8")
    first = _check()
    assert "ML001" in first and _entries(demo / "c") == []
    assert _check() == first


def test_over_the_cap_older_runs_go_first(demo: Path) -> None:
    _check()
    size = sum(p.stat().st_size for p in _entries(demo / "c"))
    (demo / "metriclint.toml").write_text(f"max-cache-size = {size + 10}\n", encoding="utf-8")
    edited = demo / "trainer" / "step.py"
    _touch(edited, "\n")
    _check()
    kept = _entries(demo / "c")
    assert len(kept) == 3 and sum(p.stat().st_size for p in kept) <= size + 10


def test_an_entry_another_run_may_be_writing_is_left_alone(demo: Path) -> None:
    _check()
    folder = demo / "c" / cache.FORMAT / "ab"
    folder.mkdir(exist_ok=True)
    stale, fresh = folder / ("ab" + "0" * 62), folder / ("ab" + "1" * 62)
    stale.write_text("{}")
    fresh.write_text("{}")
    os.utime(stale, (time.time() - 60, time.time() - 60))
    os.utime(fresh, (time.time() + 60, time.time() + 60))
    _touch(demo / "trainer" / "step.py", "\n")  # a run that prunes
    _check()
    assert not stale.exists() and fresh.exists()


@pytest.mark.parametrize("record", ["not json", '{"project": ".", "runs": [{"../../../outside": "x"}]}', '{"runs": 7}', "[]"])
def test_a_forged_run_record_deletes_nothing_outside_the_folder(demo: Path, record: str) -> None:
    first = _check()
    (demo / "outside").write_text("kept")
    for path in (demo / "c" / "runs").glob("*.json"):
        path.write_text(record, encoding="utf-8")
    _touch(demo / "trainer" / "step.py", "\n")
    assert _check() == first
    assert (demo / "outside").read_text() == "kept"
    assert len(_entries(demo / "c")) == 3


def test_entries_of_an_earlier_format_go(demo: Path) -> None:
    _check()
    _touch(demo / "trainer" / "step.py", "\n")
    old = demo / "c" / "v1" / "ab" / ("ab" * 32)
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    _check()
    assert not (demo / "c" / "v1").exists()


def test_clean_removes_the_cache_folders_of_the_project_and_those_inside(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("METRICLINT_CACHE_DIR")
    inner = demo / "tools"
    inner.mkdir()
    (inner / "metrics.yaml").write_text("version: 1\nmetrics: {}\n")
    (inner / "a.py").write_text("x = 1\n")
    invoke("check", ".")
    invoke("check", "tools")
    assert (demo / ".metriclint_cache").is_dir() and (inner / ".metriclint_cache").is_dir()
    result = invoke("clean")
    assert result.exit_code == 0
    assert result.output == "Removed .metriclint_cache\nRemoved tools/.metriclint_cache\n"
    assert not (demo / ".metriclint_cache").exists() and not (inner / ".metriclint_cache").exists()
    assert invoke("clean").output == "No cache to remove.\n"


def test_clean_leaves_a_folder_that_is_not_a_cache(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = demo / "mine"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("keep me")
    monkeypatch.setenv("METRICLINT_CACHE_DIR", str(elsewhere))
    result = invoke("clean", ".")
    assert (elsewhere / "notes.txt").read_text() == "keep me"
    assert "mine is not a metriclint cache folder; left alone" in result.stderr
    assert result.stdout == "No cache to remove.\n"


def test_a_shared_folder_keeps_each_projects_runs_until_the_project_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    first = copy_fixture(FIXTURES / "demo", tmp_path / "first")
    second = copy_fixture(FIXTURES / "demo", tmp_path / "second")
    _touch(second / "trainer" / "step.py", "\n")
    monkeypatch.chdir(tmp_path)
    invoke("check", "first", "--cache-dir", str(shared))
    invoke("check", "second", "--cache-dir", str(shared))
    assert len(_entries(shared)) == 6
    shutil.rmtree(first)
    _touch(second / "trainer" / "step.py", "\n")
    invoke("check", "second", "--cache-dir", str(shared))
    assert len(_entries(shared)) == 4  # the second's three, and its step.py of the run before


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _others(folder: Path) -> dict[str, str]:
    """Files a user keeps, at the places the cache's own files take."""
    files = {
        "runs/exp1.json": '{"loss": 1}',
        "v1/paper.tex": "\\section{}",
        "v2/ab/notes.txt": "notes",
        "kept/mine.json": "{}",
        "v2/ab/ab" + "0" * 62 + ".bak": "backup",
        "stats/a.json": "[]",
        "lock.txt": "x",
    }
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
    return files


def test_a_cache_folder_holding_other_files_is_refused_and_nothing_is_touched(demo: Path) -> None:
    _others(demo)
    before = _tree(demo)
    result = invoke("check", ".", "--cache-dir", ".")
    assert result.exit_code == 2
    assert (
        result.stderr
        == "--cache-dir: . is not empty and is not a metriclint cache folder (it has no .metriclint-cache); give a new or an empty folder\n"
    )
    assert _tree(demo) == before


def test_the_environments_cache_folder_is_refused_the_same_way(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (demo / "mine").mkdir()
    (demo / "mine" / "a.txt").write_text("a")
    monkeypatch.setenv("METRICLINT_CACHE_DIR", "mine")
    result = invoke("check", ".")
    assert result.exit_code == 2 and result.stderr.startswith("METRICLINT_CACHE_DIR: mine is not empty")
    assert invoke("check", ".", "--cache-dir", "mine/a.txt").stderr == "--cache-dir: mine/a.txt is not a folder\n"


@pytest.mark.parametrize("made", [False, True])
def test_a_new_or_empty_folder_becomes_a_marked_cache(demo: Path, made: bool) -> None:
    if made:
        (demo / "c").mkdir()
    assert "ML001" in _check()
    assert {".metriclint-cache", "CACHEDIR.TAG", ".gitignore"} <= {p.name for p in (demo / "c").iterdir()}
    assert (demo / "c" / ".gitignore").read_text() == "# Created by metriclint.\n*\n"
    assert len(_entries(demo / "c")) == 3


def test_an_earlier_versions_cache_folder_is_still_used(demo: Path) -> None:
    _check()
    (demo / "c" / ".metriclint-cache").unlink()
    _touch(demo / "trainer" / "step.py", "\n")
    assert "ML001" in _check()
    assert (demo / "c" / ".metriclint-cache").is_file() and len(_entries(demo / "c")) == 4  # the last run's step.py too


def test_pruning_deletes_only_files_of_the_caches_own_layout(demo: Path) -> None:
    _check()
    mine = _others(demo / "c")
    old = demo / "c" / "v1" / "cd" / ("cd" * 32)
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    for edit in range(4):  # runs that prune, old ones dropped
        _touch(demo / "trainer" / "step.py", f"# {edit}\n")
        _check()
    assert {name: (demo / "c" / name).read_text() for name in mine} == mine
    assert not old.exists() and not old.parent.exists()


def test_clean_removes_only_the_caches_own_files(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _check()
    mine = _others(demo / "c")
    monkeypatch.setenv("METRICLINT_CACHE_DIR", "c")
    result = invoke("clean", ".")
    assert "c holds files that are not metriclint's; removed metriclint's only" in result.stderr
    assert _entries(demo / "c") == [] and not (demo / "c" / "kept" / f"{prune.project_name(demo)}.json").exists()
    assert {name: (demo / "c" / name).read_text() for name in mine} == mine
    assert (demo / "c" / ".metriclint-cache").is_file()  # still marked as metriclint's: the next run may use it
    for name in mine:
        (demo / "c" / name).unlink()
    assert invoke("clean", ".").stdout == "Removed c\n" and not (demo / "c").exists()
