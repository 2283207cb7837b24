"""A warm run names an unchanged file's cache entry from its status (size, times, inode), not
from its bytes; any edit is still seen, an index made under another salt is not used, and a
corrupt or forged index counts as empty."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import FIXTURES, copy_fixture, invoke, read_sealed, write_sealed

from metriclint.extract import prune, runner, stat_index
from metriclint.extract.stat_index import StatIndex

SOURCES = ["trainer/__init__.py", "trainer/logging_utils.py", "trainer/step.py"]
FINDING = "trainer/logging_utils.py:10:34: ML001"


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources a run reads in its own process to name their entries."""
    files: list[str] = []
    original = runner.read_regular

    def recording(path: Path, *rest: Any) -> bytes:
        files.append(Path(os.path.relpath(path)).as_posix())
        return original(path, *rest)

    monkeypatch.setattr(runner, "read_regular", recording)
    return files


def _demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fixtures/demo, copied, after the file system's clock has moved past its files' times:
    a file changed in the tick a run starts in is racy, and read again by the next run."""
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    _tick(project)
    return project


def _tick(project: Path) -> None:
    latest = max(os.stat(project / name).st_ctime_ns for name in SOURCES)
    while True:
        with tempfile.NamedTemporaryFile(dir=project) as probe:
            if os.fstat(probe.fileno()).st_mtime_ns > latest:
                return
        time.sleep(0.005)


def _check() -> str:
    return invoke("check", ".", "--cache-dir", "c").stdout  # a forged file costs a warning on stderr


def _index(project: Path) -> Path:
    (found,) = (project / "c" / "stats").glob("*.json")
    return found


def test_an_unchanged_file_is_neither_read_nor_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: list[str], extracted: list[str]
) -> None:
    _demo(tmp_path, monkeypatch)
    first = _check()
    assert FINDING in first and sorted(hashed) == SOURCES and extracted == SOURCES
    hashed.clear()
    extracted.clear()
    assert _check() == first
    assert hashed == [] and extracted == []


@pytest.mark.parametrize("how", ["in place", "renamed over"])
def test_an_edit_that_keeps_the_size_and_puts_the_time_back_is_seen(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hashed: list[str],
    how: str,
) -> None:
    """The change time moves whatever the edit does to the modification time."""
    project = _demo(tmp_path, monkeypatch)
    assert FINDING in _check()
    source = project / "trainer" / "logging_utils.py"
    before = os.stat(source)
    text = source.read_text(encoding="utf-8")
    edited = text.replace("after clipping", "xxxxx xxxxxxxx")
    assert edited != text and len(edited) == len(text)
    if how == "in place":
        source.write_text(edited, encoding="utf-8")
    else:
        (project / "new.tmp").write_text(edited, encoding="utf-8")
        os.replace(project / "new.tmp", source)
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (os.stat(source).st_size, os.stat(source).st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    hashed.clear()
    assert FINDING not in _check()
    assert hashed == ["trainer/logging_utils.py"]


@pytest.mark.parametrize("when", ["modified later", "changed in the tick the run started in"])
def test_a_racy_file_is_not_recorded_and_read_again(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hashed: list[str],
    when: str,
) -> None:
    """A file whose modification or change time is not older than the run's start could be
    edited again within the same tick, leaving its status as recorded: git's racy entries."""
    project = _demo(tmp_path, monkeypatch)
    source = project / "trainer" / "step.py"
    if when == "modified later":
        later = time.time_ns() + 3600 * 10**9
        os.utime(source, ns=(later, later))
    else:  # written last, its old modification time put back, and the clock not moved since
        before = os.stat(source)
        source.write_bytes(source.read_bytes())
        os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
        monkeypatch.setattr(stat_index, "fs_clock", lambda folder: os.stat(source).st_ctime_ns)
    first = _check()
    hashed.clear()
    assert _check() == first
    assert hashed == ["trainer/step.py"]


def test_an_index_made_under_another_salt_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: list[str], extracted: list[str]
) -> None:
    project = _demo(tmp_path, monkeypatch)
    _check()
    registry = project / "metrics.yaml"
    registry.write_text(
        registry.read_text(encoding="utf-8").replace(
            "version: 1\n",
            "version: 1\nfacets:\n  clipping:\n    values:\n      before: [ahead of the clip]\n",
        ),
        encoding="utf-8",
    )
    hashed.clear()
    extracted.clear()
    assert FINDING in _check()
    assert sorted(hashed) == SOURCES and extracted == SOURCES


def _step_entry(index: dict[str, Any]) -> str:
    return str(index["files"]["trainer/step.py"][4])


@pytest.mark.parametrize(
    ("what", "forge"),
    [
        ("not JSON", lambda index: "{"),
        ("a list", lambda index: []),
        ("files in a list", lambda index: {**index, "files": list(index["files"].items())}),
        ("a status too short", lambda index: {**index, "files": {k: v[1:] for k, v in index["files"].items()}}),
        ("another file's entry", lambda index: {**index, "files": {k: [*v[:4], _step_entry(index)] for k, v in index["files"].items()}}),
        # c/v2/ + ".." + "../../victim.json": read, refused as an entry, then deleted, were the name not checked
        (
            "an entry name that is a path",
            lambda index: {**index, "files": {k: [*v[:4], "../../victim.json"] for k, v in index["files"].items()}},
        ),
    ],
)
def test_a_corrupt_or_forged_index_changes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    what: str,
    forge: Callable[[dict[str, Any]], object],
) -> None:
    project = _demo(tmp_path, monkeypatch)
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    first = _check()
    assert FINDING in first
    index = _index(project)
    write_sealed(index, "stats", forge(read_sealed(index)))
    assert _check() == first, what
    assert _check() == first, what
    assert victim.exists()


def test_names_that_are_not_utf8_come_back_from_the_index(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")
    source = tmp_path / name
    source.write_text("x = 1\n")
    index = StatIndex(tmp_path / "c", tmp_path, b"salt", 10**6)
    index.started = os.stat(source).st_ctime_ns + 1
    status = index.status(source, 10**6)
    index.note(name, status, "ab" * 32)
    index.close()
    assert StatIndex(tmp_path / "c", tmp_path, b"salt", 10**6).entry(name, status) == "ab" * 32
    assert StatIndex(tmp_path / "c", tmp_path, b"other", 10**6).entry(name, status) is None


@pytest.mark.parametrize("kind", ["stats", "kept"])
def test_the_index_of_a_project_that_is_gone_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Its status index, and what its last run kept (extract/kept.py)."""
    shared = tmp_path / "shared"
    projects = [copy_fixture(FIXTURES / "demo", tmp_path / name) for name in ("first", "second")]
    monkeypatch.chdir(tmp_path)
    for project in projects:
        _tick(project)
        invoke("check", project.name, "--cache-dir", str(shared))
    assert len(list((shared / kind).glob("*.json"))) == 2
    shutil.rmtree(projects[0])
    (projects[1] / "trainer" / "step.py").write_text("x = 1\n")  # a run with other entries: pruning runs
    invoke("check", "second", "--cache-dir", str(shared))
    assert [p.name for p in (shared / kind).glob("*.json")] == [f"{prune.project_name(projects[1])}.json"]
