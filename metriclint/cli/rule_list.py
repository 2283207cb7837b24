"""`metriclint rules` lists the rules and `metriclint explain CODE` explains one in the terminal,
from the rules themselves (checks/)."""

from __future__ import annotations

import sys

import click

from metriclint.checks import RULES, Example, Rule
from metriclint.cli.status import EXIT_USAGE


@click.command()
def rules() -> None:
    """List every rule: code, name, default severity, what it finds."""
    for rule in RULES:
        click.echo(f"{rule.code}  {rule.name:<24} {rule.severity.value:<8} {rule.summary}")


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Explain one rule: what it finds, why it matters, examples, how to fix or silence it."""
    rule = next((r for r in RULES if r.code == code.upper()), None)
    if rule is None:
        click.echo(f"unknown rule '{code}'; known rules: {', '.join(r.code for r in RULES)}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(_explanation(rule), nl=False)


def _explanation(rule: Rule) -> str:
    parts = [
        f"{rule.code} {rule.name} ({rule.severity.value})\n\n{rule.summary}\n",
        f"Why it matters\n\n{rule.why}\n",
        *(f"Bad example\n\n{_example(e)}" for e in rule.bad[:1]),
        *(f"Good example\n\n{_example(e)}" for e in rule.good[:1]),
        f"How to fix it\n\n{rule.fix}\n\n{rule.silencing}\n",
    ]
    return "\n".join(parts)


def _example(example: Example) -> str:
    files = dict(example.files)
    if example.registry is not None:
        files["metrics.yaml"] = example.registry
    shown = "".join(f"  # {name}\n" + "".join(f"    {line}\n" for line in text.splitlines()) for name, text in files.items())
    ran = f"  $ metriclint {' '.join(example.command)}\n" if example.command != ("check", ".") else ""
    reported = "".join(f"  -> {line}\n" for line in example.expect)
    return shown + ran + reported
