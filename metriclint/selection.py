"""Which rules run where, and how severe their findings are: `select`, `ignore`,
`per-file-ignores` and `severity`, from the config and the command line.

A selector is a rule code or a prefix of codes (`ML0` is every ML0xx rule), as in ruff.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from metriclint.checks import RULES
from metriclint.discover import matches
from metriclint.model import Finding, Severity

CODES = tuple(rule.code for rule in RULES)


def known(selector: str) -> bool:
    return any(code.startswith(selector) for code in CODES) and bool(selector)


@dataclass(frozen=True)
class Selection:
    root: Path  # per-file-ignores globs are relative to it
    select: tuple[str, ...] = ("ML",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()

    def active(self, code: str, path: str) -> bool:
        """Whether rule `code` runs on the file shown as `path`."""
        if not _matches(code, self.select) or _matches(code, self.ignore):
            return False
        return not any(_matches(code, codes) and matches(Path(path), (glob,), self.root) for glob, codes in self.per_file_ignores)

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """The findings of active rules, at their configured severity."""
        return [self._severity(f) for f in findings if self.active(f.rule, f.span.path)]

    def _severity(self, finding: Finding) -> Finding:
        chosen = [(len(selector), level) for selector, level in self.severity if finding.rule.startswith(selector)]
        if not chosen:
            return finding
        return replace(finding, severity=max(chosen, key=lambda item: item[0])[1])


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(code.startswith(selector) for selector in selectors)

