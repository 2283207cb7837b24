"""YAML maps from metric keys to texts, read only where a configuration points at them.

The same shapes as the JSON source, offered under JSON pointers: a mapping of key to text or
to a mapping holding one (`rules/tooltips.yaml: text_fields`), or a list of `[pattern, text]`.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterator

import yaml

from metriclint.base import marked_yaml
from metriclint.base.marked_yaml import Node
from metriclint.model import Mention, SourceKind, Span, Suppression, TooltipEntry, TooltipTable
from metriclint.sources import DEFAULT_OPTIONS, Extraction, Extractor, Options, Unreadable, directives, pointer_token
from metriclint.sources.tree_tables import table_rules

# PyYAML counts a byte-order mark as a column of the first line: it stays in the text.
ENCODING = "utf-8"


def encoding(data: bytes) -> str:
    return ENCODING


def extractor(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor:
    return extract


def extract(path: str, data: bytes) -> Extraction:
    try:
        text = data.decode(ENCODING)
    except UnicodeDecodeError as error:
        raise Unreadable(f"cannot decode YAML: {error.reason}") from None
    root, problems = marked_yaml.load(text, path)
    if problems:
        raise Unreadable(problems[0].message, problems[0].line, problems[0].column)
    tables = tuple(_tables(path, root, "")) if root is not None else ()
    return Extraction(tables=tables, suppressions=_suppressions(path, text))


# A comment starts with `#` at a line's start or after white space, outside every scalar.
_HASH = re.compile(r"(?:^|(?<=[ \t]))#", re.MULTILINE)
_LINE_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")  # as PyYAML counts lines


def _suppressions(path: str, text: str) -> tuple[Suppression, ...]:
    """`# metriclint: ignore[ML001] why`, each covering its own line. The YAML parser drops
    comments, so they are found by YAML's rule, with the scalars' places from its events."""
    if directives.MARK.decode() not in text:
        return ()
    scalars = [
        (e.start_mark.index, e.end_mark.index)
        for e in yaml.parse(text, Loader=yaml.SafeLoader)
        if isinstance(e, yaml.ScalarEvent) and e.start_mark is not None and e.end_mark is not None
    ]
    starts = [0, *(m.end() for m in _LINE_BREAK.finditer(text))]
    found, commented = [], set()
    for mark in _HASH.finditer(text):
        line = bisect.bisect_right(starts, mark.start())
        if line in commented or any(start <= mark.start() < end for start, end in scalars):
            continue  # inside a scalar, or in a comment already
        commented.add(line)
        comment = _LINE_BREAK.split(text[mark.start() : starts[line] if line < len(starts) else len(text)])[0]
        directive = directives.directive(comment)
        if directive is not None:
            column = mark.start() - starts[line - 1] + 1
            span = Span(path, line, column + directive.start, line, column + len(comment))
            found.append(directives.suppression(directive, span, (line,)))
    return tuple(found)


def _tables(path: str, node: Node, pointer: str) -> Iterator[TooltipTable]:
    rows = _rows(path, node)
    if rows:
        entries = tuple(TooltipEntry(p, t, s, i) for i, (p, t, s) in enumerate(rows))
        yield TooltipTable(path, "yaml", pointer, entries)
        return
    if node.kind == "mapping":
        for name, (_, value) in node.entries.items():
            yield from _tables(path, value, f"{pointer}/{pointer_token(name)}")
    elif node.kind == "sequence":
        for i, item in enumerate(node.elements):
            yield from _tables(path, item, f"{pointer}/{i}")


def _rows(path: str, node: Node) -> list[tuple[str, Mention, Span]] | None:
    rows = []
    if node.kind == "mapping":
        for name, (key, value) in node.entries.items():
            text = _text_of(path, value)
            if text is None:
                return None
            rows.append((name, text, _span(path, key, name)))
    elif node.kind == "sequence":
        for item in node.elements:
            pair = item.elements
            pattern = pair[0].value if len(pair) == 2 else None
            text = _mention(path, pair[1]) if len(pair) == 2 else None
            if not isinstance(pattern, str) or pair[0].kind != "string" or text is None:
                return None
            rows.append((pattern, text, _span(path, pair[0], pattern)))
    return rows or None


def _text_of(path: str, node: Node) -> Mention | None:
    if node.kind != "mapping":
        return _mention(path, node)
    fields = node.entries
    for name in table_rules().text_fields:
        if name in fields:
            return _mention(path, fields[name][1])
    return None


def _mention(path: str, node: Node) -> Mention | None:
    """A text with its position; a folded or multi-line one is read as one line at its start."""
    text = node.value
    if node.kind != "string" or not isinstance(text, str):
        return None
    if "\n" in text.rstrip("\n") or node.style in ("|", ">"):
        return Mention(SourceKind.TOOLTIP, path, " ".join(text.split()), ((node.line, node.column),))
    quote = 1 if node.style in ("'", '"') else 0
    return Mention(SourceKind.TOOLTIP, path, text, ((node.line, node.column + quote),))


def _span(path: str, node: Node, text: str) -> Span:
    return Span(path, node.line, node.column, node.line, node.column + len(text))
