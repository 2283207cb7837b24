"""The text a code action inserts: a suppression comment in the file's own comment syntax, or
a new entry in the registry. Pure functions of a file's text, so each is tested on its own.

Positions are 1-based lines and character columns, as the engine counts them.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from dataclasses import dataclass

from metriclint.knowledge.registry import Registry
from metriclint.model import Finding

_DIRECTIVE = re.compile(r"metriclint:\s*ignore\[")
_TOP_KEY = re.compile(r"[^\s#]")


@dataclass(frozen=True)
class Insertion:
    line: int
    column: int
    text: str


def suppression(path: str, text: str, finding: Finding) -> Insertion | None:
    """`metriclint: ignore[CODE]` where the file's source reads it (see README, Suppressions);
    None for a kind of file whose source reads no directives (JS/TS, JSON, YAML)."""
    lines = text.splitlines()
    if path.endswith(".py"):
        line = _closing_line(text, finding.span.line)
        return _merged(lines, line, finding.rule) or Insertion(line, len(lines[line - 1]) + 1, f"  # metriclint: ignore[{finding.rule}]")
    if path.endswith((".md", ".markdown")):
        span = finding.span
        return _merged(lines, span.line, finding.rule) or Insertion(
            span.end_line, span.end_column, f" <!-- metriclint: ignore[{finding.rule}] -->"
        )
    return None


def _merged(lines: list[str], line: int, code: str) -> Insertion | None:
    """Into a directive already on the line, since a comment holds one directive."""
    match = _DIRECTIVE.search(lines[line - 1]) if line <= len(lines) else None
    return Insertion(line, match.end() + 1, f"{code}, ") if match else None


def _closing_line(text: str, line: int) -> int:
    """The line a Python string spanning `line` closes on (a directive inside the string would
    be text), or `line` itself; the line as given when the file does not tokenize (mid-edit)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING and token.start[0] <= line <= token.end[0]:
                return token.end[0]
            if token.start[0] > line:
                break
    except (tokenize.TokenError, SyntaxError):
        pass
    return line


def registry_entry(text: str, registry: Registry, key: str) -> Insertion:
    """`key` as a new, empty metric at the end of the registry's `metrics:` block (a new block
    at the end of the file if there is none); its description and semantics are the author's."""
    lines = text.splitlines()
    entry = f"{json.dumps(key)}:\n"
    start = next((i for i, line in enumerate(lines) if re.match(r"metrics\s*:\s*(#.*)?$", line)), None)
    if start is None:
        return _appended(text, lines, f"metrics:\n  {entry}")
    indent = " " * (next(iter(registry.metrics.values())).span.column - 1 if registry.metrics else 2)
    after = next((i for i in range(start + 1, len(lines)) if _TOP_KEY.match(lines[i])), None)
    return Insertion(after + 1, 1, indent + entry) if after is not None else _appended(text, lines, indent + entry)


def _appended(text: str, lines: list[str], inserted: str) -> Insertion:
    """`inserted` at the end of the file, after a line break if its last line has none."""
    if not text or text.endswith(("\n", "\r")):
        return Insertion(len(lines) + 1, 1, inserted)
    return Insertion(len(lines), len(lines[-1]) + 1, "\n" + inserted)
