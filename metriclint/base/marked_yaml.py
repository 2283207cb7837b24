"""YAML with positions, for inputs whose every error must be reported as file:line:col.

`yaml.safe_load` forgets where values came from, keeps the last of two duplicated keys and
expands aliases without limit. Composing nodes ourselves keeps the marks, sees duplicates and
bounds alias expansion (a "billion laughs" file stops after `MAX_NODES` values reached again
through aliases). PyYAML's
composer and our conversion recurse once per level, so both stop at `MAX_DEPTH` levels, with
the place, before Python's recursion limit would end the run: a recursive alias (`a: &a [*a]`)
is infinitely deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import yaml

from metriclint.model import Problem

MAX_NODES = 200_000
MAX_DEPTH = 100  # a registry needs five levels; PyYAML's composer takes three frames for each

Value = Union[str, int, float, bool, None, list["Node"], dict[str, tuple["Node", "Node"]]]

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str": "string",
    "tag:yaml.org,2002:int": "integer",
    "tag:yaml.org,2002:float": "number",
    "tag:yaml.org,2002:bool": "boolean",
    "tag:yaml.org,2002:null": "null",
}


_SHOWN = 60  # characters of a value a message quotes


@dataclass(frozen=True, kw_only=True, slots=True)
class Node:
    """A YAML value with its position. Mappings hold `{key: (key_node, value_node)}`."""

    value: Value
    kind: str  # string | integer | number | boolean | null | mapping | sequence
    line: int
    column: int
    style: str | None = None  # a scalar's quoting: None (plain), "'", '"', "|" or ">"
    # The file's text and where the value is written in it (characters), for messages.
    source: str = field(default="", repr=False, compare=False)
    start: int = field(default=0, compare=False)
    end: int = field(default=0, compare=False)

    @property
    def written(self) -> str:
        """The value as the file writes it, on one line and cut short, for a message; its kind
        for a value no file writes."""
        shown = " ".join(self.source[self.start : self.end].split())
        if not shown:
            return f"a {self.kind}"
        return shown if len(shown) <= _SHOWN else shown[: _SHOWN - 3] + "..."

    @property
    def entries(self) -> dict[str, tuple[Node, Node]]:
        """A mapping's `{key: (key_node, value_node)}`; empty for any other kind."""
        return self.value if isinstance(self.value, dict) else {}

    @property
    def elements(self) -> list[Node]:
        """A sequence's items; empty for any other kind."""
        return self.value if isinstance(self.value, list) else []


class _Budget:
    """Values visited again through an alias. The first visit of each is not counted: the file
    holds it, and the file's size is bounded; counting those made a registry of 40,000 metrics
    "too large" (issue 19)."""

    def __init__(self) -> None:
        self.left = MAX_NODES
        self.seen: set[int] = set()

    def spend(self, node: yaml.Node) -> None:
        if id(node) not in self.seen:
            self.seen.add(id(node))
            return
        self.left -= 1
        if self.left < 0:
            raise _TooLarge


class _TooLarge(Exception):
    pass


class _TooDeep(Exception):
    def __init__(self, node: yaml.Node, recursive: bool) -> None:
        super().__init__()
        self.node, self.recursive = node, recursive


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing to compose more than `MAX_DEPTH` nested collections."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= MAX_DEPTH and self.check_event(yaml.CollectionStartEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


# libyaml's composer, where PyYAML was built with it: the same nodes and marks, several times
# faster. It composes in C, past `_BoundedLoader.compose_node`, recursing once per level, so
# it reads metriclint's own data files as they are, and a user's file (registry, tooltip
# table) only once libyaml's parser, which keeps its own stack, has found no nesting deeper
# than `MAX_DEPTH`. A file it cannot read is read again by `_BoundedLoader`, whose messages
# are the ones metriclint reports, whichever PyYAML build is installed.
_FAST_LOADER: type[yaml.CSafeLoader] | None = getattr(yaml, "CSafeLoader", None)


def _composed(text: str, shipped: bool) -> yaml.Node | None:
    if _FAST_LOADER is not None and (shipped or _shallow(text, _FAST_LOADER)):
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            if shipped:
                raise
    return yaml.compose(text, Loader=_BoundedLoader)


