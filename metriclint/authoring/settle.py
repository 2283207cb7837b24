"""What a draft registry may say about one facet of one metric, and who disagrees.

The code's fact, where metriclint can tell what the code computes, is the value: a text that
says otherwise is wrong, not a second opinion (miles #2132: a docstring called the logged norm
"after clipping"; `init` once copied it and then reported "0 disagreements"). Without a code
fact, a value is drafted only when every statement that mentions the facet states that one
value and nothing else. Any disagreement keeps every side, the code's included, for the
comment a human settles it from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from metriclint.model import Claim, CodeFact, SourceKind, Span


@dataclass(frozen=True, slots=True)
class FacetPosition:
    """One position on a facet: a text's claim, or what the code computes."""

    value: str
    negated: bool
    span: Span
    source: SourceKind
    quote: str  # the text's phrase, or the computing call

    def __str__(self) -> str:
        said = f"{self.source}: {self.quote}" if self.source == SourceKind.CODE else f'{self.source}: "{self.quote}"'
        return f"{'not ' if self.negated else ''}{self.value} at {self.span.path}:{self.span.line} ({said})"


@dataclass(frozen=True, slots=True)
class Settled:
    value: str | None  # what the draft writes under `semantics`, if anything
    disagreement: tuple[FacetPosition, ...]  # every side, when the sides disagree; () when they agree


def settle(claims: Iterable[Claim], facts: Iterable[CodeFact]) -> Settled:
    """The drafted value of one facet from the claims and code facts about it."""
    texts = [FacetPosition(c.value, c.negated, c.span, c.source, c.phrase) for c in claims]
    facts = list(facts)
    code = sorted(
        {FacetPosition(f.value, False, f.span, SourceKind.CODE, f.origin) for f in facts},
        key=lambda side: (side.span, side.value, side.quote),
    )
    code_values = {side.value for side in code}
    estimate = _estimated(texts, facts, code_values)
    said = {estimate} if estimate is not None else code_values  # what the code is taken to say
    stated = {side.value for side in texts if not side.negated} | said
    denied = {side.value for side in texts if side.negated}
    agreed = len(stated) == 1 and not denied & stated
    if len(said) == 1:
        value: str | None = next(iter(said))
    else:
        value = next(iter(stated)) if agreed and not code_values else None
    return Settled(value, () if agreed else tuple(code + texts))


def _estimated(texts: list[FacetPosition], facts: list[CodeFact], code_values: set[str]) -> str | None:
    """The one value the texts state, where none states nor denies the code's own, that every
    computing site's value is also an estimate of with nothing more to state (CodeFact `also`,
    no `also_with`); None otherwise."""
    stated = {side.value for side in texts if not side.negated}
    if not facts or stated & code_values or {side.value for side in texts if side.negated} & code_values:
        return None
    estimates = [value for value in stated if all(value in fact.also and not fact.also_with for fact in facts)]
    return estimates[0] if len(estimates) == 1 else None
