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
from metriclint.base.paths import display
from metriclint.base.files import read_regular, replace
from metriclint.model import ConfigError, Finding, Problem

VERSION = 1
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
    fields = ("rule", "path", "metric", "facet", "phrase")
    if not isinstance(document, dict) or document.get("version") != VERSION:
        raise ConfigError([Problem(shown, 1, 1, f'not a metriclint baseline (expected "version": {VERSION}); {REWRITE}')])
    entries = document.get("findings")
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and all(isinstance(e.get(k), str) for k in fields) and isinstance(e.get("count"), int) for e in entries
    ):
        raise ConfigError([Problem(shown, 1, 1, f"baseline entries need rule, path, metric, facet, phrase and count; {REWRITE}")])
    return Counter({tuple(e[k] for k in fields): e["count"] for e in entries})


def _relative(path: str, file: Path) -> str:
    """Paths are kept relative to the baseline's folder, whichever folder metriclint runs in."""
    try:
        return Path(path).resolve().relative_to(file.resolve().parent).as_posix()
    except ValueError:
        return path
