"""JSON: Grafana dashboards (recognised by their shape) and maps from metric keys to texts.

A Grafana panel's hover texts are its `description` and `fieldConfig.defaults.description`;
the metric it shows comes from its targets (`expr` PromQL names, else `target`), failing those
its title. A panel that shows several metrics is skipped: its text describes their
combination, and reading it as a claim about each one would invent contradictions.

Any other object or array with a table shape is offered under its JSON pointer, for a
configuration to select or for auto-detection to take.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Iterator

from tree_sitter import Language, Node, Parser

from metriclint.model import Mention, Span, TooltipEntry, TooltipTable
from metriclint.sources import DEFAULT_OPTIONS, Extraction, Extractor, Options, pointer_token, utf8
from metriclint.sources.promql import metric_names
from metriclint.sources.tree_tables import TreeFile, table, table_rules


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_json

    return Parser(Language(tree_sitter_json.language()))


def encoding(data: bytes) -> str:
    """Positions skip a byte-order mark on the first line (tree_tables.Source.position)."""
    return utf8(data)


def extractor(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor:
    return extract


def extract(path: str, data: bytes) -> Extraction:
    if not _may_hold_table(data):
        return Extraction()
    source = TreeFile(path, data, _parser().parse(data), "JSON")
    source.check()
    values = [c for c in source.tree.root_node.named_children if c.type != "comment"]
    if not values:
        return Extraction(suppressions=source.suppressions())
    root = values[0]
    dashboard = _dashboard(source, root)
    if dashboard is not None:
        entries = tuple(TooltipEntry(p, t, s, i) for i, (p, t, s) in enumerate(_panel_rows(source, dashboard)))
        tables = (TooltipTable(path, "grafana", "panels", entries, shape=True),) if entries else ()
        return Extraction(tables=tables, suppressions=source.suppressions())
    return Extraction(tables=tuple(_tables(source, root, "")), suppressions=source.suppressions())


_NESTING = frozenset({dict, list})  # what json.loads makes of an object and an array (no subclass)


def _may_hold_table(data: bytes) -> bool:
    """False only for valid JSON with no dashboard and no value of a table's shape (as
    `tree_tables.table` reads them). Python's C parser answers that five times faster than
    tree-sitter can parse, and most JSON in a repository is data: Megatron-LM's 943 files of
    golden values took a fifth of a run. JSON it rejects (comments, trailing commas, too deep)
    is parsed in full, and reported if tree-sitter rejects it too."""
    try:
        root = json.loads(data)
    except (ValueError, RecursionError):
        return True
    if isinstance(root, dict) and {"dashboard", "panels", "rows"} & root.keys():
        return True
    text_fields = table_rules().text_fields
    pending = [root]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            items = list(value.values())
            if items and all(
                isinstance(v, str) or (isinstance(v, dict) and any(isinstance(v.get(f), str) for f in text_fields)) for v in items
            ):
                return True
        elif isinstance(value, list):
            items = value
            if items and all(isinstance(i, list) and len(i) == 2 and isinstance(i[1], str) for i in items):
                return True
        else:
            continue
        if not _NESTING.isdisjoint(map(type, items)):  # most values of data are numbers: their types are taken at C speed
            pending += [v for v in items if isinstance(v, (dict, list))]
    return False


def _fields(source: TreeFile, node: Node | None) -> dict[str, Node]:
    if node is None or node.type != "object":
        return {}
    fields = {}
    for pair in node.named_children:
        key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
        name = source.key(key) if pair.type == "pair" else None
        if name is not None and value is not None:
            fields[name] = value
    return fields


def _objects(node: Node | None) -> list[Node]:
    return [c for c in node.named_children if c.type == "object"] if node is not None and node.type == "array" else []


def _dashboard(source: TreeFile, root: Node) -> Node | None:
    """The dashboard object (top level, or under "dashboard" as the HTTP API returns it)."""
    fields = _fields(source, root)
    if "dashboard" in fields:
        return _dashboard(source, fields["dashboard"])
    panels = _objects(fields.get("panels")) + [
        p for row in _objects(fields.get("rows")) for p in _objects(_fields(source, row).get("panels"))
    ]
    shaped = any({"gridPos", "targets", "type"} & _fields(source, p).keys() for p in panels)
    return root if panels and shaped and ("schemaVersion" in fields or "title" in fields) else None


def _panels(source: TreeFile, dashboard: Node) -> Iterator[Node]:
    """Every panel, rows' and nested panels included, in the order the file lists them."""
    fields = _fields(source, dashboard)
    for container in (fields.get("panels"), *(_fields(source, row).get("panels") for row in _objects(fields.get("rows")))):
        for panel in _objects(container):
            yield panel
            yield from _panels(source, panel)


def _panel_rows(source: TreeFile, dashboard: Node) -> Iterator[tuple[str, Mention, Span]]:
    rules = table_rules()
    for panel in _panels(source, dashboard):
        fields = _fields(source, panel)
        defaults = _fields(source, _fields(source, fields.get("fieldConfig")).get("defaults"))
        texts = [m for m in (source.string(fields.get("description")), source.string(defaults.get("description"))) if m and m.text.strip()]
        if not texts:
            continue
        shown: dict[str, Span] = {}
        for target in _objects(fields.get("targets")):
            target_fields = _fields(source, target)
            expr, graphite = source.string(target_fields.get("expr")), source.string(target_fields.get("target"))
            if expr is not None:
                for name in metric_names(expr.text, rules.promql_keywords):
                    shown.setdefault(_base_name(name, rules.series_suffixes), source.span(target_fields["expr"]))
            elif graphite is not None and graphite.text.strip():
                shown.setdefault(graphite.text.strip(), source.span(target_fields["target"]))
        title = source.string(fields.get("title"))
        if not shown and title is not None and title.text.strip():
            shown[title.text.strip()] = source.span(fields["title"])
        if len(shown) == 1:
            ((name, span),) = shown.items()
            for text in texts:
                yield name, text, span


def _base_name(series: str, suffixes: tuple[str, ...]) -> str:
    """The metric a series belongs to: `x_bucket` -> `x` (rules/tooltips.yaml)."""
    for suffix in suffixes:
        if series.endswith(suffix) and len(series) > len(suffix):
            return series[: -len(suffix)]
    return series


def _tables(source: TreeFile, node: Node, pointer: str) -> Iterator[TooltipTable]:
    found = table(source, node, "json", pointer)
    if found is not None:
        yield found
        return
    if node.type == "object":
        for pair in node.named_children:
            value = pair.child_by_field_name("value") if pair.type == "pair" else None
            if value is None or value.type not in _CONTAINERS:
                continue
            name = source.key(pair.child_by_field_name("key"))
            if name is not None:
                yield from _tables(source, value, f"{pointer}/{pointer_token(name)}")
    elif node.type == "array":
        for i, item in enumerate(c for c in node.named_children if c.type != "comment"):
            if item.type in _CONTAINERS:
                yield from _tables(source, item, f"{pointer}/{i}")


_CONTAINERS = ("object", "array")  # a number or a string holds no table: its key is not even decoded
