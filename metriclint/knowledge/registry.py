"""The semantics registry: what each metric is, written once, in `metrics.yaml`.

Loading validates everything and reports every problem with its position at once; a registry
that loads is one the checks can trust.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from metriclint.base import keys, marked_yaml
from metriclint.base.files import MAX_BYTES, read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.code_knowledge import declared
from metriclint.knowledge.vocabulary import Facet, merge, phrase_conflicts, read_facet
from metriclint.model import ConfigError, Mention, Problem, SourceKind, Span

TOP_KEYS = ("version", "facets", "metrics", "code")
METRIC_KEYS = ("aliases", "description", "semantics")


@dataclass(frozen=True, slots=True)
class Setting:
    """One `facet: value` line of a metric's semantics, kept with its position for evidence."""

    value: str
    span: Span
    text: str  # the line as a reader would quote it: "clipping: before"


@dataclass(frozen=True, slots=True)
class MetricEntry:
    key: str
    span: Span
    aliases: tuple[str, ...]
    description: Mention | None
    semantics: dict[str, Setting]


@dataclass(frozen=True, slots=True)
class Registry:
    path: str
    metrics: dict[str, MetricEntry]
    code: tuple[Known, ...] = ()  # what the project's own helpers compute (its `code:` section)

    def setting(self, metric: str, facet: str) -> Setting | None:
        entry = self.metrics.get(metric)
        return entry.semantics.get(facet) if entry else None


def load(path: Path, display: str, builtin: dict[str, Facet], limit: int = MAX_BYTES) -> tuple[Registry, dict[str, Facet]]:
    """Parse and validate a registry; returns it with the facets it can use (built-in + its own).
    `limit` is the project's `max-file-size`."""
    return parse(_text(path, display, "the registry", limit), display, builtin)


def load_code(path: Path, display: str, facets: dict[str, Facet], limit: int = MAX_BYTES) -> tuple[Known, ...]:
    """A code knowledge file the settings name (`code-knowledge`): a registry's `code:` section
    on its own, validated as the registry is, against the facets the registry leaves."""
    root, problems = marked_yaml.load(_text(path, display, "the code knowledge file", limit), display)
    reader = NodeReader(display)
    code: tuple[Known, ...] = ()
    if root is not None:
        code = declared(reader, root, facets, display, "a code knowledge file")
    elif not problems:
        reader.error(Node(value=None, kind="null", line=1, column=1), "the code knowledge file is empty; it needs a 'results' list")
    _valid(problems + reader.problems)
    return code


def _valid(problems: list[Problem]) -> None:
    """Raise every problem at once, in the order of the file."""
    if problems:
        raise ConfigError(sorted(problems, key=lambda p: (p.line, p.column, p.message)))


def _text(path: Path, display: str, what: str, limit: int) -> str:
    try:
        return read_text(path, limit)
    except OSError as error:
        raise ConfigError([Problem(display, 1, 1, f"cannot read {what}: {error.strerror or error}")]) from None
    except UnicodeDecodeError as error:
        raise ConfigError([Problem(display, 1, 1, f"cannot read {what}: {error}")]) from None


def parse(text: str, display: str, builtin: dict[str, Facet]) -> tuple[Registry, dict[str, Facet]]:
    """A registry from its text: an editor's unsaved buffer is read as the file would be."""
    root, problems = marked_yaml.load(text, display)
    reader = NodeReader(display)
    registry, facets = Registry(display, {}), dict(builtin)
    if root is not None:
        registry, facets = _read(reader, root, builtin)
    elif not problems:
        reader.error(Node(value=None, kind="null", line=1, column=1), "the registry is empty; it needs at least 'version: 1'")
    _valid(problems + reader.problems)
    return registry, facets


