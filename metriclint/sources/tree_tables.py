"""Tooltip tables in tree-sitter trees, shared by the JavaScript, TypeScript and JSON sources.

The grammars name their nodes alike (`object`, `pair`, `array`, `string`), so one reader
recognises the table shapes in all of them: arrays of `[pattern, text]` pairs, objects mapping a
key to a text or to an object holding one (`rules/tooltips.yaml: text_fields`), and
`new Map([...])`. Texts keep exact positions: an escape sequence is replaced by its character
padded to the same width, so every offset in the text is still the offset in the file.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Iterator

from tree_sitter import Node, Tree

from metriclint.base.builtin import word_lists
from metriclint.base.columns import Columns
from metriclint.model import Mention, SourceKind, Span, Suppression, TooltipEntry, TooltipTable
from metriclint.sources import Unreadable, directives, source_lines

BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_ESCAPES = {"n": " ", "t": " ", "r": " ", "b": " ", "f": " ", "v": " ", "0": " "}
_WRAPPERS = ("as_expression", "satisfies_expression", "parenthesized_expression", "non_null_expression")


@dataclass(frozen=True, slots=True)
class TableRules:
    text_fields: tuple[str, ...]
    promql_keywords: frozenset[str]
    series_suffixes: tuple[str, ...]


@lru_cache(maxsize=1)
def table_rules() -> TableRules:
    lists = word_lists("tooltips.yaml")
    return TableRules(
        lists.get("text_fields", ()), frozenset(lists.get("promql_keywords", ())), lists.get("prometheus_series_suffixes", ())
    )


class TreeFile:
    """One parsed file: maps tree-sitter byte positions to 1-based character columns."""

    def __init__(self, path: str, data: bytes, tree: Tree, language: str) -> None:
        self.path, self.data, self.tree, self.language = path, data, tree, language
        self._rows: dict[int, Columns] = {}  # each line's, made when a node on it is placed

    @cached_property
    def starts(self) -> list[int]:
        """Where each line starts. tree-sitter's rows end at "\n" only; a file with lone "\r"
        line ends would be one row, so positions come from byte offsets instead. Worked out
        only for a file with something to report: most JSON holds no table."""
        return [0, *(m.end() for m in _LINE_END.finditer(self.data))]

    def check(self) -> None:
        """A file that is not UTF-8, or that the grammar cannot parse, is reported (ML900), at
        its first error: tree-sitter reads bytes that are not UTF-8 without a word, and the
        texts would then quote characters the file does not hold."""
        try:
            self.data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise Unreadable(f"cannot decode {self.language}: not UTF-8 ({error.reason})", *self.place(error.start)) from None
        if not self.tree.root_node.has_error:
            return
        bad = _first_error(self.tree.root_node)
        line, column = self.position(bad) if bad is not None else (1, 1)
        raise Unreadable(f"cannot parse {self.language}: syntax error", line, column)

    def position(self, node: Node, end: bool = False) -> tuple[int, int]:
        return self.place(node.end_byte if end else node.start_byte)

    def place(self, offset: int) -> tuple[int, int]:
        """The line and column (1-based, in characters) of byte `offset`."""
        row = bisect.bisect_right(self.starts, offset) - 1
        start = len(BOM) if row == 0 and self.data.startswith(BOM) else self.starts[row]  # editors do not count it
        if offset < start:
            return 1, 1
        if row not in self._rows:
            stop = self.starts[row + 1] if row + 1 < len(self.starts) else len(self.data)
            self._rows[row] = Columns(self.data[start:stop])
        return row + 1, self._rows[row].at(offset - start) + 1

    def span(self, node: Node) -> Span:
        return Span(self.path, *self.position(node), *self.position(node, end=True))

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def suppressions(self) -> tuple[Suppression, ...]:
        """`// metriclint: ignore[ML001] why` and `/* ... */` directives, each covering the lines
        of its comment (a trailing comment: the entry on its line)."""
        if directives.MARK not in self.data:
            return ()
        found = []
        for node in _comments(self.tree.root_node):
            text = self.text(node)
            directive = directives.directive(text)
            if directive is None:
                continue
            (line, column), (end_line, end_column) = self.position(node), self.position(node, end=True)
            before = text[: directive.start]
            at_line = line + before.count("\n")
            at_column = column + len(before) if "\n" not in before else len(before) - before.rfind("\n")
            span = Span(self.path, at_line, at_column, end_line, end_column)
            found.append(directives.suppression(directive, span, range(line, end_line + 1)))
        return tuple(found)

    def string(self, node: Node | None) -> Mention | None:
        """A string literal (or a template literal without substitutions) as a tooltip text."""
        node = unwrap(node)
        text = self._string_text(node)
        if text is None or node is None:
            return None
        line, column = self.position(node)
        origins = [(line, column + 1)] + [(line + i, 1) for i in range(1, text.count("\n") + 1)]
        return Mention(SourceKind.TOOLTIP, self.path, text, tuple(origins))

    def key(self, node: Node | None) -> str | None:
        if node is None:
            return None
        if node.type in ("property_identifier", "number", "identifier"):
            return self.text(node)
        return self._string_text(unwrap(node))

    def _string_text(self, node: Node | None) -> str | None:
        """The text of a string literal, its escapes padded to their width (see `_decoded`);
        None for anything else. Keys need only this: working out a position costs more."""
        if node is None or node.type not in ("string", "template_string"):
            return None
        pieces = []
        for child in node.children[1:-1]:
            if child.type == "template_substitution":
                return None
            raw = self.text(child)
            pieces.append(_decoded(raw) if child.type == "escape_sequence" else raw)
        return "\n".join(source_lines("".join(pieces)))


def _decoded(escape: str) -> str:
    """`\\"` -> `" ` : the character, padded so the text keeps the file's offsets."""
    char = escape[1:2]
    if char in ("u", "x"):
        digits = escape[2:].strip("{}")
        try:
            char = chr(int(digits, 16))
        except ValueError:
            char = " "
    elif char in _ESCAPES or char == "\n":
        char = " "
    return char.ljust(len(escape))


