"""What the texts and the registry say about each metric's facets, as the live check holds
them against a run: the claims the pipeline read (engine.Analysis) and the registry's
semantics, each with its place and words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.knowledge.registry import Registry
from metriclint.model import Claim, Mention, SourceKind, Span


@dataclass(frozen=True, kw_only=True)
class StatedValue:
    metric: str
    facet: str
    value: str
    negated: bool
    span: Span
    source: str  # docstring, comment, registry, ...
    phrase: str  # the words quoted; "" for a registry setting
    sentence: str = ""  # the sentence it stands in, lower-cased: where "since the start" is looked for

    @property
    def found(self) -> str:
        return f"not {self.value}" if self.negated else self.value

    @property
    def says(self) -> str:
        quoted = f' ("{self.phrase}")' if self.phrase else ""
        return f"{self.source} says {self.facet}={self.found}{quoted}"


def gathered(claims: tuple[Claim, ...], registry: Registry | None, mentions: tuple[Mention, ...]) -> list[StatedValue]:
    texts = {(m.path, *m.origins[0]): m for m in mentions if m.origins}
    found = []
    if registry is not None:
        for key, entry in registry.metrics.items():
            description = entry.description.text.lower() if entry.description is not None else ""
            for facet, setting in entry.semantics.items():
                found.append(
                    StatedValue(
                        metric=key,
                        facet=facet,
                        value=setting.value,
                        negated=False,
                        span=setting.span,
                        source=str(SourceKind.REGISTRY),
                        phrase="",
                        sentence=description,
                    )
                )
    for claim in claims:
        mention = texts.get((claim.statement.path, claim.statement.line, claim.statement.column))
        found.append(
            StatedValue(
                metric=claim.metric,
                facet=claim.facet,
                value=claim.value,
                negated=claim.negated,
                span=claim.span,
                source=str(claim.source),
                phrase=claim.phrase,
                sentence=_sentence(mention, claim) if mention is not None else claim.phrase.lower(),
            )
        )
    return found


def _sentence(mention: Mention, claim: Claim) -> str:
    """The sentence of `mention` that holds the claim's phrase."""
    text = mention.text
    line = claim.span.line - mention.origins[0][0]
    if not 0 <= line < len(mention.origins):
        return claim.phrase.lower()
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    at = starts[line] + claim.span.column - mention.origins[line][1]
    ends = [m.end() for m in re.finditer(r"[.!?](\s|$)|\n\s*\n", text)]
    before = max((e for e in ends if e <= at), default=0)
    after = min((e for e in ends if e > at), default=len(text))
    return " ".join(text[before:after].split()).lower()


@lru_cache(maxsize=1)
def _running() -> re.Pattern[str]:
    words = sorted(word_lists("live.yaml")["running"], key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")


def over_the_run(statement: StatedValue) -> bool:
    """Whether a `reduction: max` statement puts the maximum over the whole run."""
    return _running().search(statement.sentence) is not None


class KeyMetrics:
    """Which metrics a logged key is: the statements' metrics, registry keys and aliases,
    templates covering it (a placeholder is any text within one segment)."""

    def __init__(self, registry: Registry | None, metrics: set[str]) -> None:
        self.exact: dict[str, set[str]] = {}
        for metric in metrics:
            self.exact.setdefault(metric, set()).add(metric)
        for key, entry in registry.metrics.items() if registry is not None else ():
            for name in (key, *entry.aliases):
                self.exact.setdefault(name, set()).add(key)
        self.templates = keys.KeySet(name for name in self.exact if keys.is_template(name))

    def of(self, key: str) -> set[str]:
        found = set(self.exact.get(key, ()))
        for template in self.templates.same_metric(key):
            found |= self.exact.get(template, set())
        return found