def _read(reader: NodeReader, root: Node, builtin: dict[str, Facet]) -> tuple[Registry, dict[str, Facet]]:
    top = reader.mapping(root, "the registry", TOP_KEYS)
    if "version" not in top:
        reader.error(root, "missing 'version: 1'")
    elif top["version"][1].value != 1 or top["version"][1].kind != "integer":
        reader.error(top["version"][1], f"unsupported version {top['version'][1].written}; this metriclint reads version 1")
    own = {
        name: read_facet(reader, name, node)
        for name, (_, node) in (reader.mapping(top["facets"][1], "'facets'") if "facets" in top else {}).items()
    }
    facets = merge(builtin, own)
    for phrase, conflict in phrase_conflicts(facets):  # the registry's phrase, where it is written
        reader.error(_text_node(top["facets"][1], phrase) or top["facets"][0] if "facets" in top else root, conflict)
    metrics: dict[str, MetricEntry] = {}
    alias_owner: dict[str, str] = {}
    for key, (key_node, node) in (reader.mapping(top["metrics"][1], "'metrics'") if "metrics" in top else {}).items():
        entry = _read_metric(reader, key, key_node, node, facets)
        for alias, alias_node in zip(entry.aliases, _alias_nodes(node)):
            owner = alias_owner.get(alias) or (alias if alias in metrics and alias != key else None)
            if owner is not None and owner != key:
                reader.error(alias_node, f"alias '{alias}' is already claimed by metric '{owner}'")
            alias_owner.setdefault(alias, key)
        metrics[key] = entry
    for key, entry in metrics.items():
        if key in alias_owner and alias_owner[key] != key:
            reader.error(_node_at(entry.span), f"metric key '{key}' is also an alias of '{alias_owner[key]}'")
    code = declared(reader, top["code"][1], facets, reader.path) if "code" in top else ()
    return Registry(reader.path, metrics, code), facets


def _text_node(node: Node, text: str) -> Node | None:
    """The first string `text` under `node`, depth first."""
    if node.kind == "string" and node.value == text:
        return node
    children = [value for _, value in node.entries.values()] if node.kind == "mapping" else node.elements
    for child in children:
        found = _text_node(child, text)
        if found is not None:
            return found
    return None


def _alias_nodes(node: Node) -> list[Node]:
    if "aliases" not in node.entries:
        return []
    aliases = node.entries["aliases"][1]
    return [n for n in aliases.elements if n.kind == "string"]


def _node_at(span: Span) -> Node:
    return Node(value=None, kind="null", line=span.line, column=span.column)


def _span(reader: NodeReader, node: Node, length: int) -> Span:
    return Span(reader.path, node.line, node.column, node.line, node.column + length)


def _read_metric(reader: NodeReader, key: str, key_node: Node, node: Node, facets: dict[str, Facet]) -> MetricEntry:
    span = _span(reader, key_node, len(key))
    if not keys.registrable(key):
        reader.error(key_node, f"metric key {key!r} has white space at an end, or a tab or line break; write it as the code logs it")
    if node.kind == "null":
        return MetricEntry(key, span, (), None, {})
    items = reader.mapping(node, f"metric '{key}'", METRIC_KEYS)
    aliases = tuple(a for _, a in reader.texts(items["aliases"][1], "'aliases'")) if "aliases" in items else ()
    description = None
    if "description" in items:
        text_node = items["description"][1]
        text = reader.text(text_node, "'description'")
        if text is not None:
            description = _description_mention(reader.path, text_node, text, key)
    semantics: dict[str, Setting] = {}
    if "semantics" in items:
        for facet, (facet_node, value_node) in reader.mapping(items["semantics"][1], "'semantics'").items():
            value = reader.text(value_node, f"the value of '{facet}'")
            if facet not in facets:
                reader.error(facet_node, f"unknown facet '{facet}'; known facets: {', '.join(sorted(facets))}")
            elif value is not None and value not in facets[facet].values:
                valid = ", ".join(facets[facet].values)
                reader.error(value_node, f"unknown value '{value}' for facet '{facet}'; valid values: {valid}")
            elif value is not None:
                setting_span = Span(reader.path, facet_node.line, facet_node.column, value_node.line, value_node.column + len(value))
                semantics[facet] = Setting(value, setting_span, f"{facet}: {value}")
    return MetricEntry(key, span, aliases, description, semantics)


def _description_mention(path: str, node: Node, text: str, key: str) -> Mention:
    """The description as a source of claims; a one-line value maps back to its exact columns.
    A block scalar (`>`, `|`) starts on the line after its indicator, so it is read as one line
    at its start, like a multi-line one (its trailing newline once broke the span)."""
    if "\n" in text.rstrip("\n") or node.style in ("|", ">"):
        return Mention(SourceKind.REGISTRY, path, " ".join(text.split()), ((node.line, node.column),), flows_to=(key,))
    return Mention(SourceKind.REGISTRY, path, text, ((node.line, node.column + _quote_width(node)),), flows_to=(key,))


def _quote_width(node: Node) -> int:
    return 1 if node.style in ("'", '"') else 0
