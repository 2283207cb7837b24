"""`metriclint explain-metric KEY`: every facet of one metric, from each kind of evidence.

Code facts fill in what no text says; each line carries where it comes from, so a reader can
check it.
"""

from __future__ import annotations

from metriclint.base import keys
from metriclint.knowledge.registry import Registry
from metriclint.model import Claim, CodeClaim, CodeFact


def describe(key: str, registry: Registry | None, claims: tuple[Claim, ...], code_claims: tuple[CodeClaim, ...]) -> list[str]:
    """The report lines for `key` (a template matches the keys it covers); empty if unknown."""
    lines: list[str] = []
    entry = registry.metrics.get(key) if registry is not None else None
    if entry is not None:
        lines.append(f"registry ({entry.span.path}:{entry.span.line}):")
        lines += [f"  {facet}={setting.value}" for facet, setting in sorted(entry.semantics.items())] or ["  no semantics"]
    code = sorted(
        {c.fact: c.metric for c in code_claims if keys.same_metric(c.metric, key)}.items(),
        key=lambda item: (item[0].facet, item[0].span),
    )
    if code:
        lines.append("code:")
        lines += [
            f"  {fact.facet}={fact.value}  {fact.origin} ({fact.span.path}:{fact.span.line}) {fact.says}"
            + (f" [as {metric}]" if metric != key else "")
            for fact, metric in code
        ]
        lines += _paths(code)
    texts = sorted((c for c in claims if keys.same_metric(c.metric, key)), key=lambda c: (c.facet, c.span))
    if texts:
        lines.append("texts:")
        lines += [
            f'  {c.facet}={"not " if c.negated else ""}{c.value}  {c.source} ({c.span.path}:{c.span.line}) "{c.phrase}"'
            for c in texts
        ]
    return ([key] + lines) if lines else []


def _paths(code: list[tuple[CodeFact, str]]) -> list[str]:
    """A facet the code computes differently on different paths: no single value is claimed
    (ML006 stays silent on it), and the reader is told so."""
    values: dict[str, dict[str, None]] = {}
    for fact, _ in code:
        values.setdefault(fact.facet, {})[fact.value] = None
    return [f"  {facet}: depends on the path: {', '.join(found)}" for facet, found in values.items() if len(found) > 1]
