"""What a rule is: its check, its documentation and its examples, in one value.

Each rule is one `Rule` holding its check function, its documentation and its good and bad
examples (tiny projects), the way Fixit rules carry VALID/INVALID cases. Documentation and
behaviour live in one place, so they cannot drift apart.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterator, Literal

from metriclint.base import keys
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import Vocabulary
from metriclint.model import Claim, CodeClaim, CodeFact, Finding, FlagDefault, Mismatch, NameClaim, ReadFailure, Severity, Sighting, Span


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """Everything the checks look at, gathered by the pipeline before any check runs."""

    claims: tuple[Claim, ...]
    registry: Registry | None
    unreadable: tuple[ReadFailure, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()  # tooltip entries shown for a metric they were not written for
    sightings: tuple[Sighting, ...] = ()  # the inventory (language/sightings.py), sorted by place
    vocabulary: Vocabulary | None = None  # the wording `fix` rewrites to; None: findings carry no fix
    code: tuple[CodeClaim, ...] = ()  # what the code computes, with the computing sites
    names: tuple[NameClaim, ...] = ()  # what the names of keys and of the values logged state (language/names.py)
    flags: tuple[FlagDefault, ...] = ()  # the flags the project defines, with their defaults
    naming_flags: frozenset[Span] = frozenset()  # texts that name a flag a placeholder waits for

    def off_by_default(self, name: str) -> FlagDefault | None:
        """Where the flag defined as `name` is off unless given; None when no definition is
        found, or one of them is on by default."""
        found = [f for f in self.flags if f.name == name]
        return found[0] if found and all(f.off for f in found) else None

    def code_facts(self, metric: str, facet: str) -> list[CodeFact]:
        """What the code computes for the facet of every key that can name `metric`'s series."""
        if facet not in self._code_by_facet:
            return []
        index, facts = self._code_by_facet[facet]
        return [fact for key in index.same_metric(metric) for fact in facts[key]]

    def code_facts_at(self, metric: str, facet: str, path: str, line: int) -> list[CodeFact]:
        """What the code computes for the facet of `metric` as it is logged at one line."""
        return [c.fact for c in self._code_by_site.get((path, line), ()) if c.metric == metric and c.fact.facet == facet]

    @cached_property
    def _code_by_site(self) -> dict[tuple[str, int], list[CodeClaim]]:
        grouped: dict[tuple[str, int], list[CodeClaim]] = defaultdict(list)
        for claim in self.code:
            for site in claim.sites:
                grouped[site.path, site.line].append(claim)
        return grouped

    @cached_property
    def _code_by_facet(self) -> dict[str, tuple[keys.KeySet, dict[str, list[CodeFact]]]]:
        """The code facts by facet and metric, each facet's metrics indexed: the checks ask
        about every statement's metric, and there may be tens of thousands."""
        grouped: dict[str, dict[str, list[CodeFact]]] = defaultdict(lambda: defaultdict(list))
        for claim in self.code:
            grouped[claim.fact.facet][claim.metric].append(claim.fact)
        return {facet: (keys.KeySet(by_metric), by_metric) for facet, by_metric in grouped.items()}


@dataclass(frozen=True)
class Example:
    """A tiny project: `files` maps paths to contents; `expect` lists `CODE path:line` lines."""

    files: dict[str, str]
    registry: str | None = None
    expect: tuple[str, ...] = ()
    command: tuple[str, ...] = ("check", ".")  # the live rules' examples run `live-check` on a run the files hold


# What a rule's findings say of the project, which the audit and its formats group them by:
# statements about a metric that disagree, a metric the registry and the code do not both know,
# or the upkeep of the checking itself (stale suppressions, unreadable files).
Kind = Literal["contradiction", "gap", "hygiene"]


@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    name: str
    severity: Severity
    kind: Kind
    summary: str
    why: str
    fix: str
    check: Callable[[Corpus], Iterator[Finding]] | None  # None: a later pipeline stage reports it
    good: tuple[Example, ...] = field(default=())
    bad: tuple[Example, ...] = field(default=())
    by_comment: bool = True  # whether a suppression comment can silence it
    default: bool = True  # False: runs only when `select` names its code in full (as flake8-bugbear's B9 rules)
    command: str = "check"  # the command that reports it: a suppression of a rule another command reports is not stale here

    @property
    def silencing(self) -> str:
        if not self.by_comment:
            return (
                f'Switch it off for some files with `per-file-ignores = {{"glob" = ["{self.code}"]}}`, or '
                f'everywhere with `ignore = ["{self.code}"]`, in [tool.metriclint].'
            )
        return (
            f"Silence one finding with `# metriclint: ignore[{self.code}] reason` on its line (`//` in "
            f"JS/TS, `<!-- -->` in Markdown), a whole file with `ignore-file[{self.code}]`, or the rule with "
            f'`ignore = ["{self.code}"]` in [tool.metriclint].'
        )

    def finding(self, span: Span, message: str, **details: object) -> Finding:
        return Finding(rule=self.code, name=self.name, severity=self.severity, span=span, message=message, **details)  # type: ignore[arg-type]
