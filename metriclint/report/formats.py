"""Output formats, by name. A format is a function that writes a report to a stream.

Besides text and JSON, the formats CI systems read: SARIF 2.1.0 for GitHub code scanning,
GitHub workflow commands (annotations on the diff) and GitLab's Code Quality report.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator, Mapping, Protocol, TextIO
from urllib.parse import quote

import click

from metriclint import __version__
from metriclint.base.escapes import printable
from metriclint.base.paths import repository_root
from metriclint.baseline import fingerprint
from metriclint.checks import RULES
from metriclint.model import Finding, Report, Severity, Span

JSON_VERSION = 1
SRCROOT = "%SRCROOT%"  # the base of SARIF URIs: the repository root


RULE_PAGE = "rules/{code}/"  # where the docs site (mkdocs.yml) puts a rule's page, docs/rules/CODE.md

# The published docs site: the `Documentation` URL of [project.urls] in pyproject.toml (a test
# holds the two equal). None while none is published, so that no editor or code scanning page
# links to a page that does not exist.
DOCUMENTATION: str | None = None


def rule_url(code: str) -> str | None:
    """The page documenting rule `code` on the published site, or None while there is none."""
    return f"{DOCUMENTATION.rstrip('/')}/{RULE_PAGE.format(code=code)}" if DOCUMENTATION else None


def text(report: Report, stream: TextIO, quiet: bool = False) -> None:
    """`path:line:col: CODE message [severity]`, one finding a line (the severity last, as
    ESLint's unix format puts it, so tools reading `path:line:col: CODE` still do); coloured on
    a terminal."""
    paint = painter(stream)
    for finding in report.findings:
        level = finding.severity.value
        code = paint(finding.rule, fg=_COLOURS[finding.severity], bold=True)
        stream.write(f"{paint(printable(str(finding.span)), bold=True)}: {code} {printable(finding.message)} [{level}]\n")
    if quiet:
        return
    found = report.findings + report.printed_earlier
    errors = sum(f.severity is Severity.ERROR for f in found)
    warnings = sum(f.severity is Severity.WARNING for f in found)
    notes = len(found) - errors - warnings
    noted = f" and {count(notes, 'note')}" if notes else ""
    earlier = f" ({len(report.printed_earlier)} printed above, by an earlier invocation of this hook)" if report.printed_earlier else ""
    if not found:
        stream.write(f"All checks passed ({_files(report.files_checked)}).\n")
    elif notes:
        stream.write(f"Found {count(errors, 'error')}, {count(warnings, 'warning')}{noted} in {_files(report.files_checked)}{earlier}.\n")
    else:
        stream.write(f"Found {count(errors, 'error')} and {count(warnings, 'warning')} in {_files(report.files_checked)}{earlier}.\n")


_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "blue"}


def readable(text: str) -> str:
    """`text` as valid UTF-8: each byte of a file name that is not UTF-8 (held as a lone
    surrogate, Python's surrogateescape) written `\\xff`, so that machine-read output still
    decodes; any other lone surrogate as `\\udxxx`."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _dump(document: object, stream: TextIO, indent: int | None = 2) -> None:
    """`document` as JSON, every string in it `readable`, and a line end."""
    stream.write(json.dumps(_readable_strings(document), indent=indent, ensure_ascii=False) + "\n")


def _readable_strings(value: object) -> object:
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, dict):
        return {readable(k): _readable_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable_strings(v) for v in value]
    return value


def painter(stream: TextIO, environ: Mapping[str, str] = os.environ) -> Callable[..., str]:
    """click.style where colour is wanted, else a function that returns the text as it is:
    FORCE_COLOR (set and not empty) always colours, NO_COLOR never (no-color.org), and
    otherwise only a terminal is coloured, never a pipe or a file."""
    wanted = bool(environ.get("FORCE_COLOR")) or (not environ.get("NO_COLOR") and stream.isatty())
    return click.style if wanted else lambda text, **_: text


def statistics(report: Report, stream: TextIO) -> None:
    """One line per rule with findings, the most first: count, code, name (ruff's --statistics)."""
    names = {f.rule: f.name for f in report.findings}
    for rule, n in sorted(Counter(f.rule for f in report.findings).items(), key=lambda item: (-item[1], item[0])):
        stream.write(f"{n:>5}\t{rule}\t{names[rule]}\n")


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _files(n: int) -> str:
    return count(n, "file")


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
        "related": [{"path": r.span.path, "line": r.span.line, "column": r.span.column, "text": r.text} for r in finding.related],
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
    _dump(document, stream)


def json_lines(report: Report, stream: TextIO, quiet: bool = False) -> None:
    """One finding per line, for streaming into other tools; no summary."""
    for finding in report.findings:
        _dump(finding_dict(finding), stream, indent=None)


def _fingerprints(findings: tuple[Finding, ...], path: Callable[[Finding], str] = lambda f: f.span.path) -> Iterator[str]:
    """Line-free fingerprints, made unique when the same finding occurs twice in a file; the
    file is named by `path` (SARIF: from the repository root)."""
    seen: Counter[str] = Counter()
    for finding in findings:
        base = fingerprint(finding, path(finding))
        seen[base] += 1
        yield base if seen[base] == 1 else hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()[:32]


def _sarif_level(severity: Severity) -> str:
    return severity.value  # SARIF's levels include error, warning and note


def _sarif_location(span: Span, root: Path) -> dict[str, object]:
    """A region, its file's URI relative to `root` (`%SRCROOT%`), or absolute if elsewhere."""
    where = Path(os.path.abspath(span.path))
    try:
        artifact = {"uri": quote(where.relative_to(root).as_posix(), errors="surrogateescape"), "uriBaseId": SRCROOT}
    except ValueError:
        artifact = {"uri": quote(where.as_posix(), errors="surrogateescape", safe="/")}
    return {
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": {"startLine": span.line, "startColumn": span.column, "endLine": span.end_line, "endColumn": span.end_column},
        }
    }


