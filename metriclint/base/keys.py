"""Metric keys and key templates.

A key such as `train/grad_norm` may be written as a template, `train/{role_tag}grad_norm`
(an f-string in code, a `{name}` placeholder in the registry). A placeholder stands for any
text within one path segment, so that template covers `train/grad_norm` and
`train/critic-grad_norm`.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
# Combinations of a built key's parts listed before a part is left as a placeholder: the
# Python source (sources/python/strings.py) and the calls that fill templates (evidence/) alike.
MAX_VALUES = 16


def is_template(key: str) -> bool:
    return _PLACEHOLDER.search(key) is not None


@lru_cache(maxsize=4096)
def _regex(key: str, across_sections: bool) -> re.Pattern[str]:
    parts = _PLACEHOLDER.split(key)
    filler = "(?:[^/]*|/)" if across_sections else "[^/]*"
    return re.compile(filler.join(re.escape(part) for part in parts))


def covers(template: str, key: str, across_sections: bool = False) -> bool:
    """Whether the concrete `key` is one of the keys `template` stands for: each placeholder
    text within a section, or with `across_sections` also the "/" that joins two, as a comment
    may write a key (`node{sep}flops` for `node/flops`)."""
    return _regex(template, across_sections).fullmatch(key) is not None


def same_metric(a: str, b: str) -> bool:
    """Whether two keys, either of them possibly a template, can name the same logged series."""
    if a == b or shape(a) == shape(b):
        return True
    a_template, b_template = is_template(a), is_template(b)
    # A plain key covers only itself, already ruled out: no pattern is compiled for it (a
    # run asks this of every logged key, and there may be tens of thousands).
    return (a_template and not b_template and covers(a, b)) or (b_template and not a_template and covers(b, a))


_PRINTED = " (printed at "


def printed(name: str, path: str, line: int) -> str:
    """What a value that is only printed is checked as, in place of a key: `took (printed at
    train.py:12)`, one for each place it is printed. No logged key has this shape."""
    return f"{name}{_PRINTED}{path}:{line})"


def is_printed(key: str) -> bool:
    return key.endswith(")") and _PRINTED in key


# A str method that rewrites a key's text, with its literal arguments: `("replace", (" ", "_"))`
# for `k.replace(" ", "_")` (sources/python/strings.py `rewrites`).
Rewrite = tuple[str, tuple[str, ...]]
# The str methods a key is rewritten with, by how many string arguments each takes (Python
# docs, "String Methods"): each makes a text of a text, whatever it holds.
REWRITE_ARGUMENTS: Mapping[str, tuple[int, ...]] = {
    "replace": (2,),
    "lower": (0,),
    "upper": (0,),
    "strip": (0, 1),
    "lstrip": (0, 1),
    "rstrip": (0, 1),
    "removeprefix": (1,),
    "removesuffix": (1,),
}
# the rewrites that act on each character alike, so on each written part of a template too
_PER_CHARACTER = frozenset({"replace", "lower", "upper"})


def rewritten(key: str, rewrites: Sequence[Rewrite]) -> str:
    """`key` as the str methods `rewrites` make it, in order: the whole text of a plain key;
    of a template, only its written parts, by a method that acts on each character alike (its
    placeholders stand for texts rewritten so where they are filled). Another method leaves a
    template as it is."""
    for method, arguments in rewrites:
        if len(arguments) not in REWRITE_ARGUMENTS.get(method, ()):
            continue  # none the walk writes: a cache entry is data, never a name to call blindly
        if not is_template(key):
            key = getattr(str, method)(key, *arguments)
        elif method in _PER_CHARACTER:
            pieces = _PLACEHOLDER.split(key)
            marks = _PLACEHOLDER.findall(key)
            written = [getattr(str, method)(piece, *arguments) for piece in pieces]
            key = "".join(itertools.chain.from_iterable(itertools.zip_longest(written, marks, fillvalue="")))
    return key


def rekey(pattern: str, key: str, kept: str = "") -> str:
    """`key` written into `pattern` in place of "{}" (`train/{}`). `kept`: the prefix a re-keying
    adds only to a key that lacks it (`f"{p}{k}" if not k.startswith(p) else k`); a key that
    starts with it, where it is known, does not get it again."""
    if kept and "{" not in kept and key.startswith(kept):
        pattern = pattern.replace(kept + "{}", "{}", 1)
    return pattern.replace("{}", key)


def filled(template: str, given: Mapping[str, tuple[str, ...]]) -> list[str]:
    """`template` once per choice of a text for each placeholder `given` names (`fill`)."""
    made = []
    for combination in itertools.product(*given.values()):
        key = template
        for name, text in zip(given, combination):
            key = fill(key, name, text)
        made.append(key)
    return made


def fill(template: str, name: str, text: str) -> str:
    """`template` with the placeholder `{name}` filled by `text` (`emptied` when it is empty)."""
    return template.replace(f"{{{name}}}", text) if text else emptied(template, name)


def emptied(template: str, name: str) -> str:
    """`template` with the placeholder `{name}` filled by an empty string, the separator after it
    gone with it where it opens the key or a segment (`{section}/loss` is `loss`, not `/loss`):
    what code that adds a section only when it has one (`f"{p}/{k}" if p else k`) logs without."""
    return re.sub(r"(^|(?<=[/._-]))\{" + re.escape(name) + r"\}[/._-]?|\{" + re.escape(name) + r"\}", "", template)


def last_segment(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def literal(key: str) -> str:
    """The key with its placeholders left empty: `{tag}grad_norm` -> `grad_norm`."""
    return _PLACEHOLDER.sub("", key)


def prose_name(key: str) -> str | None:
    """The bare identifier that stands for `key` in prose, or None if no identifier pins it.

    That is the key's last segment with its placeholders left empty (`train/{tag}grad_norm` ->
    `grad_norm`, the key the code logs when `tag` is empty), for a key with a section. A bare
    identifier never fills a placeholder: `rollout/{status}_count` leaves `_count`, which no
    identifier is, so it does not claim `token_count`. A bare key (`data_parallel_size`) is a
    variable's name as much as a metric's, so it has none.
    """
    if "/" not in key:
        return None
    name = literal(last_segment(key))
    return name if name and name == name.strip("_-. ") else None


def fixed_length(key: str) -> int:
    """How much of `key` is fixed text: of two templates that cover a key, the longer pins it."""
    return len(literal(key))


def placeholders(key: str) -> list[str]:
    return _PLACEHOLDER.findall(key)


def broad(key: str) -> bool:
    """A template whose first or last segment starts with a placeholder (`rollout/{status}_count`,
    `{module}/output{i}`): it fits keys that may be other metrics. A placeholder segment between
    fixed ones (`train/{role}/entropy`) is one metric per role."""
    segments = key.split("/")
    return is_template(key) and (segments[0].startswith("{") or segments[-1].startswith("{"))


def registrable(key: str) -> bool:
    """Whether a registry can hold `key`: not empty, no white space at either end, and no white
    space inside but spaces (TensorBoard tags such as `lm loss vs samples` have them)."""
    return bool(key) and key == key.strip() and not any(char.isspace() and char != " " for char in key)


def too_generic(key: str) -> bool:
    """A template whose last segment is only placeholders (`train/{key}`) names no one metric."""
    return not literal(last_segment(key)).strip("_-. ")


def looks_like_key(text: str) -> bool:
    """A string shaped like a logged metric key: `section/name`, no spaces, not a URL, a file or
    a markup tag (`</img>`, a tokenizer's special token)."""
    if "/" not in text or " " in text or ":" in text or text.startswith("/") or text.endswith("/") or len(text) >= 200:
        return False
    if text.startswith("<") and text.endswith(">"):
        return False
    _, dot, extension = last_segment(text).rpartition(".")
    return not (dot and extension[:1].isalpha())  # `scripts/run.py`, `rank0/embed.weight`


def shape(key: str) -> str:
    """The key with each placeholder written `{}`: templates of one shape name the same series."""
    return _PLACEHOLDER.sub("{}", key)


class KeySet:
    """Keys and templates, indexed so that asking which of them can name the same series as a
    key (`same_metric`) looks only at the few that could: a placeholder matches within one
    segment, so a template covers only keys with as many segments and, when its first segment
    is fixed text, the same first segment. Asking every member instead made a run with a
    registry of 10,000 metrics take a minute (issue 19)."""

    def __init__(self, members: Iterable[str]) -> None:
        self._order = {key: i for i, key in enumerate(dict.fromkeys(members))}
        self._shapes: dict[str, list[str]] = defaultdict(list)
        self._plain: dict[int, dict[str | None, list[str]]] = defaultdict(lambda: defaultdict(list))
        self._templates: dict[tuple[int, str | None], list[str]] = defaultdict(list)
        for key in self._order:
            self._shapes[shape(key)].append(key)
            count, first = _bucket(key)
            if is_template(key):
                self._templates[(count, first)].append(key)
            else:
                self._plain[count][first].append(key)

    def same_metric(self, key: str) -> list[str]:
        """The members that can name the same series as `key`, in the order they were given."""
        found = dict.fromkeys(self._shapes.get(shape(key), ()))
        count, first = _bucket(key)
        if is_template(key):
            plain = self._plain.get(count, {})
            pools = [plain.get(first, [])] if first is not None else list(plain.values())
            found.update((p, None) for pool in pools for p in pool if covers(key, p))
        else:
            for template in (*self._templates.get((count, first), ()), *self._templates.get((count, None), ())):
                if covers(template, key):
                    found[template] = None
        return sorted(found, key=self._order.__getitem__)


def _bucket(key: str) -> tuple[int, str | None]:
    """How many segments `key` has, and its first segment (None where a placeholder is in it)."""
    segments = shape(key).split("/")
    return len(segments), None if "{}" in segments[0] else segments[0]


def prometheus_name(prefix: str, name: str, unit: str) -> str | None:
    """The name prometheus_client exposes a metric under: the namespace's and subsystem's
    `prefix`, the name, then `_unit` unless the name already ends in it; None for a name it
    refuses (the call raises, so no metric has it)."""
    full = prefix + name
    full = full if not unit or full.endswith(f"_{unit}") else f"{full}_{unit}"
    return full if prometheus_shaped(full) else None


def prometheus_shaped(name: str) -> bool:
    """Whether `name` can be a Prometheus metric's name: ASCII letters, digits, `_` and `:`, not
    starting with a digit."""
    return name.isascii() and name.replace(":", "_").isidentifier()
