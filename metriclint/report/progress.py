"""A progress bar for long runs: files parsed / total and the time left, on stderr, only where a
person watches, and never wider than the terminal (a line that wraps is redrawn below itself,
one line per update).

The time left is the pace since the first report (when parsing starts) times the files left:
the start-up before it (settings, the registry, listing the files, readying the workers) is no
file's, and counted in would predict 47 minutes at file 1 of a 17-second run."""

from __future__ import annotations

import os
import shutil
import time
from typing import Callable, Mapping, TextIO

DELAY = 2.0  # seconds before the bar appears: short runs stay quiet
REDRAW = 0.1  # seconds between two drawings: a warm run reports thousands of files a second
NOT_SET = ("", "0", "false", "no", "off")  # `CI=false` is a machine that says it is no CI
WIDTH = 30  # the bar's width where the terminal has room


def wanted(stream: TextIO, quiet: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """A terminal, not a pipe, not CI, not --quiet."""
    return not quiet and stream.isatty() and environ.get("CI", "").strip().lower() in NOT_SET


def _columns() -> int:
    return shutil.get_terminal_size().columns


class Bar:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic, columns: Callable[[], int] = _columns) -> None:
        self.stream, self.clock, self.columns = stream, clock, columns
        self.start = clock()
        self.first: tuple[float, int] | None = None  # when parsing started, and the files done then
        self.last = float("-inf")  # when the bar was last drawn
        self.drawn = 0  # the width of the line last drawn

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.first is None:
            self.first = (now, done)
        if now - self.start < DELAY or now - self.last < REDRAW:
            return
        self.last = now
        since, then = self.first
        left = f", {_duration((now - since) / (done - then) * (total - done))} left" if then < done < total else ""
        text = f" {done}/{total} files{left}"
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
