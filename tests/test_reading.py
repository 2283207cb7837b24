"""One reader for every file metriclint opens: regular files only, never a blocking open,
never more than the size limit; a folder that cannot be listed is skipped with one ML900.

Whatever could hang runs in a subprocess with a timeout, so a regression fails the test
instead of stalling the suite. Tests run as root here, which reads every folder whatever
its mode: an unreadable folder is simulated by making the calls that would meet it fail as
they do for another user.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke, write_project

from metriclint.base.files import read_regular, read_text

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"
CONTRADICTION = 'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n'


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """metriclint in its own process, ended after 60 s: a blocking read fails the test."""
    command = [sys.executable, "-m", "metriclint", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_the_reader_refuses_devices_fifos_folders_and_files_past_the_limit(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "ok").write_text("fine", encoding="utf-8")
    for name, reason in (("pipe", "not a regular file"), ("zero", "not a regular file"), ("big", "101 bytes, more than the limit of 100")):
        with pytest.raises(OSError) as caught:
            read_regular(tmp_path / name, limit=100)
        assert reason in str(caught.value.strerror), name
    with pytest.raises(IsADirectoryError):
        read_regular(tmp_path)
    assert read_text(tmp_path / "ok", limit=4) == "fine"


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The size the file system reports (0 for /proc files) is not trusted: at most limit + 1 bytes are read."""
    (tmp_path / "growing").write_bytes(b"x" * 200)
    real_fstat = os.fstat

    def small(descriptor: int) -> os.stat_result:
        status = real_fstat(descriptor)
        return os.stat_result((status.st_mode, *status[1:6], 0, *status[7:]))

    monkeypatch.setattr(os, "fstat", small)
    with pytest.raises(OSError) as caught:
        read_regular(tmp_path / "growing", limit=100)
    assert caught.value.errno == errno.EFBIG


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_gitignore_that_is_a_device_or_a_fifo_is_ignored_not_read(in_tmp: Path, kind: str) -> None:
    write_project(in_tmp, {"a.py": CONTRADICTION, "sub/b.py": CONTRADICTION}, REGISTRY)
    for folder in (in_tmp, in_tmp / "sub"):
        if kind == "fifo":
            os.mkfifo(folder / ".gitignore")
        else:
            (folder / ".gitignore").symlink_to("/dev/zero")
    result = run("check", ".", "--no-cache")
    assert result.returncode == 1, result.stderr
    assert [line.split(": ")[0] for line in result.stdout.splitlines() if "ML001" in line] == ["a.py:2:55", "sub/b.py:2:55"]


def test_a_fifo_given_as_config_or_output_is_an_error_not_a_wait(in_tmp: Path) -> None:
    write_project(in_tmp, {"a.py": CONTRADICTION}, REGISTRY)
    os.mkfifo(in_tmp / "fifo.toml")
    os.mkfifo(in_tmp / "docs.md")
    config = run("check", ".", "--config", "fifo.toml")
    assert config.returncode == 2 and config.stderr == "fifo.toml: settings file is not a regular file (given with --config)\n"
    docs = run("generate", "docs", "--output", "docs.md")
    assert docs.returncode == 2 and docs.stderr == "docs.md:1:1: cannot read: not a regular file\n"
    (in_tmp / "metrics.yaml").unlink()
    os.mkfifo(in_tmp / "metrics.yaml")
    registry = run("check", ".", "--registry", "metrics.yaml")
    assert registry.returncode == 2 and registry.stderr == "metrics.yaml: registry file is not a regular file (given with --registry)\n"


def test_a_source_past_max_file_size_is_ml900_with_its_size(in_tmp: Path) -> None:
    write_project(in_tmp, {"a.py": CONTRADICTION, "big.py": "x = 1\n" * 200}, REGISTRY)
    (in_tmp / "pyproject.toml").write_text("[tool.metriclint]\nmax-file-size = 1_000\n", encoding="utf-8")
    result = invoke("check", ".", "--format", "json", "--no-cache")
    found = {(f["rule"], f["path"]): f["message"] for f in json.loads(result.output)["findings"]}
    assert found[("ML900", "big.py")] == "cannot read file: the file is 1,200 bytes, more than the limit of 1,000 (max-file-size)"
    assert ("ML001", "a.py") in found