def _shallow(text: str, loader: type[yaml.CSafeLoader]) -> bool:
    """Whether libyaml parses `text` with no collection nested deeper than `MAX_DEPTH`."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return False
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return False
    return True


def load(text: str, path: str, shipped: bool = False) -> tuple[Node | None, list[Problem]]:
    """Parse `text`; return the root node (None for an empty file) and every problem found.
    `shipped`: the text is one of metriclint's own data files under `rules/`."""
    try:
        root = _composed(text, shipped)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        return None, [Problem(path, line, column, f"invalid YAML: {error.problem or error}")]
    except yaml.YAMLError as error:
        return None, [Problem(path, 1, 1, f"invalid YAML: {error}")]
    if root is None:
        return None, []
    problems: list[Problem] = []
    try:
        return _convert(root, text, path, problems, _Budget(), ()), problems
    except _TooLarge:
        message = f"YAML aliases expand to more than {MAX_NODES} values; write the data out"
        return None, [Problem(path, root.start_mark.line + 1, root.start_mark.column + 1, message)]
    except _TooDeep as error:
        mark = error.node.start_mark
        if error.recursive:
            message = "this value contains itself through an alias (a recursive alias); write the data out"
        else:
            message = f"aliases nest values deeper than {MAX_DEPTH} levels; write the data out"
        return None, [Problem(path, mark.line + 1, mark.column + 1, message)]


def _convert(node: yaml.Node, text: str, path: str, problems: list[Problem], budget: _Budget, within: tuple[yaml.Node, ...]) -> Node:
    """`node` as a `Node`; `within` are the collections it is inside, outermost first, so
    that aliases nesting past `MAX_DEPTH` (or into themselves) are caught with their place."""
    budget.spend(node)
    line, column = node.start_mark.line + 1, node.start_mark.column + 1
    start, end = node.start_mark.index, node.end_mark.index
    if isinstance(node, yaml.CollectionNode):
        if len(within) >= MAX_DEPTH:
            again = next((n for n in within if any(m is n for m in within[within.index(n) + 1 :])), None)
            raise _TooDeep(again or node, again is not None)
        within += (node,)
    if isinstance(node, yaml.MappingNode):
        items: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            key = _convert(key_node, text, path, problems, budget, within)
            value = _convert(value_node, text, path, problems, budget, within)
            if not isinstance(key.value, str):
                problems.append(Problem(path, key.line, key.column, f"keys must be text, not {key.written}; quote it"))
            elif key.value in items:
                first = items[key.value][0]
                problems.append(Problem(path, key.line, key.column, f"duplicate key '{key.value}' (first at line {first.line})"))
            else:
                items[key.value] = (key, value)
        return Node(value=items, kind="mapping", line=line, column=column, style=None, source=text, start=start, end=end)
    if isinstance(node, yaml.SequenceNode):
        return Node(
            value=[_convert(item, text, path, problems, budget, within) for item in node.value],
            kind="sequence",
            line=line,
            column=column,
            style=None,
            source=text,
            start=start,
            end=end,
        )
    kind = _SCALAR_TAGS.get(node.tag, "string")
    style = (node.style or None) if isinstance(node, yaml.ScalarNode) else None  # libyaml says "" for plain
    return Node(value=_scalar(node.value, kind), kind=kind, line=line, column=column, style=style, source=text, start=start, end=end)


def _scalar(text: str, kind: str) -> Value:
    if kind == "integer":
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return text
    if kind == "number":
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return text
    if kind == "boolean":
        return text.lower() in {"true", "yes", "on", "y"}
    if kind == "null":
        return None
    return text


class NodeReader:
    """Typed access to nodes that records a problem (instead of raising) on a wrong type.

    Validation code then reads top to bottom and still reports every problem in one pass.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []

    def error(self, node: Node, message: str) -> None:
        self.problems.append(Problem(self.path, node.line, node.column, message))

    def mapping(self, node: Node, what: str, allowed: tuple[str, ...] | None = None) -> dict[str, tuple[Node, Node]]:
        if node.kind != "mapping":
            self.error(node, f"{what} must be a mapping, not {node.written}")
            return {}
        items = node.entries
        if allowed is not None:
            for key, (key_node, _) in items.items():
                if key not in allowed:
                    self.error(key_node, f"unknown key '{key}' in {what}; expected one of: {', '.join(allowed)}")
        return items

    def text(self, node: Node, what: str) -> str | None:
        if node.kind != "string":
            hint = "; quote it" if node.kind in {"boolean", "integer", "number", "null"} else ""
            self.error(node, f"{what} must be text, not {node.written}{hint}")
            return None
        return node.value if isinstance(node.value, str) else None

    def sequence(self, node: Node, what: str) -> list[Node]:
        if node.kind != "sequence":
            self.error(node, f"{what} must be a list, not {node.written}")
        return node.elements

    def texts(self, node: Node, what: str) -> list[tuple[Node, str]]:
        if node.kind != "sequence":
            self.error(node, f"{what} must be a list of text, not {node.written}")
            return []
        return [(item, value) for item in node.elements if (value := self.text(item, f"each of {what}")) is not None]
