"""Which metric a text is about.

A text speaks for a metric through the logged key its value flows into (strongest), through
the name it documents (a registry alias, a key's last segment), or, for free text, through a
metric it names in the same sentence. A text about something else (a `threshold` parameter)
yields no claim at all: a missed claim costs less than a false contradiction.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Sequence

from metriclint.base import keys
from metriclint.knowledge.registry import Registry
from metriclint.model import Claim, Mention, Reading

_TOKEN = re.compile(r"`([^`\s]+)`|(?<![\w/{}.-])([A-Za-z_{][\w/{}.-]*[\w}])")


class MetricIndex:
    """Every metric known to the run: registry keys and aliases, and the keys the code logs."""

    def __init__(self, registry: Registry | None, logged: Iterable[str]) -> None:
        self.registry = registry
        self.logged = frozenset(logged)
        self.by_alias: dict[str, str] = {}
        if registry is not None:
            for key, entry in registry.metrics.items():
                self.by_alias[key] = key
                for alias in entry.aliases:
                    self.by_alias[alias] = key
        phrases = sorted((a for a in self.by_alias if " " in a), key=len, reverse=True)
        self.phrase_pattern = (
            re.compile(r"(?<![\w/])(?:" + "|".join(map(re.escape, phrases)) + r")(?![\w/])") if phrases else None
        )
        # Any text that writes out a key or alias contains it as plain characters.
        self._spelled = re.compile("|".join(map(re.escape, self.by_alias))) if self.by_alias else None
        self._logged_by_name: dict[str, list[str]] = {}  # a logged key's last segment, placeholders left empty
        for key in sorted(self.logged):
            self._logged_by_name.setdefault(keys.literal(keys.last_segment(key)), []).append(key)
        # Each look-up below scans the whole registry; a run asks about the same few names
        # thousands of times (every text naming `grad_norm`), so each answer is kept.
        self._keys: dict[str, tuple[str, ...]] = {}
        self._names: dict[str, tuple[str, ...]] = {}

    def for_key(self, key: str) -> tuple[str, ...]:
        """The metrics a logged key (possibly a template) is: registered ones first."""
        if key not in self._keys:
            self._keys[key] = self._metrics_of_key(key)
        return self._keys[key]

    def _metrics_of_key(self, key: str) -> tuple[str, ...]:
        if key in self.by_alias:
            return (self.by_alias[key],)
        registered = tuple(r for r in (self.registry.metrics if self.registry else ()) if keys.same_metric(r, key))
        if registered:
            return registered
        return (key,) if key in self.logged else ()

    def for_name(self, name: str) -> tuple[str, ...]:
        """The one metric a documented name (a parameter, a variable) stands for, or () if unsure.

        A registry key or alias always counts: the registry says so. A key's last segment counts
        only for a compound name (`grad_norm`): a plain word (`loss`) names too many things to be
        trusted without a data flow (seen on miles: every `loss` parameter in examples/ and
        tests/ was taken for `train/loss`).
        """
        if "/" in name:
            return self.for_key(name)
        if name in self.by_alias:
            return (self.by_alias[name],)
        if not specific(name):
            return ()
        return self._registered_name(name) or self._logged_name(name)

    def _registered_name(self, name: str) -> tuple[str, ...]:
        if name in self.by_alias:
            return (self.by_alias[name],)
        if name not in self._names:
            registered = [r for r in (self.registry.metrics if self.registry else ()) if keys.covers(keys.last_segment(r), name)]
            self._names[name] = (registered[0],) if len(registered) == 1 else ()
        return self._names[name]

    def _logged_name(self, name: str) -> tuple[str, ...]:
        # A template found in code carries no intent: `agent/{key}_mean` must not claim every
        # name ending in "_mean". Only its literal text (`{tag}grad_norm` -> grad_norm) counts.
        logged = self._logged_by_name.get(name, [])
        if logged and all(keys.same_metric(logged[0], other) for other in logged):
            concrete = [k for k in logged if not keys.is_template(k)]
            return ((concrete or logged)[0],)
        return ()

    def named_in(self, text: str) -> tuple[str, ...]:
        """Metrics a sentence names: full keys, and registry names that are compound words,
        multi-word aliases, or written in backticks. In prose a bare `data_parallel_size` is
        far more often the variable than a metric that shares its name, so logged names do not
        count here (seen on Megatron-LM)."""
        found: dict[str, None] = {}
        if self.phrase_pattern is not None:
            for match in self.phrase_pattern.finditer(text):
                found[self.by_alias[match.group()]] = None
        for match in _TOKEN.finditer(text):
            word = (match.group(1) or match.group(2)).strip(".,:;")
            if "/" in word:
                metrics = self.for_key(word)
            elif match.group(1) or specific(word):
                metrics = self._registered_name(word)
            else:
                metrics = ()
            for metric in metrics:
                found[metric] = None
        return tuple(found)

    def registered_in(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Registry keys and aliases a text writes out, as (start, end, metric): the places that
        mention a registered metric in passing, which keep its entry from being stale (ML005)."""
        if self._spelled is None or not self._spelled.search(text):
            return  # most texts name no registered metric: one scan instead of a look-up per word
        for match in _TOKEN.finditer(text):
            group = 1 if match.group(1) else 2
            if match.group(group) in self.by_alias:
                yield match.start(group), match.end(group), self.by_alias[match.group(group)]
        if self.phrase_pattern is not None:
            for match in self.phrase_pattern.finditer(text):
                yield match.start(), match.end(), self.by_alias[match.group()]


def specific(name: str) -> bool:
    """Whether a name is an identifier that means one thing (`grad_norm`, `stepTime`, `l2_norm`)
    rather than a word of prose (`loss`, `reward`, `KL`)."""
    if name.isalpha() and name.islower():
        return False  # a plain word, as most tokens of prose are: no need to look at each character
    camel = name[:1].islower() and any(c.isupper() for c in name)
    return camel or any(c in name for c in "_-") or any(c.isdigit() for c in name)


def attribute(mention: Mention, readings: Sequence[Reading], index: MetricIndex) -> list[Claim]:
    """Turn the readings of one text into claims about the metrics it speaks for."""
    if not readings:
        return []
    if mention.flows_to or mention.subjects:
        metrics = _union(index.for_key(k) for k in mention.flows_to) or _union(
            index.for_name(s) for s in mention.subjects
        )
        return [_claim(mention, reading, metric) for reading in readings for metric in metrics]
    claims = []
    named: dict[tuple[int, int], tuple[str, ...]] = {}
    for reading in readings:
        if reading.sentence not in named:
            named[reading.sentence] = index.named_in(mention.text[slice(*reading.sentence)])
        metrics = named[reading.sentence]
        if len(metrics) == 1:
            claims.append(_claim(mention, reading, metrics[0]))
    return claims


def _union(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(metric for group in groups for metric in group))


def _claim(mention: Mention, reading: Reading, metric: str) -> Claim:
    phrase = " ".join(mention.text[reading.start : reading.end].split())
    return Claim(
        metric,
        reading.facet,
        reading.value,
        reading.negated,
        phrase,
        mention.span(reading.start, reading.end),
        mention.source,
        mention.span(0, len(mention.text)),
    )
