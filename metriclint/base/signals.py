"""The signals that end a run, around the forks of its processes.

Python runs a signal's handler between any two lines the main thread runs, so the exception
it raises (KeyboardInterrupt, or the CLI's SystemExit) could land between a fork and the line
where multiprocessing lists the child. Nothing ended that child, and it kept the caller's
stdout and stderr open: the suite's signal test hung in CI, under load, on Python 3.13.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Iterator

# Besides Ctrl-C (SIGINT), the signals on which the CLI ends a run as a shell would (143, 129).
ENDING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
_ALL = (signal.SIGINT, *ENDING)


@contextmanager
def held() -> Iterator[None]:
    """Those signals wait while inside, and arrive as it ends. Blocked, not caught: a process
    forked inside inherits the block, so a signal sent to it before it has set its own
    handlers (`as_child`) waits for them, rather than running the parent's."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no forks either
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _ALL)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def as_child() -> None:
    """A forked process's own handling of those signals. Ctrl-C reaches the whole process
    group, and the parent ends its children; SIGTERM and SIGHUP end the child at once (the
    CLI's handler, inherited, raises SystemExit, which a pool would catch)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for ending in ENDING:
        signal.signal(ending, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _ALL)
