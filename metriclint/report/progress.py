"""A progress bar for long runs: files parsed / total, on stderr, only where a person watches."""

from __future__ import annotations

import os
import time
from typing import Callable, Mapping, TextIO

DELAY = 2.0  # seconds before the bar appears: short runs stay quiet
WIDTH = 30


def wanted(stream: TextIO, quiet: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """A terminal, not a pipe, not CI, not --quiet."""
    return not quiet and stream.isatty() and not environ.get("CI")


class Bar:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.start = clock()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if self.clock() - self.start < DELAY:
            return
        filled = WIDTH * done // max(total, 1)
        self.stream.write(f"\r[{'#' * filled}{'-' * (WIDTH - filled)}] {done}/{total} files")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Clear the bar so findings print on a clean line."""
        if self.drawn:
            self.stream.write("\r" + " " * (WIDTH + 30) + "\r")
            self.stream.flush()
