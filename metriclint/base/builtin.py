"""The built-in data files under `rules/`: where they are, and the plain word lists among them.

Word lists (logging function names, PromQL keywords, Markdown header words) share one loader,
so every data file is validated the same way and a broken one is a `file:line:col` error.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from metriclint.base import marked_yaml
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.model import ConfigError

EXAMPLES = "examples"  # a file's examples, which the tests run, are no word list


def rules_dir() -> Path:
    """The built-in rules: packaged beside the code in a wheel, at the repository root otherwise."""
    package = Path(__file__).parent.parent
    packaged = package / "rules"
    return packaged if packaged.is_dir() else package.parent / "rules"


@lru_cache(maxsize=None)
def word_lists(name: str) -> dict[str, tuple[str, ...]]:
    """The lists of text in `rules/<name>`, by key; a nested mapping gives dotted keys
    (`value_preserving.functions`)."""
    path = rules_dir() / name
    root, problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    reader = NodeReader(str(path))
    lists: dict[str, tuple[str, ...]] = {}
    if root is not None:
        _collect(reader, root, "", lists)
    if problems or reader.problems:
        raise ConfigError(problems + reader.problems)
    return lists


def _collect(reader: NodeReader, node: Node, prefix: str, lists: dict[str, tuple[str, ...]]) -> None:
    for key, (_, value) in reader.mapping(node, f"'{prefix.rstrip('.')}'" if prefix else "the file").items():
        if not prefix and key == EXAMPLES:
            continue
        if value.kind == "mapping":
            _collect(reader, value, f"{prefix}{key}.", lists)
        else:
            lists[prefix + key] = tuple(text for _, text in reader.texts(value, f"'{prefix}{key}'"))
