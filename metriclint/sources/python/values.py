"""Whether a logged value is a measurement, or the run's set-up written down.

`metriclint init` drafts only keys that some code logs a measurement under: a key logged only
with text, a flag, a container, a function, or a field of the run's configuration is a label or
a setting (`"data_parallel_size": args.data_parallel_size`), and a registry entry for it would
make every comment about that variable look like a statement about a metric. The words are
data (`rules/logged_values.yaml`, with examples the tests run).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.base.identifiers import class_like
from metriclint.sources.python.call_names import called_name

_NOT_SCALARS = (
    ast.JoinedStr,
    ast.Dict,
    ast.List,
    ast.Set,
    ast.Tuple,
    ast.DictComp,
    ast.ListComp,
    ast.SetComp,
    ast.GeneratorExp,
    ast.Lambda,
)


@dataclass(frozen=True, slots=True)
class ValueWords:
    configuration: frozenset[str]
    text_functions: frozenset[str]
    configuration_classes: tuple[str, ...]  # endings of settings classes' names
    loaders: frozenset[str]  # calls that return a loaded dataset, model or file


@lru_cache(maxsize=1)
def value_words() -> ValueWords:
    lists = word_lists("logged_values.yaml")
    return ValueWords(
        frozenset(lists["configuration"]),
        frozenset(lists["text_functions"]),
        tuple(lists["configuration_classes"]),
        frozenset(lists["loaders"]),
    )


def stands_alone(key: str, value: ast.expr, top_level: bool = False) -> bool:
    """Whether a key written in a dict literal or `d[k] = v` is logged where it is written, before
    any sink is seen to log the dict: shaped like a metric key (`section/name`), over a value
    that may be a measurement. A hub id over its loading options (`"org/corpus": {"split":
    "train"}`) or a converter (a lambda) is a row of a table, not a value; so is a number
    written out at a module's or class's `top_level` (a dataset's weight in a mixture), where
    no step has run yet to measure it."""
    if top_level and isinstance(value, ast.Constant):
        return False
    return keys.looks_like_key(key) and is_measurement(value)


def is_measurement(value: ast.expr, words: ValueWords | None = None) -> bool:
    """False for text, flags, containers, functions, loaded resources and configuration fields;
    True otherwise, numbers written in the code included (counters start at 0)."""
    words = words or value_words()
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float, complex)) and not isinstance(value.value, bool)
    if isinstance(value, _NOT_SCALARS):
        return False
    if isinstance(value, ast.Call):
        called = called_name(value.func)
        if called in words.text_functions or called in words.loaders or class_like(called) and called.endswith(words.configuration_classes):
            return False
    return not (isinstance(value, ast.Attribute) and _reads_configuration(value.value, words))


def _reads_configuration(node: ast.expr, words: ValueWords) -> bool:
    """Whether an attribute chain's object is, or is read from, a configuration: `args`,
    `self.config`, `get_args()`."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in words.configuration
        if isinstance(node, ast.Attribute):
            if node.attr in words.configuration:
                return True
            node = node.value
        elif isinstance(node, ast.Call):
            return called_name(node.func) in words.configuration
        else:
            return False
