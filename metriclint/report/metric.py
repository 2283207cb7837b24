"""`metriclint explain-metric KEY`: every facet of one metric, from each kind of evidence.

A view of the audit (audit.py builds both, so they choose the same metrics: a key, an alias,
or a template with the keys it covers). Code facts fill in what no text says; each line
carries where it comes from, so a reader can check it.
"""

from __future__ import annotations

from metriclint.model import CodeFact, SourceKind
from metriclint.report.audit import Audit


def describe(audit: Audit, key: str) -> list[str]:
    """The report lines for `key` over the audit's metrics; empty if the audit has none."""
    if not audit.metrics:
        return []
    lines: list[str] = []
    for metric in audit.metrics:
        entry = metric.entry
        if entry is not None and (metric.key == key or key in entry.aliases):
            key = metric.key  # an alias is shown as the metric it names
    for metric in audit.metrics:  # the entries of the metrics chosen: a key's, or the template's that registers it
        entry = metric.entry
        if entry is not None:
            named = "" if metric.key == key else f" {metric.key}"
            lines.append(f"registry{named} ({entry.span.path}:{entry.span.line}):")
            lines += [f"  {facet}={setting.value}" for facet, setting in sorted(entry.semantics.items())] or ["  no semantics"]
    code = sorted({c.fact: c.metric for m in audit.metrics for c in m.code}.items(), key=lambda item: (item[0].facet, item[0].span))
    if code:
        lines.append("code:")
        lines += [
            f"  {fact.facet}={fact.value}  {fact.origin} ({fact.span.path}:{fact.span.line}) {fact.says}"
            + (f" [as {metric}]" if metric != key else "")
            for fact, metric in code
        ]
        lines += _paths(code)
    texts = sorted(
        (c for m in audit.metrics for s in m.statements if s.source != SourceKind.CODE for c in s.claims), key=lambda c: (c.facet, c.span)
    )
    if texts:
        lines.append("texts:")
        lines += [
            f'  {c.facet}={"not " if c.negated else ""}{c.value}  {c.source} ({c.span.path}:{c.span.line}) "{c.phrase}"' for c in texts
        ]
    findings = sorted({f for m in audit.metrics for f in m.findings}, key=lambda f: f.sort_key)
    if findings:
        lines.append("findings:")
        lines += [f"  {f.span}: {f.rule} {f.message} [{f.severity.value}]" for f in findings]
    places = {(s.span.path, s.span.line, s.sink) for m in audit.metrics for s in m.logged}
    logged = sorted(p for p in places if p[0] not in audit.tests)  # the project's: a test's logging says what the test expects
    tested = len({p[:2] for p in places if p[0] in audit.tests})
    if logged or tested:
        lines.append("logged:")
        lines += [f"  {path}:{line}" + (f"  by {sink}" if sink else "") for path, line, sink in logged]
        lines += [f"  and {tested} {'place' if tested == 1 else 'places'} in test files"] if tested else []
    return [key, *lines]


def _paths(code: list[tuple[CodeFact, str]]) -> list[str]:
    """A facet the code computes differently on different paths: no single value is claimed
    (ML006 stays silent on it), and the reader is told so. A value computed only when a flag
    is set, a constant placeholder otherwise, depends on the path too (ML006 holds a text to
    the placeholder when the flag is off by default)."""
    values: dict[str, dict[str, None]] = {}
    waits = {fact.facet for fact, _ in code if fact.placeholder is not None}
    for fact, _ in code:
        values.setdefault(fact.facet, {})[_path(fact)] = None
    return [f"  {facet}: depends on the path: {', '.join(found)}" for facet, found in values.items() if len(found) > 1 or facet in waits]


def _path(fact: CodeFact) -> str:
    held = fact.placeholder
    return (
        f"{fact.value} when {held.flag} is set, else the constant {held.constant} ({held.span.path}:{held.span.line})"
        if held
        else fact.value
    )
