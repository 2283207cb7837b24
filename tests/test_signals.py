"""Crashes, runaway parses and signals: a file that kills or stalls its reader costs that file;
a signal to metriclint ends its workers with it, with the exit status a shell expects, and
leaves no temporary file behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, invoke, run_apart, write_project

from metriclint.base import files, signals
from metriclint.base.toml import tomllib
from metriclint.extract import runner

forked = pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the workers must inherit the patch")
CONTRADICTION = 'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n'
REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"


def test_a_file_that_crashes_the_parser_is_ml900_even_when_it_is_the_only_file(in_tmp: Path) -> None:
    """Syntax newer than Python 3.11 sends it to libcst, whose parser overflows its stack here
    (SIGSEGV): once the whole run, now only its worker."""
    (in_tmp / "nots.py").write_text("type X = int\nx = " + "not " * 20_000 + "1\n", encoding="utf-8")
    result = run_apart("check", "nots.py", "--no-cache", "--jobs", "1", "--format", "json", timeout=120)
    assert result.returncode == 0, result.stderr
    assert '"rule": "ML900"' in result.stdout and '"path": "nots.py"' in result.stdout


def test_a_finished_run_shuts_its_workers_down_rather_than_killing_them(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killing a pool's workers is for interrupted runs: once every finished run did it (the
    result generator was dropped unexhausted), and a worker killed while holding a queue lock
    left a sibling waiting on it, so the test suite hung now and then."""
    killed: list[int] = []
    for method in ("kill", "terminate"):
        monkeypatch.setattr(multiprocessing.process.BaseProcess, method, lambda self: killed.append(self.pid))
    write_project(in_tmp, {f"m{i}.py": CONTRADICTION for i in range(6)}, REGISTRY)
    assert invoke("check", ".", "--no-cache", "--jobs", "2").exit_code == 1
    assert killed == []


