"""Output formats, by name. A format is a function that writes a report to a stream."""

from __future__ import annotations

import json
from collections import Counter
from typing import Callable, TextIO

from metriclint.model import Finding, Report, Severity

JSON_VERSION = 1


def text(report: Report, stream: TextIO, quiet: bool = False) -> None:
    for finding in report.findings:
        stream.write(f"{finding.span}: {finding.rule} {finding.message}\n")
    if quiet:
        return
    errors = sum(f.severity is Severity.ERROR for f in report.findings)
    warnings = len(report.findings) - errors
    if not report.findings:
        stream.write(f"All checks passed ({_files(report.files_checked)}).\n")
    else:
        stream.write(f"Found {_count(errors, 'error')} and {_count(warnings, 'warning')} in {_files(report.files_checked)}.\n")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _files(n: int) -> str:
    return _count(n, "file")


def finding_dict(finding: Finding) -> dict[str, object]:
    span = finding.span
    return {
        "rule": finding.rule,
        "name": finding.name,
        "severity": finding.severity.value,
        "path": span.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "metric": finding.metric,
        "facet": finding.facet,
        "found": finding.found,
        "expected": finding.expected,
        "source": finding.source,
        "message": finding.message,
        "related": [
            {"path": r.span.path, "line": r.span.line, "column": r.span.column, "text": r.text} for r in finding.related
        ],
    }


def json_report(report: Report, stream: TextIO, quiet: bool = False) -> None:
    by_rule = Counter(f.rule for f in report.findings)
    document = {
        "version": JSON_VERSION,
        "findings": [finding_dict(f) for f in report.findings],
        "summary": {
            "files": report.files_checked,
            "findings": len(report.findings),
            "errors": sum(f.severity is Severity.ERROR for f in report.findings),
            "warnings": sum(f.severity is Severity.WARNING for f in report.findings),
            "by_rule": dict(sorted(by_rule.items())),
        },
    }
    json.dump(document, stream, indent=2, ensure_ascii=False)
    stream.write("\n")


Formatter = Callable[[Report, TextIO, bool], None]
FORMATS: dict[str, Formatter] = {"text": text, "json": json_report}
