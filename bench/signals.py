"""Signal cold runs at random moments: each must end promptly, with a shell's status, and leave
no process and no temporary file behind.

    python bench/signals.py /path/to/tree [--runs 200] [--latest 4.0] [--jobs 2]

The tree is copied to a temporary folder. Each run is `metriclint check` with an empty cache
folder of its own (a cold run: listing, workers, cache writes), in a session of its own, sent
SIGINT, SIGTERM or SIGHUP in turn, at a moment drawn between 0 and `--latest` seconds after it
starts. A run passes when it exits within `LIMIT` seconds of the signal (or had finished
before it) with 130, 143 or 129 (0 or 1 if it finished first; or ended by the signal itself,
before Python set its handlers, which a shell reports as the same), printed no traceback, left no
process of its session alive, and left no temporary file: nothing new in the tree, no `.tmp-`
file in the cache folder, nothing in the run's own TMPDIR, no core file. tests/test_signals.py
runs a few of these on a small project.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

LIMIT = 5.0  # seconds from the signal to the end of the run (its output closed)
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
FINISHED = (0, 1)


@dataclass
class Outcome:
    sent: int
    delay: float  # seconds after the start the signal was sent
    status: int | None  # None: still running LIMIT seconds after the signal (killed then)
    ended: float  # seconds from the signal to the end (the run's output closed)
    traceback: bool
    processes: list[int] = field(default_factory=list)  # of the run's session, alive after it
    leftovers: list[str] = field(default_factory=list)  # temporary files left

    @property
    def passed(self) -> bool:
        expected = (128 + self.sent, -self.sent, *FINISHED)
        return self.status in expected and self.ended <= LIMIT and not (self.traceback or self.processes or self.leftovers)


def signalled_run(project: Path, scratch: Path, sent: int, delay: float, command: list[str]) -> Outcome:
    """`command` run in `project`, with an empty cache folder and a TMPDIR under `scratch`,
    sent `sent` after `delay` seconds."""
    cache, temporary = scratch / "cache", scratch / "tmp"
    for folder in (cache, temporary):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    before, shared = _tree(project), _shared()
    env = {**os.environ, "TMPDIR": str(temporary), "METRICLINT_CACHE_DIR": str(cache)}
    run = subprocess.Popen(
        command,
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(delay)
    signalled = time.monotonic()
    run.send_signal(sent)
    try:
        _, errors = run.communicate(timeout=LIMIT + 5)  # returns once every holder of its output is gone
        status: int | None = run.returncode
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        _, errors = run.communicate()
        status = None
    ended = time.monotonic() - signalled
    alive = session_processes(run.pid)
    for pid in alive:  # leave nothing running for the next run
        os.kill(pid, signal.SIGKILL)
    leftovers = sorted(
        [str(p) for p in _tree(project) - before]
        + [str(p) for p in cache.rglob(".tmp-*")]
        + [str(p) for p in temporary.rglob("*")]
        + [str(p) for p in _shared() - shared]
    )
    return Outcome(sent, delay, status, ended, b"Traceback" in errors, alive, leftovers)


def _tree(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if ".metriclint_cache" not in path.parts}


def _shared() -> set[Path]:
    """The files multiprocessing's shared memory is made in (Linux), each unlinked as soon as made."""
    shm = Path("/dev/shm")
    return set(shm.glob("pym-*")) if shm.is_dir() else set()


def session_processes(session: int) -> list[int]:
    """The live processes of a session (Linux: from /proc; elsewhere none are seen)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":  # the session id, and not a zombie
            found.append(int(entry.name))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--latest", type=float, default=4.0, help="the latest moment a signal is sent, in seconds after the start")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=36)
    options = parser.parse_args()
    draw = random.Random(options.seed)
    installed = Path(sys.executable).with_name("metriclint")  # not `python -m`, which imports from the tree first
    command = [str(installed), "check", ".", "--quiet", "--jobs", str(options.jobs)]
    with tempfile.TemporaryDirectory(prefix="metriclint-signals-") as work:
        project = Path(work, "tree")
        shutil.copytree(options.tree, project, symlinks=True, ignore=shutil.ignore_patterns(".metriclint_cache"))
        outcomes = []
        for number in range(options.runs):
            outcome = signalled_run(project, Path(work, "scratch"), SIGNALS[number % 3], draw.uniform(0, options.latest), command)
            outcomes.append(outcome)
            name = signal.Signals(outcome.sent).name
            mark = "ok" if outcome.passed else "FAILED"
            print(
                f"{number + 1:4} {name:7} at {outcome.delay:5.2f} s: status {outcome.status}, ended {outcome.ended:5.2f} s later"
                f"{', processes left ' + str(outcome.processes) if outcome.processes else ''}"
                f"{', files left ' + str(outcome.leftovers) if outcome.leftovers else ''}"
                f"{', traceback' if outcome.traceback else ''}  {mark}",
                flush=True,
            )
    ended = [o.ended for o in outcomes]
    statuses = {s: sum(1 for o in outcomes if o.status == s) for s in sorted({o.status for o in outcomes}, key=str)}
    print(
        f"\n{len(outcomes)} runs, {sum(o.passed for o in outcomes)} passed; statuses {statuses}; "
        f"ended after the signal in {statistics.median(ended):.2f} s (median), {max(ended):.2f} s (longest); "
        f"hung {sum(o.status is None for o in outcomes)}, processes left {sum(bool(o.processes) for o in outcomes)}, "
        f"files left {sum(bool(o.leftovers) for o in outcomes)}, tracebacks {sum(o.traceback for o in outcomes)}"
    )
    sys.exit(0 if all(o.passed for o in outcomes) else 1)


if __name__ == "__main__":
    main()
