"""Source kinds: each module turns one kind of file into mentions and logged keys.

A source never raises for a bad file: it raises `Unreadable`, which the pipeline turns into an
ML900 finding, and the run goes on with the next file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable

from metriclint.model import CallFlow, FunctionFlow, KeyUse, Mention, Reading, Suppression, TooltipTable

Text = tuple[Mention, tuple[Reading, ...]]  # a text, and what it states


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one file holds. Each text comes with what it states (language/phrases.read): a
    source gives its texts unread (`unread`), and the runner reads them where the file is
    extracted, in parallel and cached, since reading needs nothing but the text."""

    texts: tuple[Text, ...] = ()
    keys: tuple[KeyUse, ...] = ()
    # `metriclint: ignore[...]` comments: a source passes each comment's text to
    # `directives.directive` and records `directives.suppression(found, span, lines_covered)`.
    suppressions: tuple[Suppression, ...] = ()
    tables: tuple[TooltipTable, ...] = ()  # resolved against the known keys later (language/tooltips.py)
    functions: tuple[FunctionFlow, ...] = ()  # for code evidence across modules (evidence/code_claims.py)
    calls: tuple[CallFlow, ...] = ()

    @property
    def mentions(self) -> tuple[Mention, ...]:
        return tuple(mention for mention, _ in self.texts)


def unread(mentions: Iterable[Mention]) -> tuple[Text, ...]:
    """A source's texts, before anything is read from them."""
    return tuple((mention, ()) for mention in mentions)


class Unreadable(Exception):
    """The file cannot be decoded or parsed; `line`/`column` point at the cause when known."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


Extractor = Callable[[str, bytes], Extraction]


def source_lines(text: str) -> list[str]:
    """The lines of a text from a Python file, ended as Python ends them: by "\\r\\n", "\\r" or "\\n".

    Not `str.splitlines`, which also breaks at form feeds and Unicode separators that Python
    reads as ordinary characters; that would shift every reported line after them.
    """
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def pointer_token(name: str) -> str:
    """One step of a JSON pointer (RFC 6901), the name a configuration selects a table by."""
    return name.replace("~", "~0").replace("/", "~1")


JAVASCRIPT = (".js", ".mjs", ".cjs", ".jsx")
TYPESCRIPT = (".ts", ".tsx")
YAML = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class Options:
    """Project settings a source needs: extra logging functions (`log_functions = [...]`)."""

    log_functions: frozenset[str] = frozenset()


DEFAULT_OPTIONS = Options()


def extractor_for(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor | None:
    """The extractor for a file name suffix; imported lazily so unused parsers cost nothing."""
    if suffix == ".py":
        from metriclint.sources import python

        return partial(python.extract, log_functions=options.log_functions)
    if suffix in JAVASCRIPT or suffix in TYPESCRIPT:
        from metriclint.sources import javascript

        return javascript.extractor(suffix)
    if suffix == ".json":
        from metriclint.sources import json_tables

        return json_tables.extract
    if suffix in YAML:
        from metriclint.sources import yaml_tables

        return yaml_tables.extract
    if suffix in (".md", ".markdown"):
        from metriclint.sources import markdown

        return markdown.extract
    return None


# YAML files are read only where a tooltip table is configured (the engine adds them).
SUFFIXES = (".py", *JAVASCRIPT, *TYPESCRIPT, ".json", ".md", ".markdown")
