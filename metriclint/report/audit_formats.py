"""The audit's output formats: text for a terminal, JSON (stable fields), Markdown, HTML.

Every format renders the same `Audit` value; JSON is the reference, the others are views of
it. The HTML page is one self-contained file: inline CSS, no script, no network.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, TextIO, TypedDict

from metriclint import __version__
from metriclint.base.gitls import commit
from metriclint.base.paths import repository_root
from metriclint.checks import ML004, ML005
from metriclint.model import Claim, SourceKind, Span
from metriclint.report.audit import (
    AGREE,
    CONTRADICT,
    CONTRADICTIONS,
    SILENT,
    Audit,
    AuditStatement,
    MetricAudit,
)
from metriclint.report.formats import count, finding_dict

JSON_VERSION = 1


def _where(span: Span) -> str:
    return f"{span.path}:{span.line}:{span.column}"


def _claim_text(claim: Claim) -> str:
    return f"{claim.facet}={'not ' if claim.negated else ''}{claim.value}"


def _semantics(metric: MetricAudit) -> str:
    entry = metric.entry
    return ", ".join(f"{facet}={s.value}" for facet, s in entry.semantics.items()) if entry else ""


class AuditSummary(TypedDict):
    files: int
    metrics: int
    statements: dict[str, int]
    contradicted: int
    contradictions: int
    unregistered: int
    stale: int
    undescribed: int


def summary(audit: Audit) -> AuditSummary:
    statements = Counter(s.source for m in audit.metrics for s in m.statements)
    rules = Counter(f.rule for f in audit.gaps)
    return AuditSummary(
        {
            "files": audit.files,
            "metrics": len(audit.metrics),
            "statements": dict(sorted(statements.items())),
            "contradicted": sum(m.status == CONTRADICT for m in audit.metrics),
            "contradictions": sum(f.rule in CONTRADICTIONS for m in audit.metrics for f in m.findings),
            "unregistered": rules[ML004.code],
            "stale": rules[ML005.code],
            "undescribed": len(audit.undescribed),
        }
    )


# -- JSON ------------------------------------------------------------------------------------


def _span_dict(span: Span) -> dict[str, object]:
    return {"path": span.path, "line": span.line, "column": span.column}


def _statement_dict(statement: AuditStatement) -> dict[str, object]:
    return {
        "source": statement.source,
        **_span_dict(statement.span),
        "text": statement.text,
        "status": statement.status,
        "claims": [
            {"facet": c.facet, "value": c.value, "negated": c.negated, "phrase": c.phrase, **_span_dict(c.span)} for c in statement.claims
        ],
    }


def _metric_dict(metric: MetricAudit, tests: frozenset[str]) -> dict[str, object]:
    entry = metric.entry
    registry = None
    if entry is not None:
        registry = {
            **_span_dict(entry.span),
            "aliases": list(entry.aliases),
            "description": " ".join(entry.description.text.split()) if entry.description else None,
            "semantics": {facet: s.value for facet, s in entry.semantics.items()},
        }
    return {
        "key": metric.key,
        "status": metric.status,
        "registry": registry,
        "logged": [{"key": s.name, **_span_dict(s.span), "test": s.span.path in tests} for s in metric.logged],
        "statements": [_statement_dict(s) for s in metric.statements],
        "facets": [
            {"facet": f.facet, "registry": f.registry, "stated": [{"value": v, "source": s} for v, s in f.stated], "status": f.status}
            for f in metric.facets
        ],
        "silent_facets": list(metric.silent_facets),
        "findings": [finding_dict(f) for f in metric.findings],
    }


def json_audit(audit: Audit, stream: TextIO) -> None:
    document = {
        "version": JSON_VERSION,
        "sources": list(audit.sources),
        "metrics": [_metric_dict(m, audit.tests) for m in audit.metrics],
        "gaps": {
            "unregistered": [finding_dict(f) for f in audit.gaps if f.rule == ML004.code],
            "stale": [finding_dict(f) for f in audit.gaps if f.rule == ML005.code],
            "undescribed": list(audit.undescribed),
        },
        "summary": summary(audit),
    }
    json.dump(document, stream, indent=2, ensure_ascii=False)
    stream.write("\n")


# -- text ------------------------------------------------------------------------------------


def _summary_line(audit: Audit) -> str:
    numbers = summary(audit)
    by_source = ", ".join(f"{source} {n}" for source, n in numbers["statements"].items()) or "none"
    return (
        f"{count(numbers['metrics'], 'metric')} in {count(numbers['files'], 'file')}; statements: {by_source}; "
        f"{numbers['contradicted']} contradicted ({count(numbers['contradictions'], 'finding')}), {numbers['unregistered']} unregistered ({ML004.code}), "
        f"{numbers['stale']} stale ({ML005.code}), {numbers['undescribed']} undescribed"
    )


def text_audit(audit: Audit, stream: TextIO) -> None:
    for metric in audit.metrics:
        stream.write(f"{metric.key}  [{metric.status}]\n")
        if metric.entry is not None:
            stream.write(f"  registry   {_where(metric.entry.span)}  {_semantics(metric) or 'no semantics'}\n")
        for statement in metric.statements:
            claims = ", ".join(_claim_text(c) for c in statement.claims)
            mark = "  CONTRADICTS" if statement.status == CONTRADICT else ""
            stream.write(f"  {statement.source:<10} {_where(statement.span)}{mark}\n")
            stream.write(f'             "{statement.text}"' + (f"  -> {claims}" if claims else "") + "\n")
        if metric.logged:
            places = ", ".join(_where(s.span) for s in metric.logged[:3])
            more = f" and {len(metric.logged) - 3} more" if len(metric.logged) > 3 else ""
            stream.write(f"  {SourceKind.CODE:<10} logged at {places}{more}\n")
        for facet in metric.facets:
            said = ", ".join(f"{value} ({source})" for value, source in facet.stated)
            registry = f"registry says {facet.registry}" if facet.registry else ""
            stated = f"stated: {said}" if said else ""
            stream.write(f"  {facet.facet}: {'; '.join(p for p in (registry, stated) if p)}  [{facet.status}]\n")
        if metric.silent_facets:
            stream.write(f"  nobody states: {', '.join(metric.silent_facets)}\n")
        stream.write("\n")
    if audit.gaps or audit.undescribed:
        stream.write("Coverage gaps\n")
        for finding in audit.gaps:
            stream.write(f"  {_where(finding.span)}: {finding.rule} {finding.message}\n")
        if audit.undescribed:
            stream.write(f"  no description anywhere: {', '.join(audit.undescribed)}\n")
        stream.write("\n")
    stream.write(_summary_line(audit) + "\n")


# -- Markdown --------------------------------------------------------------------------------


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or list item."""
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "\\`").replace("*", "\\*").replace("_", "\\_")


