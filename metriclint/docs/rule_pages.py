"""A rule's page, from the rule itself: what it finds, why it matters, how to fix and silence
it, and its bad and good examples with what metriclint reports on them. The docs site shows
it at `rules/<CODE>/` and `metriclint rule CODE` prints it, as `ruff rule` prints its rules'."""

from __future__ import annotations

from typing import Sequence

from metriclint.checks import Example, Rule
from metriclint.docs.examples import project_files
from metriclint.docs.markdown import cell, fenced, language_of


def page(rule: Rule, messages: Sequence[Sequence[str]]) -> str:
    """The page of `rule`; `messages[i]` are the lines its i-th bad example reports."""
    parts = [
        f"# {rule.code} {rule.name}\n",
        _facts(rule),
        f"{rule.summary}\n",
        f"## Why it matters\n\n{rule.why}\n",
        f"## How to fix it\n\n{rule.fix}\n",
        f"## How to silence it\n\n{rule.silencing}\n",
        "## Examples\n",
        *(_example("Bad", example, lines) for example, lines in zip(rule.bad, messages)),
        *(_example("Good", example, ()) for example in rule.good),
    ]
    return "\n".join(parts)


def _facts(rule: Rule) -> str:
    command = f"`metriclint {rule.command}`"
    default = "on by default" if rule.default else f"off by default: `--select {rule.code}` turns it on"
    return f"Severity: **{rule.severity.value}** · reported by {command} · {default}.\n"


def _example(kind: str, example: Example, lines: Sequence[str]) -> str:
    files = "\n".join(f"`{name}`:\n\n{fenced(text, language_of(name))}" for name, text in project_files(example).items())
    command = f"metriclint {' '.join(example.command)}"
    said = f"`{command}` reports:\n\n{fenced(chr(10).join(lines), 'text')}" if lines else f"`{command}` reports nothing.\n"
    return f"### {kind}\n\n{files}\n{said}"


def index(rules: Sequence[Rule]) -> str:
    """The rules reference: one row per rule, linked to its page."""
    rows = "".join(f"| [{r.code}]({r.code}.md) | {r.name} | {r.severity.value} | {cell(r.summary)} |\n" for r in rules)
    return (
        "# Rules\n\n"
        "Every rule, generated from its definition in `metriclint/checks/` (one module per rule). "
        "`metriclint rules` prints this list and `metriclint rule CODE` a rule's page; a rule's "
        "page says why it matters, how to fix and silence it, and what it reports on its examples.\n\n"
        "| Code | Name | Severity | Finds |\n|---|---|---|---|\n" + rows
    )


def document(rule: Rule, shown: str) -> dict[str, object]:
    """`rule` as `metriclint rule --output-format json` gives it, `shown` its page."""
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "why": rule.why,
        "fix": rule.fix,
        "silencing": rule.silencing,
        "default": rule.default,
        "command": rule.command,
        "explanation": shown,
    }
