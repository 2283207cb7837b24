"""Facts a value test needs, each with the place that states it.

Firm facts come from `--fact KEY=VALUE` and from the run's own files (a trainer state's
`max_steps`, the model's `config.json`, a W&B run's config, MLflow's params, the config files
in the run's folder). Presumed facts come from the project: an argparse option's or a config
field's default (`add_argument("--clip-grad", default=1.0)`, `max_grad_norm: float = 1.0`),
which the run may have overridden; they explain a verdict but never carry a disproof. A fact
that two firm places give differently is no fact: the places are quoted instead.

The names each fact goes by are data (rules/live.yaml `facts`).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from metriclint.base import marked_yaml
from metriclint.base.builtin import word_lists
from metriclint.base.marked_yaml import Node
from metriclint.base.paths import display
from metriclint.live.points import Fact
from metriclint.model import Problem, Span

TEXT_FACTS = frozenset({"lr_scheduler"})  # the facts that are words, not numbers
_MAX_CONFIG = 4 << 20


@lru_cache(maxsize=1)
def names() -> dict[str, str]:
    """Each name a fact goes by, normalised, to the fact."""
    lists = word_lists("live.yaml")
    return {_normal(name): key.split(".", 1)[1] for key, values in lists.items() if key.startswith("facts.") for name in values}


def known() -> list[str]:
    return sorted(set(names().values()))


def _normal(name: str) -> str:
    return name.replace("-", "_").lower()


def fact_named(name: str) -> str | None:
    """The fact a config key, option or field names, by its last part."""
    return names().get(_normal(name.rsplit(".", 1)[-1].rsplit("/", 1)[-1]))


def value_of(fact: str, raw: object) -> float | str | None:
    """A fact's value as tests use it: a finite number, or for `lr_scheduler` a word."""
    if fact in TEXT_FACTS:
        return raw.strip().lower() if isinstance(raw, str) and raw.strip() else None
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            return None
    if isinstance(raw, (int, float)) and math.isfinite(raw):
        return float(raw)
    return None


@dataclass
class Facts:
    """A run's facts: the usable one of each name, and the names whose places disagree."""

    found: dict[str, list[Fact]] = field(default_factory=dict)

    def add(self, fact: Fact) -> None:
        self.found.setdefault(fact.name, []).append(fact)

    def get(self, name: str) -> Fact | None:
        """The fact, from the strongest places that give it, if they agree."""
        candidates = self.found.get(name, [])
        given = [f for f in candidates if f.span.path == "--fact"]
        strongest = given or [f for f in candidates if f.firm] or candidates
        values = {f.value for f in strongest}
        return strongest[0] if len(values) == 1 else None

    def why_missing(self, name: str) -> str:
        candidates = self.found.get(name, [])
        if not candidates:
            return f"no {name} is known (pass --fact {name}=VALUE)"
        strongest = [f for f in candidates if f.firm] or candidates
        places = "; ".join(f"{f.value} at {f.where}" for f in strongest[:3])
        return f"{name} is given differently: {places} (pass --fact {name}=VALUE)"


def given(pairs: Iterable[str]) -> tuple[list[Fact], list[Problem]]:
    """`--fact KEY=VALUE` options."""
    facts, problems = [], []
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        name = key.strip()
        if not sep or name not in set(names().values()):
            problems.append(Problem("--fact", 0, 0, f"'{pair}' is not KEY=VALUE with a KEY of {', '.join(known())}"))
            continue
        value = value_of(name, raw)
        if value is None:
            problems.append(Problem("--fact", 0, 0, f"'{pair}': {name} takes {'a word' if name in TEXT_FACTS else 'a finite number'}"))
            continue
        facts.append(Fact(name, value, Span("--fact", 0, 0, 0, 0), True, pair))
    return facts, problems


def from_mapping(values: Iterable[tuple[str, object, int]], path: str, firm: bool = True) -> list[Fact]:
    """Facts among (key, value, line) entries of a run's config or parameters."""
    found = []
    for key, raw, line in values:
        name = fact_named(key)
        value = value_of(name, raw) if name is not None else None
        if name is not None and value is not None:
            found.append(Fact(name, value, Span(path, line, 1, line, 1), firm, f"{key}: {raw}"))
    return found


def config_file(path: Path) -> list[Fact]:
    """Facts in a JSON or YAML config (positions kept: marked_yaml reads JSON too). A W&B
    `config.yaml` wraps each value as `{value: ...}`, unwrapped here."""
    try:
        if path.stat().st_size > _MAX_CONFIG:
            return []
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    root, problems = marked_yaml.load(text, display(path))
    if root is None or problems:
        return []
    return from_mapping(_leaves(root, ""), display(path))


def _leaves(node: Node, prefix: str, depth: int = 0) -> Iterable[tuple[str, object, int]]:
    for key, (key_node, value) in node.entries.items():
        name = f"{prefix}{key}"
        if value.kind == "mapping" and depth < 8:
            inner = value.entries
            if set(inner) <= {"value", "desc"} and "value" in inner:  # W&B's wrapping
                wrapped = inner["value"][1]
                if wrapped.kind != "mapping":
                    yield name, wrapped.value, key_node.line
                    continue
            yield from _leaves(value, name + ".", depth + 1)
        elif value.kind not in ("mapping", "sequence"):
            yield name, value.value, key_node.line


def model_card(path: Path) -> list[Fact]:
    """The hyperparameters a Trainer's model card lists (`- learning_rate: 2e-05`), read as
    Markdown list items."""
    from markdown_it import MarkdownIt

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found = []
    tokens = MarkdownIt().parse(text)
    for index, token in enumerate(tokens):
        if token.type == "list_item_open" and index + 2 < len(tokens) and tokens[index + 2].type == "inline" and token.map:
            key, sep, raw = tokens[index + 2].content.partition(":")
            if sep:
                found.append((key.strip(), raw.strip(), token.map[0] + 1))
    return from_mapping(found, display(path))


def argument_defaults(files: Iterable[Path]) -> list[Fact]:
    """Presumed facts: the defaults of argparse options and of annotated class fields named
    for a fact, in the project's Python files (each read only if it holds such a name)."""
    spelled = [name.encode() for name in names()] + [name.replace("_", "-").encode() for name in names()]
    found: list[Fact] = []
    for path in files:
        if path.suffix != ".py":
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if len(data) > _MAX_CONFIG or not any(name in data for name in spelled):
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found += _defaults(tree, display(path))
    return found


def _defaults(tree: ast.AST, path: str) -> list[Fact]:
    entries: list[tuple[str, object, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            options = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            dest = next((k.value.value for k in node.keywords if k.arg == "dest" and isinstance(k.value, ast.Constant)), None)
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            name = dest or next((o.lstrip("-") for o in options if o.startswith("--")), None)
            if isinstance(name, str) and isinstance(default, ast.Constant):
                entries.append((name.replace("-", "_"), default.value, node.lineno))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Call) and _called(value) == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)  # type: ignore[assignment]
            if isinstance(value, ast.Constant):
                entries.append((node.target.id, value.value, node.lineno))
    return from_mapping(entries, path, firm=False)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