def markdown_audit(audit: Audit, stream: TextIO) -> None:
    stream.write("# Metric audit\n\n" + _summary_line(audit) + "\n\n")
    stream.write("| Metric | " + " | ".join(audit.sources) + " |\n|---|" + "---|" * len(audit.sources) + "\n")
    for metric in audit.metrics:
        cells = []
        for source in audit.sources:
            status, statements = metric.cell(source)
            cells.append(status if status == SILENT else f"{status} ({len(statements) or len(metric.logged) or 1})")
        stream.write(f"| `{metric.key}` | " + " | ".join(cells) + " |\n")
    for metric in audit.metrics:
        stream.write(f"\n## `{metric.key}` ({metric.status})\n\n")
        if metric.entry is not None:
            stream.write(f"- **registry** `{_where(metric.entry.span)}`: {_md(_semantics(metric) or 'no semantics')}\n")
        for statement in metric.statements:
            claims = ", ".join(_claim_text(c) for c in statement.claims)
            flag = " **contradicts**" if statement.status == CONTRADICT else ""
            stream.write(f"- **{statement.source}** `{_where(statement.span)}`{flag}: “{_md(statement.text)}”")
            stream.write(f" → {_md(claims)}\n" if claims else "\n")
        if metric.logged:
            stream.write("- **code** logged at " + ", ".join(f"`{_where(s.span)}`" for s in metric.logged) + "\n")
        if metric.silent_facets:
            stream.write(f"- nobody states: {', '.join(metric.silent_facets)}\n")
    if audit.gaps or audit.undescribed:
        stream.write("\n## Coverage gaps\n\n")
        for finding in audit.gaps:
            stream.write(f"- {finding.rule} `{_where(finding.span)}`: {_md(finding.message)}\n")
        if audit.undescribed:
            stream.write("- no description anywhere: " + ", ".join(f"`{k}`" for k in audit.undescribed) + "\n")


