"""Claims grouped as the texts state them: ML001, ML002 and ML006 compare whole statements,
so that a text naming several values of a facet is read as one statement, not as several."""

from __future__ import annotations

from collections import defaultdict

from metriclint.checks.rule import Rule
from metriclint.model import Claim, Finding, Fix, Related, Span


def found(claim: Claim) -> str:
    return f"not {claim.value}" if claim.negated else claim.value


def claim_finding(
    rule: Rule, claim: Claim, facet: str, expected: str, evidence: str, related: tuple[Related, ...], fix: Fix | None = None
) -> Finding:
    """A text's claim held against `expected`, which `evidence` says where from: the registry
    (ML001) or the code (ML006). The message quotes the text's words, then the other side."""
    message = f'{claim.metric}: {claim.source} says {facet}={found(claim)} ("{claim.phrase}"); {evidence}'
    return rule.finding(
        claim.span,
        message,
        metric=claim.metric,
        facet=facet,
        found=found(claim),
        expected=expected,
        source=claim.source,
        related=related,
        phrase=claim.phrase,
        fix=fix,
    )


def by_statement(claims: tuple[Claim, ...]) -> dict[tuple[str, str, Span], list[Claim]]:
    groups: dict[tuple[str, str, Span], list[Claim]] = defaultdict(list)
    for claim in claims:
        groups[(claim.metric, claim.facet, claim.statement)].append(claim)
    return groups


def allows(values: list[Claim], value: str) -> bool:
    """Whether one text's claims leave room for `value`: a text naming several values of a
    facet ("the current and the reference policy") agrees with any one of them."""
    positive = {c.value for c in values if not c.negated}
    negated = {c.value for c in values if c.negated}
    return value not in negated and (not positive or value in positive)


def statements(claims: tuple[Claim, ...]) -> dict[tuple[str, Span], frozenset[str]]:
    """What each text states of each metric, as `facet=value` (negated claims left out)."""
    stated: dict[tuple[str, Span], set[str]] = defaultdict(set)
    for claim in claims:
        if not claim.negated:
            stated[(claim.metric, claim.statement)].add(f"{claim.facet}={claim.value}")
    return {key: frozenset(values) for key, values in stated.items()}
