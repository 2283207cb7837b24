"""A progress bar for long runs: files parsed / total and the time left, on stderr, only where a
person watches, and never wider than the terminal (a line that wraps is redrawn below itself,
one line per update)."""

from __future__ import annotations

import os
import shutil
import time
from typing import Callable, Mapping, TextIO

DELAY = 2.0  # seconds before the bar appears: short runs stay quiet
WIDTH = 30  # the bar's width where the terminal has room


def wanted(stream: TextIO, quiet: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """A terminal, not a pipe, not CI, not --quiet."""
    return not quiet and stream.isatty() and not environ.get("CI")


def _columns() -> int:
    return shutil.get_terminal_size().columns


class Bar:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic, columns: Callable[[], int] = _columns) -> None:
        self.stream, self.clock, self.columns = stream, clock, columns
        self.start = clock()
        self.drawn = 0  # the width of the line last drawn

    def __call__(self, done: int, total: int) -> None:
        elapsed = self.clock() - self.start
        if elapsed < DELAY:
            return
        text = f" {done}/{total} files" + (f", {_duration(elapsed / done * (total - done))} left" if 0 < done < total else "")
        room = self.columns() - 1  # the last column stays empty: writing there wraps on some terminals
        width = min(WIDTH, room - len(text) - 2)
        filled = width * done // max(total, 1)
        line = (f"[{'#' * filled}{'-' * (width - filled)}]" if width >= 5 else "") + text
        line = line[:room].lstrip()
        self.stream.write("\r" + line + " " * max(0, self.drawn - len(line)))
        self.stream.flush()
        self.drawn = max(len(line), 1)

    def close(self) -> None:
        """Clear the bar so findings print on a clean line."""
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()


def _duration(seconds: float) -> str:
    """`0:07`, `12:30`, `1:02:03`: minutes and seconds, hours when there are any."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
