"""Where each key and value of a TOML or JSON document is written, for problems reported at
their place (settings files, baselines).

tomllib and json give values without positions. The document is parsed a second time with
tree-sitter's grammar, whose tree keeps them, and each key is named by its path as the value
nests it: `("tool", "metriclint", "severity", "ML010")` for `severity = {"ML010" = ...}` under
`[tool.metriclint]`, `severity.ML010 = ...` or `[tool.metriclint.severity]`; an element of an
array, and the n-th `[[table]]` of a name, by its 0-based index. Read only once a problem needs a
place: a file with none is parsed once, by tomllib or json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Union

from tree_sitter import Language, Node, Parser

from metriclint.base.columns import Columns
from metriclint.base.toml import tomllib

Key = Union[str, int]
Path = tuple[Key, ...]
_SHOWN = 60  # characters of a value shown in a message


@dataclass(frozen=True)
class Place:
    """Where a key is written (1-based line and character column) and its value as written."""

    line: int
    column: int
    written: str = ""  # the value's source text, on one line, cut to _SHOWN characters


class Places:
    """The places of a document's keys, by path; a path never written (a default) is at 1:1."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8", "surrogatepass")
        self.lines = self.data.split(b"\n")
        self.keys: dict[Path, Place] = {}
        self.values: dict[Path, Place] = {}
        self._columns: dict[int, Columns] = {}  # each line's, made once: a minified file is one line

    def key(self, path: Path) -> Place:
        """Where the key at `path` is written, or the nearest enclosing key's place."""
        return self._nearest(self.keys, path)

    def value(self, path: Path) -> Place:
        """Where the value at `path` is written, with its text; else as `key`."""
        return self.values.get(path) or self._nearest(self.keys, path)

    def _nearest(self, found: dict[Path, Place], path: Path) -> Place:
        for end in range(len(path), 0, -1):
            if path[:end] in found:
                return found[path[:end]]
        return Place(1, 1)

    def _note(self, found: dict[Path, Place], path: Path, node: Node, written: bool = False) -> None:
        if path in found:
            return
        row, column = node.start_point
        if row not in self._columns:
            self._columns[row] = Columns(self.lines[row] if row < len(self.lines) else b"")
        shown = " ".join(self._text(node).split()) if written else ""
        found[path] = Place(row + 1, self._columns[row].at(column) + 1, shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "...")

    def _text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")


class TomlPlaces(Places):
    """A TOML document's places."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._arrays: dict[Path, int] = {}  # how many [[name]] tables of each name so far
        for node in _parser("toml").parse(self.data).root_node.named_children:
            self._top(node)

    def _top(self, node: Node) -> None:
        if node.type == "pair":
            self._pair(node, ())
        elif node.type in ("table", "table_array_element"):
            header = next((c for c in node.named_children if c.type.endswith("key")), None)
            if header is None:
                return
            parts = self._parts(header)
            path: Path = tuple(name for name, _ in parts)
            for end, (_, part) in enumerate(parts, 1):
                self._note(self.keys, path[:end], part)
            if node.type == "table_array_element":
                number = self._arrays.get(path, 0)
                self._arrays[path] = number + 1
                path = (*path, number)
                self._note(self.keys, path, node)
            for pair in node.named_children:
                if pair.type == "pair":
                    self._pair(pair, path)

    def _pair(self, node: Node, within: Path) -> None:
        written = _written(node.named_children)  # `a = 1  # why`
        key, value = written[0], written[-1]
        parts = self._parts(key)
        name = tuple(part for part, _ in parts)
        for end, (_, part) in enumerate(parts, 1):  # `a.b.c = 1` writes the tables a and a.b too
            self._note(self.keys, (*within, *name[:end]), part)
        self._value((*within, *name), value)

    def _value(self, path: Path, node: Node) -> None:
        self._note(self.values, path, node, written=True)
        if node.type == "inline_table":
            for pair in node.named_children:
                if pair.type == "pair":
                    self._pair(pair, path)
        elif node.type == "array":
            for number, element in enumerate(_written(node.named_children)):
                self._note(self.keys, (*path, number), element)
                self._value((*path, number), element)

    def _parts(self, key: Node) -> list[tuple[str, Node]]:
        """A key's parts with their nodes: a dotted key's each, a quoted one as TOML reads it."""
        if key.type == "dotted_key":
            return [part for child in key.named_children for part in self._parts(child)]
        text = self._text(key)
        if key.type == "quoted_key":
            try:
                text = next(iter(tomllib.loads(f"{text} = 0")))
            except tomllib.TOMLDecodeError:
                pass
        return [(text, key)]


class JsonPlaces(Places):
    """A JSON document's places (comments allowed, as tree-sitter's grammar reads them)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        for node in _written(_parser("json").parse(self.data).root_node.named_children)[:1]:
            self._value((), node)

    def _value(self, path: Path, node: Node) -> None:
        self._note(self.values, path, node, written=True)
        if node.type == "object":
            for pair in _written(node.named_children):
                if pair.type == "pair" and len(pair.named_children) >= 2:
                    key, value = _written(pair.named_children)[0], _written(pair.named_children)[-1]
                    try:
                        name = json.loads(self._text(key))
                    except ValueError:
                        continue
                    self._note(self.keys, (*path, name), key)
                    self._value((*path, name), value)
        elif node.type == "array":
            for number, element in enumerate(_written(node.named_children)):
                self._note(self.keys, (*path, number), element)
                self._value((*path, number), element)


def _written(nodes: Iterable[Node]) -> list[Node]:
    """The nodes that are not comments."""
    return [node for node in nodes if node.type != "comment"]


@lru_cache(maxsize=8)
def in_toml(text: str) -> Places:
    """The places of a TOML document's keys (cached: a file's problems are located one by one)."""
    return TomlPlaces(text)


def in_json(text: str) -> Places:
    """The places of a JSON document's keys."""
    return JsonPlaces(text)


@lru_cache(maxsize=2)
def _parser(grammar: str) -> Parser:
    if grammar == "json":
        import tree_sitter_json as language
    else:
        import tree_sitter_toml as language  # type: ignore[no-redef]
    return Parser(Language(language.language()))