def _repository_root() -> Path:
    """What SARIF URIs are relative to: the repository's top (the nearest folder holding `.git`
    from the working directory up), else the working directory. Code scanning resolves them
    against the checkout, so a CI step run in a subfolder must not move them, nor the
    fingerprints made from them."""
    cwd = Path(os.path.abspath(os.getcwd()))
    return repository_root(cwd) or cwd


def _from_root(finding: Finding, root: Path) -> str:
    try:
        return Path(os.path.abspath(finding.span.path)).relative_to(root).as_posix()
    except ValueError:
        return finding.span.path


def _sarif_text(text: str) -> str:
    """Plain text for a SARIF message: a literal bracket or backslash escaped, since
    `[text](n)` is a link (SARIF 2.1.0, 3.11.6)."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _linked(finding: Finding) -> str:
    """The message with each related location it names made a link to it (`[path:line](n)`),
    the only form in which code scanning shows them; one it does not name is appended."""
    text, extra = _sarif_text(finding.message), []
    for number, related in enumerate(finding.related, 1):
        where = _sarif_text(f"{related.span.path}:{related.span.line}")
        at = _unlinked(text, where)
        if at < 0:
            extra.append(f"[{where}]({number})")
        else:
            text = f"{text[:at]}[{where}]({number}){text[at + len(where) :]}"
    return text + (f" (see {', '.join(extra)})" if extra else "")


def _unlinked(text: str, where: str) -> int:
    """Where `where` occurs in `text` outside a link made already, or -1."""
    at = text.find(where)
    while at > 0 and text[at - 1] == "[":
        at = text.find(where, at + 1)
    return at


def sarif(report: Report, stream: TextIO, quiet: bool = False) -> None:
    """SARIF 2.1.0 with the fields GitHub code scanning reads."""
    index = {rule.code: i for i, rule in enumerate(RULES)}
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.why},
            "help": {"text": f"{rule.fix}\n\n{rule.silencing}", "markdown": f"{rule.fix}\n\n{rule.silencing}"},
            "defaultConfiguration": {"level": _sarif_level(rule.severity)},
            **({"helpUri": url} if (url := rule_url(rule.code)) else {}),
        }
        for rule in RULES
    ]
    root = _repository_root()
    results = [
        {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": _sarif_level(finding.severity),
            "message": {"text": _linked(finding)},
            "locations": [_sarif_location(finding.span, root)],
            "relatedLocations": [
                {"id": i, **_sarif_location(related.span, root), "message": {"text": _sarif_text(related.text)}}
                for i, related in enumerate(finding.related, 1)
            ],
            "partialFingerprints": {"metriclint/v1": print_},
        }
        for finding, print_ in zip(report.findings, _fingerprints(report.findings, lambda f: _from_root(f, root)))
    ]
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "metriclint", "version": __version__, "rules": rules}},
                "results": results,
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
            }
        ],
    }
    _dump(document, stream)


def _escape_data(text: str) -> str:
    """`text` as a workflow command's data: `%`, CR and LF as GitHub decodes them (a line
    break stays one in the annotation), any other control character `printable`, as the text
    format writes it, since the command is also a line of the Actions log."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(report: Report, stream: TextIO, quiet: bool = False) -> None:
    """GitHub Actions workflow commands: each finding becomes an annotation on the diff, its
    file named from the repository root (where GitHub looks for it, whatever folder the step ran in)."""
    root = _repository_root()
    for finding in report.findings:
        span = finding.span
        properties = (
            f"file={_escape_property(_from_root(finding, root))},line={span.line},endLine={span.end_line},"
            f"col={span.column},endColumn={span.end_column},title={_escape_property(finding.rule)}"
        )
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}[finding.severity]
        stream.write(readable(f"::{level} {properties}::{_escape_data(finding.message)}\n"))


def gitlab(report: Report, stream: TextIO, quiet: bool = False) -> None:
    """GitLab's Code Quality report (a JSON array of issues), paths from the repository root,
    so that neither they nor the fingerprints GitLab compares across pipelines depend on the
    folder the job ran in."""
    root = _repository_root()
    issues = [
        {
            "description": finding.message,
            "check_name": finding.rule,
            "fingerprint": print_,
            "severity": {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}[finding.severity],
            "location": {"path": _from_root(finding, root), "lines": {"begin": finding.span.line}},
        }
        for finding, print_ in zip(report.findings, _fingerprints(report.findings, lambda f: _from_root(f, root)))
    ]
    _dump(issues, stream)


class Formatter(Protocol):
    def __call__(self, report: Report, stream: TextIO, quiet: bool = False) -> None: ...


FORMATS: dict[str, Formatter] = {
    "text": text,
    "json": json_report,
    "json-lines": json_lines,
    "sarif": sarif,
    "github": github,
    "gitlab": gitlab,
}
