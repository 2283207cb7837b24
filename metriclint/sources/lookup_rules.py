"""What the code that reads a tooltip table may do, per language (`rules/tooltips.yaml: lookup`),
and what it did to the key: shared by the JavaScript reader (sources/js_lookup.py) and the
Python one (sources/python/lookup.py), which differ only in the syntax they walk."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from metriclint.base.builtin import word_lists

_MODES = ("substring", "prefix", "suffix", "regex", "glob")


@dataclass(frozen=True, slots=True)
class LookupRules:
    tests: dict[str, str]  # method or dotted function -> the match mode its test means
    first: frozenset[str]  # methods that return the first element a callback accepts
    exact: frozenset[str]  # methods that read one entry by its key
    lower: frozenset[str]  # methods that return the receiver lower-cased
    pairs: frozenset[str]  # calls that yield (pattern, text) pairs
    patterns: frozenset[str]  # calls that yield the patterns


@lru_cache(maxsize=None)
def lookup_rules(language: str) -> LookupRules:
    """The rules for `language`: `javascript` or `python`."""
    lists = word_lists("tooltips.yaml")

    def words(name: str) -> frozenset[str]:
        return frozenset(lists.get(f"lookup.{language}.{name}", ()))

    tests = {name: mode for mode in _MODES for name in words(mode)}
    return LookupRules(tests, words("first"), words("exact"), words("lower"), words("pairs"), words("patterns"))


@dataclass(frozen=True, slots=True)
class Key:
    """What the code did to the function's key before testing it."""

    strip_prefix: bool = False
    lower: bool = False
    how: tuple[str, ...] = ()
