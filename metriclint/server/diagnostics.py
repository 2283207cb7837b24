"""Findings as LSP diagnostics: the rule code and its docs, the severity, and the other side
of a contradiction (the registry line, the other texts) as related information, so the editor
can jump to the statement the text disagrees with."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import Workspace

from metriclint.model import Finding, Problem, Severity, Span
from metriclint.report.formats import rule_url
from metriclint.server.locations import location_of, range_of

SOURCE = "metriclint"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


def diagnostic(workspace: Workspace, finding: Finding) -> types.Diagnostic:
    url = rule_url(finding.rule)
    return types.Diagnostic(
        range=range_of(workspace, finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.rule,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
        related_information=[
            types.DiagnosticRelatedInformation(location_of(workspace, related.span), related.text) for related in finding.related
        ]
        or None,
    )


def problem_diagnostic(workspace: Workspace, problem: Problem) -> types.Diagnostic:
    """A config or registry error (the command line's exit 2), at its place: mid-edit, a
    registry is often briefly invalid, and the last good analysis stays meanwhile."""
    where = Span(problem.path, problem.line, problem.column, problem.line, problem.column + 1)
    return types.Diagnostic(range_of(workspace, where), problem.message, types.DiagnosticSeverity.Error, source=SOURCE)
