"""`metriclint generate`: files written from the registry, so a dashboard or a docs page
imports the truth instead of keeping its own copy."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metriclint import settings
from metriclint.authoring import generate
from metriclint.base import files
from metriclint.base.paths import display
from metriclint.cli.project import config_files, config_option, registry_option
from metriclint.cli.status import EXIT_CLEAN, EXIT_FINDINGS, usage_error, usage_errors
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import ConfigError, Problem


@click.group(name="generate")
def group() -> None:
    """Write files from the registry: a dashboard's tooltip table, a Markdown table of metrics."""


_output_option = click.option("--output", "-o", metavar="FILE", help="Write to FILE (default: print).")
_check_option = click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when FILE is out of date (for CI).")


@group.command(name="tooltips")
@click.option("--format", "fmt", type=click.Choice(generate.FORMATS), required=True)
@_output_option
@_check_option
@registry_option
@config_option
def generate_tooltips(fmt: str, output: str | None, check: bool, registry: str | None, config: tuple[str, ...]) -> None:
    """The dashboard's description table (key -> description) from the registry."""
    _emit(generate.tooltips(_registry(registry, config), fmt), output, check)


@group.command(name="docs")
@_output_option
@_check_option
@registry_option
@config_option
def generate_docs(output: str | None, check: bool, registry: str | None, config: tuple[str, ...]) -> None:
    """A Markdown table of the registry (metric, description, facets); in an existing page, the
    region between `<!-- metriclint:begin -->` and `<!-- metriclint:end -->`."""
    loaded = _registry(registry, config)
    page = _read(Path(output)) if output is not None and Path(output).exists() else None
    try:
        _emit(generate.docs(loaded, page), output, check)
    except generate.RegionError as error:
        usage_error([Problem(str(output), 1, 1, str(error))])


def _registry(registry: str | None, config: tuple[str, ...]) -> Registry:
    config_file, overrides = config_files(config)
    with usage_errors():
        loaded = settings.load((), config_file, registry, overrides=overrides)
        if loaded.registry is None:
            raise ConfigError([Problem("metriclint", 0, 0, "no registry found: write metrics.yaml or pass --registry")])
        return registry_module.load(loaded.registry, display(loaded.registry), load_builtin()[0], loaded.max_file_size)[0]


def _read(path: Path) -> str:
    try:
        return files.read_text(path)
    except OSError as error:
        usage_error([Problem(str(path), 1, 1, f"cannot read: {error.strerror or error}")])
    except UnicodeDecodeError as error:
        usage_error([Problem(str(path), 1, 1, f"cannot read: {error}")])


def _emit(content: str, output: str | None, check: bool) -> None:
    """Print, write, or (with --check) compare with what FILE holds."""
    if output is None:
        if check:
            usage_error([Problem("metriclint", 0, 0, "--check needs --output FILE")])
        click.echo(content, nl=False)
        return
    path = Path(output)
    current = _read(path) if path.exists() else ""
    if check:
        if current == content:
            click.echo(f"{output} is up to date.", err=True)
            sys.exit(EXIT_CLEAN)
        import difflib  # only `--check` shows a difference

        diff = difflib.unified_diff(current.splitlines(keepends=True), content.splitlines(keepends=True), f"a/{output}", f"b/{output}")
        click.echo("".join(diff), nl=False)
        click.echo(f"{output} is out of date; run the same command without --check.", err=True)
        sys.exit(EXIT_FINDINGS)
    if current != content:
        with usage_errors():
            path = settings.write_target(output, "--output")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            files.replace(path, content.encode("utf-8"))
        except OSError as error:
            usage_error([Problem(output, 1, 1, f"cannot write: {error.strerror or error}")])
    click.echo(f"Wrote {output}.", err=True)