@forked
def test_a_file_that_takes_too_long_is_ml900_and_the_run_goes_on(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(in_tmp, {"slow.py": "x = 1\n", "a.py": CONTRADICTION}, REGISTRY)
    original = runner.extract_file

    def stalling(job: runner.Job, *rest: object) -> object:
        if job.shown == "slow.py":
            time.sleep(60)
        return original(job, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "extract_file", stalling)
    monkeypatch.setattr(runner, "FILE_SECONDS", 1)
    started = time.monotonic()
    result = invoke("check", ".", "--jobs", "1", "--no-cache")
    assert time.monotonic() - started < 30
    assert "slow.py:1:1: ML900 reading this file took longer than 1 s; it was skipped" in result.output
    assert "a.py:2:55: ML001" in result.output


_STALLED_RUN = """
import sys, time
from metriclint.extract import runner
original = runner.extract_file
def stalling(job, *rest):
    time.sleep(600)
runner.extract_file = stalling
from metriclint.cli import main
main(["check", ".", "--no-cache", "--jobs", "2"])
"""


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


@forked
@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc to see the workers")
@pytest.mark.parametrize(("sent", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_ends_the_workers_too_with_the_shells_status(in_tmp: Path, sent: signal.Signals, status: int) -> None:
    write_project(in_tmp, {f"m{i}.py": "x = 1\n" for i in range(4)})
    run = subprocess.Popen([sys.executable, "-c", _STALLED_RUN], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while len(workers) < 2 and time.monotonic() < deadline:  # the pool's two workers, reading
        time.sleep(0.2)
        workers = _children(run.pid)
    assert len(workers) >= 2, "the workers never started"
    run.send_signal(sent)
    _, stderr = run.communicate(timeout=60)  # returns only once every holder of the pipes is gone
    assert run.returncode == status, stderr
    assert "Traceback" not in stderr
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]


_SIGNALLED_AT_A_FORK = """
import os, signal, sys, time
from multiprocessing import popen_fork
from metriclint.engine import collection
from metriclint.extract import runner
def stalling(*given):
    time.sleep(600)
runner.extract_file = stalling  # the workers read forever
if sys.argv[1] == "1":
    collection._discovered_apart = stalling  # and so does the listing, when its fork is the one signalled
launch, forks = popen_fork.Popen._launch, []
def launch_then_signal(self, process):
    launch(self, process)  # the child never comes back from here
    forks.append(self.pid)
    if len(forks) == int(sys.argv[1]):
        os.kill(os.getpid(), signal.SIGTERM)  # handled on the next line, before the child is listed
popen_fork.Popen._launch = launch_then_signal
from metriclint.cli import main
main(["check", ".", "--no-cache", "--jobs", "2"])
"""


@forked
@pytest.mark.parametrize("fork", [1, 2, 3])  # the listing (extract/aside.py), then each worker
def test_a_signal_that_lands_as_a_process_is_forked_ends_that_process_too(in_tmp: Path, fork: int) -> None:
    """Python runs a handler between any two lines, so the SystemExit could come between a fork
    and the line where multiprocessing lists the child: that child was never ended, and kept
    the caller's stdout and stderr open (the test above hung in CI under load, on 3.13)."""
    write_project(in_tmp, {f"m{i}.py": "x = 1\n" for i in range(4)})
    run = subprocess.run([sys.executable, "-c", _SIGNALLED_AT_A_FORK, str(fork)], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 143, run.stderr
    assert "Traceback" not in run.stderr


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "module.py"
    target.write_text("old\n", encoding="utf-8")

    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        files.replace(target, b"new\n")
    assert [p.name for p in tmp_path.iterdir()] == ["module.py"] and target.read_text(encoding="utf-8") == "old\n"


sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import signals as signalled  # noqa: E402  (bench/signals.py, which times 200 such runs by hand)


@forked
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see what a run leaves running")
def test_cold_runs_signalled_at_random_moments_end_at_once_and_leave_nothing(tmp_path: Path) -> None:
    """A few of bench/signals.py's runs: sent SIGINT, SIGTERM or SIGHUP while it lists, starts
    its workers, reads, writes its cache or reports, a cold run ends within seconds with the
    shell's status, and leaves no process and no temporary file. Once a signal could leave the
    run waiting for the rest of an answer from a worker it had just killed."""
    project = write_project(tmp_path / "project", {f"pkg/m{i:03}.py": CONTRADICTION for i in range(150)}, REGISTRY)
    command = [sys.executable, "-m", "metriclint", "check", ".", "--quiet", "--jobs", "2"]
    draw = __import__("random").Random(36)
    outcomes = [
        signalled.signalled_run(project, tmp_path / "scratch", sent, draw.uniform(0.3, 1.5), command)
        for sent in [*signalled.SIGNALS, *signalled.SIGNALS]
    ]
    assert [o for o in outcomes if not o.passed] == []


_CUT_SHORT = """
import os, struct, sys
from metriclint.extract import workers

def answer_cut_short(item):
    if item == "cut":  # what a worker killed while it answers leaves in its pipe: a length, and part of the answer
        frame = sys._getframe()
        while "answers" not in frame.f_locals:
            frame = frame.f_back
        os.write(frame.f_locals["answers"].fileno(), struct.pack("!i", 1 << 20) + b"part")
        os._exit(1)
    return item

with workers.Pool(answer_cut_short, 2, 60, 2**30) as pool:
    print(list(pool.map(["a", "cut", "b", "c"], [2, 2])))
"""


@forked
def test_an_answer_cut_short_is_a_lost_item_not_a_wait(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", _CUT_SHORT], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert run.stdout.strip() == "['a', Lost(timed_out=False, error=''), 'b', 'c']", run.stderr


@pytest.mark.parametrize("write", ["write_new", "replace"])
def test_a_signal_that_lands_as_a_temporary_file_is_made_leaves_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str) -> None:
    """mkstemp makes the file, then works out its path: a handler's exception there left the
    file behind (the cache folder's `.tmp-` files after an interrupted run). The signal now
    waits until the file is renamed into place, then ends the run."""
    real = os.open
    sent: list[bool] = []

    def signalled_once(path: str, *rest: Any) -> int:
        descriptor = real(path, *rest)
        if not sent and str(path).startswith(str(tmp_path)):
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs at the next line Python runs: the file is there
        return descriptor

    monkeypatch.setattr(signal, "signal", signal.signal)  # restored after the test, with the handler below
    previous = signal.signal(signal.SIGTERM, signals.end_run)
    try:
        monkeypatch.setattr(os, "open", signalled_once)
        with pytest.raises(SystemExit):
            getattr(files, write)(tmp_path / "entry", b"data")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert sent and [p.name for p in tmp_path.iterdir()] == ["entry"]


def _console_script() -> list[str]:
    """What the `metriclint` command that pip writes runs: the entry point pyproject.toml names."""
    module, function = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["metriclint"].split(":")
    return ["-c", f"import sys; from {module} import {function}; sys.exit({function}())"]


@pytest.mark.parametrize("started", [["-m", "metriclint"], _console_script()], ids=["python -m", "console script"])
def test_an_interrupt_while_the_linter_is_imported_ends_it_without_a_traceback(tmp_path: Path, started: list[str]) -> None:
    """Before the CLI sets its handlers, Python's own turned SIGINT into a KeyboardInterrupt
    inside an import (the CLI's take half a second): a traceback of the import machinery, which
    signalled runs met (3 in 67 of bench/signals.py's on a busy machine). It now ends the run as
    the signal itself does. Sent once the first of the linter's modules is imported (-X
    importtime says when)."""
    project = write_project(tmp_path / "project", {"a.py": CONTRADICTION}, REGISTRY)
    command = [sys.executable, "-X", "importtime", *started, "check", ".", "--no-cache", "--quiet"]
    run = subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert run.stderr is not None
    errors = b""
    for line in run.stderr:
        errors += line
        if b"| metriclint." in line and b"__main__" not in line:  # one the CLI imports
            break
    run.send_signal(signal.SIGINT)
    errors += run.stderr.read()
    assert run.wait(30) in (-signal.SIGINT, 128 + signal.SIGINT) and b"Traceback" not in errors, errors.decode()[-2000:]
