"""Every parse of untrusted text (a file, standard input, an editor's buffer) runs in a worker
process held to a time and a memory limit from outside it: a text that crashes, stalls or
floods its parser is ML900, and the run goes on (issue 36). The server's side is in
tests/test_server_hostile.py."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_project
from hostile import HOSTILE, KINDS, LIMITED, SECONDS, STALLS

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: before\n"
CONTRADICTION = 'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n'


def _limited(project: Path, *args: str, given: bytes | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", LIMITED, *args],
        cwd=project,
        input=given.decode("utf-8", "surrogateescape") if given else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return run, time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_buffer_on_standard_input_is_ml900(tmp_path: Path, kind: str) -> None:
    name, text, message = HOSTILE[kind]
    write_project(tmp_path, {"a.py": CONTRADICTION}, REGISTRY)
    run, took = _limited(tmp_path, "check", "--no-cache", "--stdin-filename", name, "-", given=text.encode())
    assert (run.returncode, run.stdout.splitlines()[0].startswith(f"{name}:1:1: ML900 {message}")) == (0, True), run.stdout + run.stderr
    assert "Traceback" not in run.stderr and took < SECONDS + 30


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_file_is_ml900_and_the_others_are_read(tmp_path: Path, kind: str) -> None:
    name, text, message = HOSTILE[kind]
    write_project(tmp_path, {"a.py": CONTRADICTION, name: text}, REGISTRY)
    run, took = _limited(tmp_path, "check", ".", "--no-cache", "--jobs", "2")
    assert run.returncode == 1, run.stderr
    assert "a.py:2:55: ML001" in run.stdout and f"{name}:1:1: ML900 {message}" in run.stdout
    assert took < SECONDS + 30


@pytest.mark.slow
@STALLS
def test_an_80_kb_file_that_stalls_the_native_parser_ends_within_the_limit(tmp_path: Path) -> None:
    """The probe's 80 KB file ran past 400 s: SIGALRM's handler never ran inside libcst's parser
    (the default limit is 60 s: it ended after 61 s, README's Speed)."""
    functions = "".join(
        f'def step_{i}(grad_norm, scale):\n    """The gradient norm after clipping."""\n    return {{"train/n{i}": grad_norm * scale}}\n\n\n'
        for i in range(500)
    )
    source = "type Scalar = float\n\n" + functions + "deep = table" + "[0]" * 6000 + "\n"
    assert 75_000 < len(source) < 85_000
    write_project(tmp_path, {"slow.py": source})
    run, took = _limited(tmp_path, "check", ".", "--no-cache")
    assert f"slow.py:1:1: ML900 reading this file took longer than {SECONDS} s; it was skipped" in run.stdout, run.stderr
    assert took < SECONDS + 30


def test_a_buffer_over_the_size_limit_is_ml900_unread(tmp_path: Path) -> None:
    write_project(tmp_path, {"a.py": CONTRADICTION, "pyproject.toml": "[tool.metriclint]\nmax-file-size = 100\n"}, REGISTRY)
    run, _ = _limited(tmp_path, "check", "--no-cache", "--stdin-filename", "b.py", "-", given=b"x = 1\n" * 40)
    assert run.stdout.startswith("b.py:1:1: ML900 cannot read file: the file is 240 bytes, more than the limit of 100"), run.stderr
