"""The signals that end a run (SIGINT, SIGTERM, SIGHUP), and the moments they must wait for.

Python runs a signal's handler between any two lines the main thread runs, so the exception
it raises could land between a fork and the line where multiprocessing lists the child (the
child then kept the caller's stdout open: the suite's signal test hung in CI, under load, on
Python 3.13), or between making a temporary file and removing it (interrupted runs left
`.tmp-` files in the cache folder, 9 in 75). Inside `held`, those signals wait, and arrive
as it ends.
"""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from typing import Iterator

# Besides Ctrl-C (SIGINT), the signals on which the CLI ends a run as a shell would (143, 129).
ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
ALL = (signal.SIGINT, *ENDING)
_held = 0  # how many `held` blocks are open
_pending: int | None = None  # the signal that came while one was


def end_run(signum: int, frame: object) -> None:
    """The handler that ends a run on those signals: KeyboardInterrupt for SIGINT, else
    SystemExit with the status a shell reports for a process the signal ended (143, 129);
    both unwind, so that workers and temporary files are cleaned up. Inside `held`, as it ends."""
    global _pending
    if _held:
        _pending = _pending or signum
        return
    _end(signum)


def _end(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    sys.exit(128 + signum)


def install() -> None:
    """`end_run` for each of those signals (from the main thread)."""
    for signum in ALL:
        signal.signal(signum, end_run)


@contextmanager
def held() -> Iterator[None]:
    """Those signals wait while inside, and arrive as it ends. Blocked too, not only deferred:
    a process forked inside inherits the block, so a signal sent to it before it has set its
    own handlers (`as_child`) waits for them, rather than running the parent's. (Blocking
    alone is not enough: a signal blocked in this thread is taken by another, and its handler
    still runs in the main one.)"""
    global _held, _pending
    blocking = hasattr(signal, "pthread_sigmask")  # not on Windows, which has no forks either
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ALL) if blocking else set()
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if blocking:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if not _held and _pending is not None:
            signum, _pending = _pending, None
            _end(signum)


def as_child() -> None:
    """A forked process's own handling of those signals. Ctrl-C reaches the whole process
    group, and the parent ends its children; SIGTERM and SIGHUP end the child at once (the
    parent's handler, inherited, raises SystemExit, which the child's code could catch)."""
    global _held, _pending
    _held, _pending = 0, None  # forked inside a `held` block of the parent's
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for ending in ENDING:
        signal.signal(ending, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, ALL)
