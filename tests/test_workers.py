"""The worker pool tells a worker that is stuck from a file that is slow.

A forked worker can stall without using the processor: a lock held by another thread of the
parent at the fork (pytest-xdist's), or a machine too busy to run it. Such a stall is not its
file's fault, so the file is read once more by a new worker before it is reported as too slow;
a file that keeps its worker busy for the whole limit is reported at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from metriclint.extract import workers

_POOL = """
import os, sys, time
from metriclint.extract import workers

def once(name):  # true the first time it is asked in this folder, in any process
    try:
        os.close(os.open(name, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True

def read(item):
    if item.startswith("stalls once") and once(item) or item == "stalls always":
        time.sleep(600)  # waits without using the processor
    if item == "busy" and once(item):
        while True:
            pass
    return item if item != "busy" else "busy, read again"

def start():
    if sys.argv[1] == "start stalls once" and once("start") or sys.argv[1] == "start stalls always":
        time.sleep(600)

maps = [[]]  # the items of each map, "|" between two: a standing pool is mapped again
for arg in sys.argv[2:]:
    maps.append([]) if arg == "|" else maps[-1].append(arg)
with workers.Pool(read, 1, 1.0, 2**30, start=start) as pool:
    for items in maps:
        print(list(pool.map(items, [len(items)])))
"""


def _mapped(tmp_path: Path, start: str, *items: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", _POOL, start, *items], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a worker's processor time is read from /proc")


@PROC
def test_an_item_whose_worker_stalled_is_read_again_by_another(tmp_path: Path) -> None:
    assert _mapped(tmp_path, "-", "a", "stalls once", "b") == "['a', 'stalls once', 'b']"


@PROC
def test_an_item_whose_worker_stalls_twice_is_lost_for_its_time(tmp_path: Path) -> None:
    assert _mapped(tmp_path, "-", "a", "stalls always", "b") == "['a', Lost(timed_out=True, error=''), 'b']"


def test_an_item_that_keeps_its_worker_busy_is_lost_at_once(tmp_path: Path) -> None:
    assert _mapped(tmp_path, "-", "a", "busy", "b") == "['a', Lost(timed_out=True, error=''), 'b']"


@PROC
def test_each_map_of_a_pool_reads_again_an_item_whose_worker_stalled(tmp_path: Path) -> None:
    """The items of each map are numbered from 0: the first's retry did not count for the second's."""
    assert _mapped(tmp_path, "-", "stalls once", "|", "stalls once too") == "['stalls once']\n['stalls once too']"


def test_where_no_worker_starts_each_item_is_lost_as_an_error_not_a_wait(tmp_path: Path) -> None:
    lost = "Lost(timed_out=False, error='no process started to read it within 1 s')"
    assert _mapped(tmp_path, "start stalls always", "a", "b") == f"[{lost}, {lost}]"


def test_a_worker_that_stalls_before_its_first_item_is_replaced(tmp_path: Path) -> None:
    """Its batch was waited for without a deadline: the run hung."""
    assert _mapped(tmp_path, "start stalls once", "a", "b") == "['a', 'b']"


def test_a_worker_answering_its_batch_has_no_deadline_but_one_yet_to_begin_it_has() -> None:
    """A batch read whole is being sent back (a big answer takes a while): the time since it was
    handed out, longer than the limit for a batch of many files, is no stall of the worker."""
    pool: workers.Pool[str, str] = workers.Pool(str, 1, 60.0, 2**30)
    pool.handed[0] = 100.0
    pool.progress[0], pool.progress[1] = -1, 0.0  # handed out, not begun
    assert pool._since(0) == 100.0
    pool.progress[0], pool.progress[1] = 3, 250.0  # its fourth item, begun at 250
    assert pool._since(0) == 250.0
    pool.progress[1] = 0.0  # every item read: answering
    assert pool._since(0) is None
