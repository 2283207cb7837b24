"""Source kinds: each module turns one kind of file into mentions and logged keys.

Takes one file's path and bytes; gives its `Extraction` (texts with their readings, logged
keys, tooltip tables, suppressions, function flows). `LANGUAGES` maps a suffix to its
source kind, so adding a kind is one module and one line there.

A source never raises for a bad file: it raises `Unreadable`, which the pipeline turns into an
ML900 finding, and the run goes on with the next file.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

from metriclint.model import (
    Bag,
    CallbackList,
    CallFlow,
    ConstantHelp,
    FlagDefault,
    FunctionFlow,
    KeyUse,
    Mention,
    MethodCall,
    PassedCallback,
    ProjectClass,
    ReadFailure,
    Reading,
    Rewrite,
    Span,
    Suppression,
    TooltipTable,
)

if TYPE_CHECKING:
    from metriclint.knowledge.code_entries import Known

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
    # keys the code reads back from a dict (`d["perf/x_time"]`, `"perf/x_time" in d`): logged
    # when a template the code logs covers them (evidence/built_keys.py)
    reads: tuple[KeyUse, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()  # classes that may rewrite what a framework logs (sources/python/frameworks.py)
    flags: tuple[FlagDefault, ...] = ()  # flags defined here, for the placeholders' default path
    classes: tuple[ProjectClass, ...] = ()  # for the entry points reached through the project's classes (evidence/inherited.py)
    callbacks: tuple[PassedCallback, ...] = ()  # callbacks handed to an entry point, for the project-wide step (evidence/callbacks.py)
    callback_lists: tuple[CallbackList, ...] = ()  # ... and what functions that make them return
    method_calls: tuple[
        MethodCall, ...
    ] = ()  # calls of an entry point's methods that log keys (`trainer.evaluate()`, evidence/called_keys.py)
    # module-level constants that may name a metric, by import path (`pkg.series.LOSS`), and
    # the help texts of metrics named by another module's constant (evidence/constants.py)
    constants: tuple[tuple[str, str], ...] = ()
    constant_help: tuple[ConstantHelp, ...] = ()
    # module-level lists of names under a constant's name, by import path (`pkg.phases.SHOWN`):
    # another module may hand one to a logger keyed by them (evidence/logged_bags.py)
    name_lists: tuple[tuple[str, Bag], ...] = ()
    # module-level names that hold an instance of a class, by import path (`pkg.mod.tracker` ->
    # `pkg.trackers.Tracker`), so that a call of one of its methods reaches the method (evidence/callees.py)
    instances: tuple[tuple[str, str], ...] = ()
    # classes whose methods run elsewhere, called by name through a handle or a group of them
    # (`ray.remote(Worker)`, rules/dataflow.yaml `dispatch`), dotted as imported (evidence/callees.py)
    dispatched: tuple[str, ...] = ()
    # calls matched by a tracker's method name that may reach a method of the project's own
    # (`self.board.log(metrics)`, or `logger.log_metrics(metrics)` on an object nothing names,
    # handed a dict): their span, callee as the file names it (KeyUse.via), caller, and the
    # keywords the call passes
    tentative: tuple[tuple[Span, str, str, tuple[str, ...]], ...] = ()
    # the code of a file in syntax this Python rejects, whose texts alone were read (python/cst.py):
    # reported (ML900), since what it logs is not seen
    code_unread: ReadFailure | None = None

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


def utf8(data: bytes) -> str:
    """UTF-8, with a byte-order mark (if the file starts with one) out of the text, as editors
    count columns; encoding with the same codec writes the mark back."""
    return "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"


def pointer_token(name: str) -> str:
    """One step of a JSON pointer (RFC 6901), the name a configuration selects a table by."""
    return name.replace("~", "~0").replace("/", "~1")


JAVASCRIPT = (".js", ".mjs", ".cjs", ".jsx")
TYPESCRIPT = (".ts", ".tsx")
YAML = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class Options:
    """What a source needs besides a file's bytes: the project's extra logging functions
    (`log_functions = [...]`), what its own helpers compute (the registry's `code:` section),
    and whether the file is a test (the `tests` globs), whose code computes nothing it logs."""

    log_functions: frozenset[str] = frozenset()
    code: tuple[Known, ...] = ()
    test: bool = False  # set per file by the runner; the config's options leave it False


DEFAULT_OPTIONS = Options()


class Language(Protocol):
    """A source kind, as a module: what a file of it holds, and how it is decoded."""

    def extractor(self, suffix: str, options: Options = ..., /) -> Extractor: ...

    def encoding(self, data: bytes, /) -> str:
        """The codec the source decodes `data` with, counting columns as its positions do:
        `fix` writes a file back with it, so a byte-order mark or a coding cookie survives."""
        ...


def _python() -> Language:
    from metriclint.sources import python

    return python


def _javascript() -> Language:
    from metriclint.sources import javascript

    return javascript


def _json() -> Language:
    from metriclint.sources import json_tables

    return json_tables


def _yaml() -> Language:
    from metriclint.sources import yaml_tables

    return yaml_tables


def _markdown() -> Language:
    from metriclint.sources import markdown

    return markdown


# A file's suffix -> its source kind, imported when first asked for so unused parsers cost
# nothing. Adding a kind: a module with `extractor` and `encoding`, and its line here.
LANGUAGES: dict[str, Callable[[], Language]] = {
    ".py": _python,
    **dict.fromkeys(JAVASCRIPT + TYPESCRIPT, _javascript),
    ".json": _json,
    **dict.fromkeys(YAML, _yaml),
    ".md": _markdown,
    ".markdown": _markdown,
}


def language_for(suffix: str) -> Language | None:
    load = LANGUAGES.get(suffix)
    return load() if load is not None else None


def extractor_for(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor | None:
    """The extractor for a file name suffix, if metriclint reads that kind of file."""
    language = language_for(suffix)
    return language.extractor(suffix, options) if language is not None else None


# YAML files are read only where a tooltip table is configured (the engine adds them).
SUFFIXES = (".py", *JAVASCRIPT, *TYPESCRIPT, ".json", ".md", ".markdown")