@pytest.mark.parametrize(("big", "what"), [("metrics.yaml", "the registry"), ("helpers.yaml", "the code knowledge file")])
def test_max_file_size_holds_for_the_registry_and_code_knowledge_too(in_tmp: Path, big: str, what: str) -> None:
    """The README says every file is read within the setting: a registry larger than the default
    (a generated one of 100k metrics is 18 MB) is read when the setting allows it."""
    padding = "".join(f"# line {i} of a long comment\n" for i in range(40))
    files = {"a.py": CONTRADICTION, "metrics.yaml": REGISTRY, "helpers.yaml": "results: []\n"}
    files[big] = padding + files[big]
    write_project(in_tmp, files)
    settings = '[tool.metriclint]\nmax-file-size = 1_000\nregistry = "metrics.yaml"\ncode-knowledge = ["helpers.yaml"]\n'
    (in_tmp / "pyproject.toml").write_text(settings, encoding="utf-8")
    result = invoke("check", ".", "--no-cache")
    size = len(files[big].encode())
    message = f"{big}:1:1: cannot read {what}: the file is {size:,} bytes, more than the limit of 1,000 (max-file-size)\n"
    assert (result.exit_code, result.stderr) == (2, message)


@pytest.mark.parametrize("key", ["max-file-size", "max-cache-size"])
@pytest.mark.parametrize("value", ["0", "-5", '"10MB"', "true"])
def test_max_sizes_must_be_positive_numbers_of_bytes(in_tmp: Path, key: str, value: str) -> None:
    write_project(in_tmp, {"a.py": "x = 1\n"})
    (in_tmp / "pyproject.toml").write_text(f"[tool.metriclint]\n{key} = {value}\n", encoding="utf-8")
    result = invoke("check", ".")
    column = len(f"{key} = ") + 1  # the value, as written
    assert (
        result.exit_code == 2 and result.stderr == f"pyproject.toml:2:{column}: '{key}' must be a positive number of bytes, not {value}\n"
    )


def _lock(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """Make `folders` behave as mode 000 does for a user who is not root: neither listed nor
    any path inside them looked up."""
    locked = tuple(str(folder.resolve()) for folder in folders)

    def guard(name: str):  # type: ignore[no-untyped-def]
        call = getattr(os, name)

        def guarded(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            full = os.path.abspath(os.fsdecode(path)) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if any(full == f and name == "scandir" or full.startswith(f + os.sep) for f in locked):
                raise PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))
            return call(path, *args, **kwargs)

        return guarded

    for name in ("scandir", "stat", "lstat", "open"):
        monkeypatch.setattr(os, name, guard(name))


def test_an_unreadable_folder_is_skipped_with_one_ml900(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"a.py": CONTRADICTION, "locked/b.py": CONTRADICTION, "deep/locked/c.py": CONTRADICTION}
    files |= {"ignored/locked/d.py": "", "excluded/e.py": "", ".gitignore": "ignored/\n"}
    write_project(in_tmp, files, REGISTRY)
    (in_tmp / "pyproject.toml").write_text('[tool.metriclint]\nexclude = ["excluded"]\n', encoding="utf-8")
    _lock(monkeypatch, in_tmp / "locked", in_tmp / "deep" / "locked", in_tmp / "ignored" / "locked", in_tmp / "excluded")
    result = invoke("check", ".", "--jobs", "1", "--no-cache", "--format", "json")
    got = [(f["rule"], f["path"], f["message"]) for f in json.loads(result.output)["findings"]]
    unread = "cannot read this folder: Permission denied; the files in it were not checked"
    assert got == [("ML001", "a.py", got[0][2]), ("ML900", "deep/locked", unread), ("ML900", "locked", unread)]
