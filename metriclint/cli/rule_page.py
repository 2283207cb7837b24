"""`metriclint rule CODE`: a rule's page in the terminal, the page the docs site shows, as
`ruff rule` prints its rules'; `--all` prints every rule's, `--output-format json` their fields."""

from __future__ import annotations

import json

import click

from metriclint.checks import RULES, Rule
from metriclint.cli.status import usage_error
from metriclint.model import Problem


@click.command("rule")
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="Print every rule's page.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(code: str | None, every: bool, output_format: str) -> None:
    """Print the page of rule CODE (ML001): what it finds, why, how to fix and silence it, its
    examples and what metriclint reports on them."""
    if every == (code is not None):
        raise click.UsageError("name one rule (`metriclint rule ML001`) or pass --all")
    chosen = list(RULES) if every else [_rule(code or "")]
    from metriclint.docs import pages, rule_pages  # runs each bad example: only here

    messages = pages.all_messages(chosen)
    shown = {rule.code: rule_pages.page(rule, messages[rule.code]) for rule in chosen}
    if output_format == "json":
        documents = [rule_pages.document(rule, shown[rule.code]) for rule in chosen]
        click.echo(json.dumps(documents if every else documents[0], indent=2))
    else:
        click.echo("\n".join(shown.values()), nl=False)


def _rule(code: str) -> Rule:
    found = next((r for r in RULES if r.code == code.upper()), None)
    if found is None:
        usage_error([Problem("metriclint", 0, 0, f"unknown rule '{code}'; `metriclint rules` lists them")])
    return found
