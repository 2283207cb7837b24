"""The baseline: findings an old codebase already has, recorded so only new ones are reported.

A finding is named without its line (rule, path, metric, facet, quoted phrase), so edits
elsewhere in a file do not bring baselined findings back. The file is sorted, indented JSON
with one entry per name and a count, so it reads well in code review and rewriting it drops
whatever was fixed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from metriclint.base import locate
from metriclint.base.files import read_regular, replace
from metriclint.base.paths import display
from metriclint.model import ConfigError, Finding, Problem

VERSION = 1
FIELDS = ("rule", "path", "metric", "facet", "phrase")  # a finding's identity, without its line
REWRITE = "rewrite it with --write-baseline"


def identity(finding: Finding, path: str) -> tuple[str, str, str, str, str]:
    phrase = " ".join((finding.phrase or finding.message).lower().split())
    return (finding.rule, path, finding.metric, finding.facet, phrase)


def fingerprint(finding: Finding, path: str | None = None) -> str:
    """A stable hash of the finding's identity, for SARIF and GitLab (no line numbers)."""
    text = "\0".join(identity(finding, finding.span.path if path is None else path))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]  # a name's own bytes


def write(file: Path, findings: list[Finding]) -> None:
    """Record `findings` in `file`, atomically. Raises ConfigError (at --write-baseline) if it
    cannot be written."""
    counts = Counter(identity(f, _relative(f.span.path, file)) for f in findings)
    entries = [
        {"rule": rule, "path": path, "metric": metric, "facet": facet, "phrase": phrase, "count": count}
        for (rule, path, metric, facet, phrase), count in sorted(counts.items())
    ]
    document = json.dumps({"version": VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n"
    try:
        replace(file, document.encode("utf-8", "surrogateescape"))
    except OSError as error:
        raise ConfigError([Problem("--write-baseline", 0, 0, f"cannot write {display(file)}: {error.strerror or error}")]) from None


def hide(file: Path, findings: list[Finding]) -> list[Finding]:
    """The findings the baseline does not account for; each entry hides up to `count` findings."""
    left = _read(file)
    new = []
    for finding in findings:
        key = identity(finding, _relative(finding.span.path, file))
        if left[key] > 0:
            left[key] -= 1
        else:
            new.append(finding)
    return new


def _read(file: Path) -> Counter[tuple[str, str, str, str, str]]:
    shown, text = str(file), ""
    try:
        text = read_regular(file).decode("utf-8", errors="surrogateescape")
        document = json.loads(text)
    except OSError as error:
        raise ConfigError([Problem(shown, 1, 1, f"cannot read the baseline: {error.strerror or error}")]) from None
    except json.JSONDecodeError as error:
        raise ConfigError([Problem(shown, error.lineno, error.colno, f"invalid JSON: {error.msg}")]) from None
    except RecursionError:
        line, column = locate.deepest(text) or (1, 1)
        raise ConfigError([Problem(shown, line, column, "invalid baseline: nested too deeply")]) from None
    problems = _problems(document)
    if problems:
        from metriclint.base import places  # only for a bad baseline

        where = places.in_json(text)
        raise ConfigError(
            [
                Problem(shown, (place := where.value(path)).line, place.column, message.replace("{value}", place.written or "?"))
                for path, message in problems
            ]
        )
    return Counter({tuple(e[k] for k in FIELDS): e["count"] for e in document["findings"]})


def _problems(document: object) -> list[tuple[tuple[str | int, ...], str]]:
    """What makes `document` no baseline, each with the path of the value it is about."""
    if not isinstance(document, dict) or "version" not in document:
        return [((), f'not a metriclint baseline (expected "version": {VERSION}); {REWRITE}')]
    if type(document["version"]) is not int or document["version"] != VERSION:
        return [(("version",), f'not a metriclint baseline (expected "version": {VERSION}, not {{value}}); {REWRITE}')]
    entries = document.get("findings")
    if not isinstance(entries, list):
        return [(("findings",), f"'findings' must be a list of entries, not {{value}}; {REWRITE}")]
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict):
            problems.append((("findings", number), f"a baseline entry must be an object, not {{value}}; {REWRITE}"))
            continue
        missing = [k for k in (*FIELDS, "count") if k not in entry]
        if missing:
            problems.append((("findings", number), f"a baseline entry needs {', '.join(missing)}; {REWRITE}"))
        problems += [
            (("findings", number, k), f"'{k}' must be a string, not {{value}}; {REWRITE}")
            for k in FIELDS
            if k in entry and not isinstance(entry[k], str)
        ]
        if "count" in entry and not (type(entry["count"]) is int and entry["count"] > 0):
            problems.append((("findings", number, "count"), f"'count' must be a positive whole number, not {{value}}; {REWRITE}"))
    return problems


def _relative(path: str, file: Path) -> str:
    """Paths are kept relative to the baseline's folder, whichever folder metriclint runs in."""
    try:
        return Path(path).resolve().relative_to(file.resolve().parent).as_posix()
    except ValueError:
        return path
