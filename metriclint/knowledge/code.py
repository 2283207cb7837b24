"""The code knowledge base: calls and expressions whose result has known facets.

The knowledge is data (`rules/code/*.yaml`, each entry with its source reference); this module
loads and validates it, and answers one question for the Python source: what does this call
or this arithmetic step compute?
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from metriclint.base import marked_yaml
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, Reader
from metriclint.knowledge.vocabulary import Facet, load_builtin
from metriclint.model import ConfigError, Problem

ENTRY_KEYS = ("call", "method", "expression", "says", "facts", "norm_type", "arguments", "element", "of")
FILE_KEYS = ("results", "norm_types", "default_norm", "conversions", "kept_by_arithmetic")


@dataclass(frozen=True, slots=True)
class Known:
    """One entry: what `pattern` computes. For a method, `pattern` is the bare method name."""

    pattern: str
    method: bool
    says: str
    facts: tuple[tuple[str, str], ...]
    norm_keyword: str = ""
    norm_positions: tuple[int, ...] = ()
    arguments: int | None = None  # a method must be called with exactly this many arguments
    element: int | None = None  # the facts hold for this element of the returned tuple
    of: int | None = None  # ... when the tuple is unpacked into this many names


@dataclass(frozen=True)
class Knowledge:
    chains: dict[str, Known]  # `torch.nn.utils.clip_grad_norm_()`, `psutil.virtual_memory().used`
    methods: dict[str, Known]
    prefixes: frozenset[str]  # chain prefixes worth following through a local name
    norm_types: dict[str, str]  # argument as written (no white space) -> norm
    default_norm: str
    conversions: dict[tuple[str, str, str], str]  # (unit, operator, divisor as written) -> unit
    kept_by_arithmetic: frozenset[str]


@lru_cache(maxsize=1)
def knowledge() -> Knowledge:
    facets, _, _ = load_builtin()
    return load(sorted((rules_dir() / "code").glob("*.yaml")), facets)


def load(paths: list[Path], facets: dict[str, Facet]) -> Knowledge:
    """Read every knowledge file; any problem in any of them is reported at once."""
    problems: list[Problem] = []
    entries: list[Known] = []
    norm_types: dict[str, str] = {}
    default_norm = ""
    conversions: dict[tuple[str, str, str], str] = {}
    kept: set[str] = set()
    for path in paths:
        root, load_problems = marked_yaml.load(read_text(path), str(path))
        problems += load_problems
        reader = Reader(str(path))
        top = reader.mapping(root, "a code knowledge file", FILE_KEYS) if root is not None else {}
        for node in _items(reader, top, "results"):
            entry = _entry(reader, node, facets)
            if entry is not None:
                entries.append(entry)
        if "norm_types" in top:
            for norm, (key_node, node) in reader.mapping(top["norm_types"][1], "'norm_types'").items():
                _known_value(reader, key_node, facets, "norm", norm)
                norm_types.update({_compact(text): norm for _, text in reader.texts(node, f"the spellings of '{norm}'")})
        if "default_norm" in top:
            default_norm = reader.text(top["default_norm"][1], "'default_norm'") or ""
            _known_value(reader, top["default_norm"][1], facets, "norm", default_norm)
        for node in _items(reader, top, "conversions"):
            fields = reader.mapping(node, "a conversion", ("unit", "op", "by", "gives"))
            unit, op, gives = (reader.text(fields[k][1], f"'{k}'") if k in fields else None for k in ("unit", "op", "gives"))
            if unit is None or op is None or gives is None or "by" not in fields:
                reader.error(node, "a conversion needs 'unit', 'op', 'by' and 'gives'")
                continue
            for value_node, value in ((node, unit), (node, gives)):
                _known_value(reader, value_node, facets, "unit", value)
            for _, by in reader.texts(fields["by"][1], "'by'"):
                conversions[(unit, op, _compact(by))] = gives
        if "kept_by_arithmetic" in top:
            kept.update(v for _, v in reader.texts(top["kept_by_arithmetic"][1], "'kept_by_arithmetic'"))
        problems += reader.problems
    if problems:
        raise ConfigError(problems)
    chains = {e.pattern: e for e in entries if not e.method}
    prefixes = {chain[: i + 2] for chain in chains for i in range(len(chain) - 2) if chain[i : i + 2] == "()"}
    return Knowledge(
        chains, {e.pattern: e for e in entries if e.method}, frozenset(prefixes), norm_types, default_norm or "l2",
        conversions, frozenset(kept),
    )


def _items(reader: Reader, top: dict[str, tuple[Node, Node]], key: str) -> list[Node]:
    if key not in top:
        return []
    node = top[key][1]
    if node.kind != "sequence":
        reader.error(node, f"'{key}' must be a list, not a {node.kind}")
        return []
    return node.elements


def _entry(reader: Reader, node: Node, facets: dict[str, Facet]) -> Known | None:
    fields = reader.mapping(node, "a knowledge entry", ENTRY_KEYS)
    kinds = [k for k in ("call", "method", "expression") if k in fields]
    if len(kinds) != 1 or "says" not in fields or "facts" not in fields:
        reader.error(node, "an entry needs one of 'call', 'method' or 'expression', and 'says' and 'facts'")
        return None
    pattern = reader.text(fields[kinds[0]][1], f"'{kinds[0]}'")
    says = reader.text(fields["says"][1], "'says'")
    facts = []
    for facet, (facet_node, value_node) in reader.mapping(fields["facts"][1], "'facts'").items():
        value = reader.text(value_node, f"the value of '{facet}'")
        if value is not None and _known_value(reader, facet_node, facets, facet, value):
            facts.append((facet, value))
    keyword = ""
    positions: tuple[int, ...] = ()
    if "norm_type" in fields:
        norm = reader.mapping(fields["norm_type"][1], "'norm_type'", ("keyword", "positions"))
        keyword = (reader.text(norm["keyword"][1], "'keyword'") or "") if "keyword" in norm else ""
        positions = tuple(_whole(reader, n) for n in (norm["positions"][1].elements if "positions" in norm else ()))
    arguments, element, of = (_whole(reader, fields[k][1]) if k in fields else None for k in ("arguments", "element", "of"))
    if pattern is None or says is None:
        return None
    chain = pattern if kinds[0] in ("method", "expression") else pattern + "()"
    return Known(chain, kinds[0] == "method", says, tuple(facts), keyword, positions, arguments=arguments, element=element, of=of)


def _whole(reader: Reader, node: Node) -> int:
    if node.kind != "integer" or not isinstance(node.value, int):
        reader.error(node, f"expected a whole number, not a {node.kind}")
        return -1
    return node.value


def _known_value(reader: Reader, node: Node, facets: dict[str, Facet], facet: str, value: str) -> bool:
    if facet not in facets:
        reader.error(node, f"unknown facet '{facet}'")
        return False
    if value not in facets[facet].values:
        reader.error(node, f"unknown value '{value}' for facet '{facet}'")
        return False
    return True


def _compact(code: str) -> str:
    return "".join(code.split())
