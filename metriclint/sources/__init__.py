"""Source kinds: each module turns one kind of file into mentions and logged keys.

A source never raises for a bad file: it raises `Unreadable`, which the pipeline turns into an
ML900 finding, and the run goes on with the next file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from metriclint.model import KeyUse, Mention, Suppression


@dataclass(frozen=True, slots=True)
class Extraction:
    mentions: tuple[Mention, ...] = ()
    keys: tuple[KeyUse, ...] = ()
    # `metriclint: ignore[...]` comments: a source passes each comment's text to
    # `suppress.directive` and records `suppress.suppression(found, span, lines_covered)`.
    suppressions: tuple[Suppression, ...] = ()


class Unreadable(Exception):
    """The file cannot be decoded or parsed; `line`/`column` point at the cause when known."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


Extractor = Callable[[str, bytes], Extraction]


def extractor_for(suffix: str) -> Extractor | None:
    """The extractor for a file name suffix; imported lazily so unused parsers cost nothing."""
    if suffix == ".py":
        from metriclint.sources import python

        return python.extract
    return None


SUFFIXES = (".py",)
