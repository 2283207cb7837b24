"""The audit: for every metric, what each place says it means, side by side.

A view over one pipeline run (`engine.analyse`), built from its claims, mentions and inventory
by source kind, so a new source (tooltips, code evidence) shows up here without changes. What
the code computes (evidence/code_claims.py) is a statement of source `code`, placed at the computing call.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from metriclint.base import keys
from metriclint.checks import ML001, RULES, Kind
from metriclint.engine import Analysis
from metriclint.knowledge.registry import MetricEntry
from metriclint.model import Claim, CodeClaim, Finding, Mention, Sighting, SourceKind, Span

AGREE, CONTRADICT, SILENT = "agree", "contradict", "silent"
# Column order of the matrix; kinds not listed follow in alphabetical order.
SOURCE_ORDER = (
    SourceKind.REGISTRY,
    SourceKind.DOC,
    SourceKind.TOOLTIP,
    SourceKind.DOCSTRING,
    SourceKind.COMMENT,
    SourceKind.LOG,
    SourceKind.CODE,
)


def _checked(kind: Kind) -> frozenset[str]:
    """The codes of the rules of `kind` that `check` reports: an audit shows one check run."""
    return frozenset(rule.code for rule in RULES if rule.kind == kind and rule.command == "check")


# The findings that say a metric's statements disagree (with the registry, each other, the code,
# its name, or a dashboard showing another metric's tooltip): what paints a metric "contradict".
CONTRADICTIONS = _checked("contradiction")
GAPS = _checked("gap")  # a key logged but not registered (ML004), or registered but not logged (ML005)
QUOTE_LIMIT = 300


@dataclass(frozen=True, slots=True)
class AuditStatement:
    """One text about a metric: where it is, what it says, and the claims read from it."""

    source: str
    span: Span
    text: str
    claims: tuple[Claim, ...]
    status: str  # contradict | agree | silent (it names the metric and states no facet)


@dataclass(frozen=True, slots=True)
class FacetView:
    facet: str
    registry: str | None
    stated: tuple[tuple[str, str], ...]  # (value as stated, source kind), in statement order
    status: str  # agree | contradict


@dataclass(frozen=True, kw_only=True, slots=True)
class MetricAudit:
    key: str
    entry: MetricEntry | None
    logged: tuple[Sighting, ...]  # where the code logs it
    statements: tuple[AuditStatement, ...]
    facets: tuple[FacetView, ...]
    silent_facets: tuple[str, ...]  # facets no source and no registry line states
    findings: tuple[Finding, ...]
    status: str  # contradict | agree | silent
    code: tuple[CodeClaim, ...]  # what the code computes, the facts behind its `code` statements

    @property
    def described(self) -> bool:
        """A text says what it is: what the code computes is evidence, not a description."""
        return any(s.source != SourceKind.CODE for s in self.statements) or bool(self.entry and self.entry.description)

    def cell(self, source: str) -> tuple[str, tuple[AuditStatement, ...]]:
        """The matrix cell for a source kind: its status and its statements."""
        statements = tuple(s for s in self.statements if s.source == source)
        if source == SourceKind.REGISTRY and self.entry is not None:
            registry = self.entry.span.path
            broken = any(f.rule == ML001.code or (f.rule in CONTRADICTIONS and f.span.path == registry) for f in self.findings)
            states = bool(self.entry.semantics) or any(s.claims for s in statements)
            return (CONTRADICT if broken else AGREE if states else SILENT), statements
        if any(s.status == CONTRADICT for s in statements):
            return CONTRADICT, statements
        # agreeing takes a claim: the code may log the key, or a text name it, and say nothing of what it means
        return (AGREE if any(s.claims for s in statements) else SILENT), statements


@dataclass(frozen=True, slots=True)
class Audit:
    metrics: tuple[MetricAudit, ...]
    sources: tuple[str, ...]  # the matrix columns
    gaps: tuple[Finding, ...]  # ML004 and ML005
    files: int
    tests: frozenset[str] = frozenset()  # the test files, as shown: where a key logged is a test's, not the project's
    registry: str | None = None  # the registry's path, as shown

    @property
    def undescribed(self) -> tuple[str, ...]:
        return tuple(m.key for m in self.metrics if not m.described)


def build(analysis: Analysis, only: str | None = None) -> Audit:
    """The audit of a run; `only` (a key or alias) narrows it to one metric."""
    mentions = {m.span(0, len(m.text)): m for m in analysis.mentions}
    entries = analysis.registry.metrics if analysis.registry else {}

    by_metric: dict[str, dict[Span, list[Claim]]] = defaultdict(dict)
    for claim in analysis.claims:
        by_metric[claim.metric].setdefault(claim.statement, []).append(claim)
    logged: dict[str, list[Sighting]] = defaultdict(list)
    for sighting in analysis.sightings:
        for metric in sighting.metrics:
            if sighting.source == SourceKind.CODE:
                logged[metric].append(sighting)
            elif not sighting.passing:  # the text as a whole speaks for the metric
                by_metric[metric].setdefault(sighting.span, [])
    computed: dict[str, list[CodeClaim]] = defaultdict(list)
    for code in analysis.code:  # in one order already (evidence/products.py, code_facts)
        computed[code.metric].append(code)
        fact = code.fact
        by_metric[code.metric].setdefault(fact.span, []).append(
            Claim(code.metric, fact.facet, fact.value, False, fact.origin, fact.span, SourceKind.CODE, fact.span)
        )
    for key, entry in entries.items():
        if entry.description is not None:
            by_metric[key].setdefault(entry.description.span(0, len(entry.description.text)), [])

    rows = set(entries) | set(by_metric) | set(logged)
    findings = defaultdict(list)
    for finding in analysis.report.findings:
        findings[_row(finding.metric, rows, analysis)].append(finding)
    contradicted = {key for key, found in findings.items() if key and any(f.rule in CONTRADICTIONS for f in found)}
    # a value only printed is checked, not inventoried: a row only when a finding is about it
    shown = sorted(key for key in rows | contradicted if not keys.is_printed(key) or findings.get(key))
    if only is not None:
        shown = [k for k in shown if chosen_by(k, only, entries.get(k))]
    audits = tuple(
        _metric(key, entries.get(key), logged[key], by_metric[key], mentions, findings[key], analysis.facets, computed[key])
        for key in shown
    )
    present = {s.source for m in audits for s in m.statements} | ({SourceKind.CODE} if any(m.logged for m in audits) else set())
    present |= {SourceKind.REGISTRY} if entries else set()
    sources = tuple(s for s in SOURCE_ORDER if s in present) + tuple(sorted(present - set(SOURCE_ORDER)))
    chosen = set(shown)
    gaps = tuple(f for f in analysis.report.findings if f.rule in GAPS and (only is None or f.metric in chosen))
    registry = analysis.registry.path if analysis.registry is not None else None
    return Audit(audits, sources, gaps, analysis.report.files_checked, analysis.collection.tests, registry)


def _row(metric: str, rows: set[str], analysis: Analysis) -> str:
    """The audit row a finding about `metric` belongs to: its own, else that of the registry
    metric its key is (a key a template registers, which ML003 names as the dashboard shows
    it), so that every finding `check` reports is in the audit, beside its statements."""
    if not metric or metric in rows:
        return metric
    return next((m for m in analysis.collection.index.for_key(metric) if m in rows), metric)


def chosen_by(key: str, asked: str, entry: MetricEntry | None) -> bool:
    """Whether asking for `asked` (a key, an alias or a template) shows metric `key`: a template
    shows the keys it covers, and a key the templates that cover it."""
    return keys.same_metric(key, asked) or (entry is not None and asked in entry.aliases)


def _metric(
    key: str,
    entry: MetricEntry | None,
    logged: list[Sighting],
    statements: dict[Span, list[Claim]],
    mentions: dict[Span, Mention],
    findings: list[Finding],
    facets: tuple[str, ...],
    code: list[CodeClaim],
) -> MetricAudit:
    contradictions = [f for f in findings if f.rule in CONTRADICTIONS]
    views = []
    computing = _code_texts(code)  # this metric's reasons only: one call may compute several metrics (a framework's keys)
    for span, claims in sorted(statements.items(), key=lambda item: (item[0].path != (entry.span.path if entry else ""), item[0])):
        mention = computing.get(span) or mentions.get(span)
        source = mention.source if mention else claims[0].source
        text = _quote(mention.text if mention else " ".join(c.phrase for c in claims))
        broken = any(f.span.starts_in(span) or any(r.span.starts_in(span) for r in f.related) for f in contradictions)
        views.append(AuditStatement(source, span, text, tuple(claims), CONTRADICT if broken else AGREE if claims else SILENT))
    facet_views = _facets(entry, views, contradictions)
    stated = {v.facet for v in facet_views}
    silent = tuple(f for f in facets if f not in stated)
    status = CONTRADICT if contradictions else AGREE if facet_views else SILENT
    return MetricAudit(
        key=key,
        entry=entry,
        logged=tuple(logged),
        statements=tuple(views),
        facets=facet_views,
        silent_facets=silent,
        findings=tuple(findings),
        status=status,
        code=tuple(code),
    )


def _code_texts(codes: list[CodeClaim]) -> dict[Span, Mention]:
    """What the code says at each computing call, as the audit quotes it: the call, then why
    each fact holds ("torch.nn.utils.clip_grad_norm_: returns the total norm computed before
    clipping; computes the l2 norm")."""
    said: dict[Span, list[str]] = {}
    for code in codes:
        reasons = said.setdefault(code.fact.span, [code.fact.origin])
        if code.fact.says not in reasons:
            reasons.append(code.fact.says)
    return {
        span: Mention(SourceKind.CODE, span.path, f"{r[0]}: {'; '.join(r[1:])}", ((span.line, span.column),)) for span, r in said.items()
    }


def _facets(entry: MetricEntry | None, statements: list[AuditStatement], contradictions: list[Finding]) -> tuple[FacetView, ...]:
    stated: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for statement in statements:
        for claim in statement.claims:
            value = f"not {claim.value}" if claim.negated else claim.value
            if (value, statement.source) not in stated[claim.facet]:
                stated[claim.facet].append((value, statement.source))
    names = sorted(set(stated) | set(entry.semantics if entry else ()))
    broken = {f.facet for f in contradictions}
    return tuple(
        FacetView(
            name,
            entry.semantics[name].value if entry and name in entry.semantics else None,
            tuple(stated.get(name, ())),
            CONTRADICT if name in broken else AGREE,
        )
        for name in names
    )


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= QUOTE_LIMIT else flat[: QUOTE_LIMIT - 1].rstrip() + "…"
