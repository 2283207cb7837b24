"""A function run in a forked process while this one goes on.

A run that reads every file (cold) lists them there, and tells which are tests, while it
readies the readers here: the phrase patterns compiled, Python's parser and code knowledge
loaded. On miles the two take 0.13 s and 0.11 s, and came one after the other, on one core,
before any file was read.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Callable, TypeVar

from metriclint.base import signals

T = TypeVar("T")
_END_SECONDS = 5.0  # for the process to end once it has answered or was killed: never waited on for longer


def aside(function: Callable[[], T]) -> Callable[[], T]:
    """`function()` started in a forked process; the callable returned waits for its result.

    Where the workers are not forked either (Windows, macOS, the language server's
    forkserver: a fork beside its threads may hang), or when the process fails, the callable
    computes it here, so that an error is raised where it always was."""
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        return function
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=_send, args=(receiving, sending, function), daemon=True)
    with signals.held():  # listed before a signal can land (base/signals.py): a daemon, ended at exit
        process.start()
    sending.close()

    def result() -> T:
        try:
            outcome = receiving.recv()
        except (EOFError, OSError):  # the process died
            outcome = None
        except BaseException:  # a signal ends the run: the process, whose result is not needed, with it
            process.kill()
            raise
        finally:
            receiving.close()
            process.join(_END_SECONDS)
        return function() if outcome is None else outcome[0]

    return result


def _send(receiving: Any, sending: Any, function: Callable[[], object]) -> None:
    signals.as_child()
    receiving.close()  # so that a send the parent no longer reads fails, rather than waits
    try:
        outcome = (function(),)
    except BaseException:  # noqa: BLE001 - the caller computes it again, and meets the error itself
        outcome = None
    with suppress(OSError):  # the parent is gone
        sending.send(outcome)