def _comments(root: Node) -> Iterator[Node]:
    """Every comment in the tree, in file order: the grammars place them anywhere."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            yield node
        stack.extend(reversed(node.children))


def _first_error(node: Node | None) -> Node | None:
    """Down the erroneous branch, iteratively: a broken file may be nested arbitrarily deep."""
    while node is not None and node.type != "ERROR" and not node.is_missing:
        node = next((child for child in node.children if child.has_error), None)
    return node


def unwrap(node: Node | None) -> Node | None:
    """The value under `as const`, `satisfies T`, parentheses and `Object.freeze(...)`."""
    while node is not None:
        if node.type in _WRAPPERS:
            node = node.named_children[0] if node.named_children else None
        elif node.type == "call_expression" and _callee(node) == "Object.freeze":
            node = _first_argument(node)
        else:
            return node
    return None


def _callee(node: Node) -> str:
    callee = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    return callee.text.decode("utf-8", "replace") if callee is not None and callee.text else ""


def _first_argument(node: Node) -> Node | None:
    arguments = node.child_by_field_name("arguments")
    values = [c for c in arguments.named_children if c.type != "comment"] if arguments else []
    return values[0] if values else None


def _items(node: Node) -> list[Node]:
    return [c for c in node.named_children if c.type != "comment"]


def table(source: TreeFile, node: Node | None, kind: str, name: str) -> TooltipTable | None:
    """The tooltip table `node` holds, if it has one of the table shapes; None otherwise."""
    node = unwrap(node)
    if node is None:
        return None
    if node.type == "new_expression" and _callee(node) == "Map":
        node = unwrap(_first_argument(node))
        if node is None or node.type != "array":
            return None
    rows = _pairs(source, node) if node.type == "array" else _object_rows(source, node) if node.type == "object" else None
    if not rows:
        return None
    entries = tuple(TooltipEntry(pattern, text, span, order) for order, (pattern, text, span) in enumerate(rows))
    return TooltipTable(source.path, kind, name, entries)


Row = tuple[str, Mention, Span]


def _pairs(source: TreeFile, node: Node) -> list[Row] | None:
    rows = []
    for wrapped in _items(node):
        item = unwrap(wrapped)
        elements = _items(item) if item is not None and item.type == "array" else []
        if len(elements) != 2:
            return None
        pattern, text = source.key(elements[0]), source.string(elements[1])
        if pattern is None or text is None:
            return None
        rows.append((pattern, text, source.span(elements[0])))
    return rows


def _object_rows(source: TreeFile, node: Node) -> list[Row] | None:
    rows = []
    for pair in _items(node):
        if pair.type != "pair":
            return None
        key_node = pair.child_by_field_name("key")
        pattern, text = source.key(key_node), _text_of(source, pair.child_by_field_name("value"))
        if pattern is None or text is None or key_node is None:
            return None
        rows.append((pattern, text, source.span(key_node)))
    return rows


def _text_of(source: TreeFile, value: Node | None) -> Mention | None:
    value = unwrap(value)
    if value is None or value.type != "object":
        return source.string(value)
    fields = {source.key(p.child_by_field_name("key")): p.child_by_field_name("value") for p in _items(value) if p.type == "pair"}
    for name in table_rules().text_fields:
        if name in fields:
            return source.string(fields[name])
    return None