# -- HTML ------------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
@media (max-width: 600px) { body { margin: .6em; } }
.controls { display: flex; flex-wrap: wrap; gap: .4em 1.2em; margin: .8em 0; }
.scroll { overflow-x: auto; }
table.matrix { border-collapse: collapse; width: 100%; }
.matrix th, .matrix td { border: 1px solid #c8c8cc; padding: .4em; vertical-align: top; text-align: left; min-width: 12em; }
.matrix thead th { background: #f0f0f2; position: sticky; top: 0; }
.matrix thead button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0; cursor: pointer; }
.matrix th[aria-sort=ascending] button::after { content: " ▲"; } .matrix th[aria-sort=descending] button::after { content: " ▼"; }
.matrix th.metric { min-width: 10em; } .matrix th.metric code { overflow-wrap: break-word; }
.provenance { color: #6e6e73; font-size: 12px; }
.agree { background: #e3f4e1; } .contradict { background: #fbdcdc; } .silent { background: #f4f4f5; color: #6e6e73; }
.status { font-size: 11px; text-transform: uppercase; letter-spacing: .05em; font-weight: 600; }
td.contradict .status, span.contradict { color: #a40000; } td.agree .status { color: #1f6f1f; }
q { display: block; margin: .2em 0; quotes: "“" "”"; overflow-wrap: break-word; }
.stmt.contradict q { font-weight: 600; }
code, .loc { font: 12px ui-monospace, monospace; color: #4a4a4f; overflow-wrap: anywhere; }
.claims { font: 12px ui-monospace, monospace; color: #1f4f8f; }
.legend span { padding: .1em .6em; margin-right: .6em; border: 1px solid #c8c8cc; }
ul.gaps li { margin: .2em 0; }
"""

# Filtering by key and status, and sorting by a column, in the page itself: no server, no
# external file. A row keeps its key and status in data attributes; a cell's class is its status.
_SCRIPT = """
(function () {
  var body = document.querySelector(".matrix tbody"), rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById("filter"), status = document.getElementById("status");
  var rank = {contradict: 0, agree: 1, silent: 2};
  function apply() {
    var text = filter.value.toLowerCase(), wanted = status.value;
    rows.forEach(function (row) {
      row.hidden = row.getAttribute("data-key").toLowerCase().indexOf(text) < 0 || (wanted !== "" && row.getAttribute("data-status") !== wanted);
    });
  }
  filter.addEventListener("input", apply);
  status.addEventListener("change", apply);
  var headers = document.querySelectorAll(".matrix thead th");
  Array.prototype.forEach.call(headers, function (header, column) {
    header.querySelector("button").addEventListener("click", function () {
      var order = header.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending", sign = order === "ascending" ? 1 : -1;
      Array.prototype.forEach.call(headers, function (other) { other.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", order);
      function value(row) { return column === 0 ? row.getAttribute("data-key") : rank[row.cells[column].className]; }
      rows.sort(function (a, b) { var x = value(a), y = value(b); return x < y ? -sign : x > y ? sign : 0; });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _wrappable(key: str) -> str:
    """A key that wraps after its separators (`train/<wbr>grad_<wbr>norm`), never inside a word
    of it while the column has room for the word."""
    return re.sub(r"([/_.\-])", r"\1<wbr>", _e(key))


def provenance(audit: Audit, environ: Mapping[str, str] = os.environ) -> str:
    """What made the page: metriclint's version, the registry, the commit checked out, the date
    (SOURCE_DATE_EPOCH when set, for a reproducible page)."""
    registry = audit.registry or "none"
    top = repository_root(Path(os.path.abspath(audit.registry)).parent if audit.registry else Path.cwd())
    made = commit(top) if top is not None else None
    epoch = environ.get("SOURCE_DATE_EPOCH", "")
    when = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    parts = [
        f"metriclint {__version__}",
        f"registry {registry}",
        *([f"commit {made}"] if made else []),
        when.strftime("%Y-%m-%d %H:%M UTC"),
    ]
    return " · ".join(parts)


def anchor(key: str) -> str:
    """A valid, unique HTML id for a metric key: an id holds no whitespace, so whitespace (and
    `%`, to keep ids apart) is written as `%XX`."""
    return "m-" + "".join(f"%{ord(c):02X}" if c.isspace() or c == "%" else c for c in key)


def _html_cell(metric: MetricAudit, source: str) -> str:
    status, statements = metric.cell(source)
    parts = [f'<span class="status">{status}</span>']
    if source == SourceKind.REGISTRY and metric.entry is not None:
        parts.append(f'<div class="loc">{_e(_where(metric.entry.span))}</div>')
        if metric.entry.semantics:
            parts.append(f'<div class="claims">{_e(_semantics(metric))}</div>')
    for statement in statements:
        claims = ", ".join(_claim_text(c) for c in statement.claims)
        parts.append(
            f'<div class="stmt {statement.status}"><q>{_e(statement.text)}</q>'
            f'<span class="loc">{_e(_where(statement.span))}</span>'
            + (f' <span class="claims">{_e(claims)}</span>' if claims else "")
            + "</div>"
        )
    if source == SourceKind.CODE and metric.logged:
        shown = ", ".join(_where(s.span) for s in metric.logged[:5])
        more = f" and {len(metric.logged) - 5} more" if len(metric.logged) > 5 else ""
        parts.append(f'<div class="loc">logged at {_e(shown + more)}</div>')
    return f'<td class="{status}">' + "".join(parts) + "</td>"


def html_audit(audit: Audit, stream: TextIO) -> None:
    stream.write('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n')
    stream.write('<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>Metric audit</title>\n')
    stream.write(f"<style>{_CSS}</style>\n</head>\n<body>\n<h1>Metric audit</h1>\n<p>{_e(_summary_line(audit))}</p>\n")
    stream.write(f'<p class="provenance">{_e(provenance(audit))}</p>\n')
    stream.write('<p class="legend">' + "".join(f'<span class="{s}">{s}</span>' for s in (AGREE, CONTRADICT, SILENT)) + "</p>\n")
    options = "".join(f"<option>{s}</option>" for s in (CONTRADICT, AGREE, SILENT))
    stream.write(
        '<div class="controls"><label>Filter <input id="filter" type="search" placeholder="metric key"></label>'
        f'<label>Status <select id="status"><option value="">all</option>{options}</select></label></div>\n'
    )
    stream.write(
        '<div class="scroll">\n<table class="matrix">\n<thead><tr><th class="metric" aria-sort="ascending"><button type="button">metric</button></th>'
    )
    stream.write("".join(f'<th><button type="button">{_e(s)}</button></th>' for s in audit.sources) + "</tr></thead>\n<tbody>\n")
    for metric in audit.metrics:
        silent = f'<div class="loc">nobody states: {_e(", ".join(metric.silent_facets))}</div>' if metric.silent_facets else ""
        stream.write(
            f'<tr id="{_e(anchor(metric.key))}" data-key="{_e(metric.key)}" data-status="{metric.status}">'
            f'<th class="metric"><code>{_wrappable(metric.key)}</code>'
            f'<div class="status"><span class="{metric.status}">{metric.status}</span></div>{silent}</th>'
        )
        stream.write("".join(_html_cell(metric, s) for s in audit.sources) + "</tr>\n")
    stream.write("</tbody>\n</table>\n</div>\n")
    if audit.gaps or audit.undescribed:
        stream.write('<h2>Coverage gaps</h2>\n<ul class="gaps">\n')
        for finding in audit.gaps:
            stream.write(f'<li><b>{finding.rule}</b> <span class="loc">{_e(_where(finding.span))}</span> {_e(finding.message)}</li>\n')
        if audit.undescribed:
            stream.write(f"<li>no description anywhere: <code>{_e(', '.join(audit.undescribed))}</code></li>\n")
        stream.write("</ul>\n")
    stream.write(f"<script>{_SCRIPT}</script>\n</body>\n</html>\n")


AuditFormatter = Callable[[Audit, TextIO], None]
AUDIT_FORMATS: dict[str, AuditFormatter] = {
    "text": text_audit,
    "json": json_audit,
    "markdown": markdown_audit,
    "html": html_audit,
}
