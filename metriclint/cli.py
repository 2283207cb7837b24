"""The command line. Exit codes: 0 clean, 1 error findings, 2 usage, config or registry error."""

from __future__ import annotations

import sys

import click

from metriclint import __version__, config, engine
from metriclint.formats import FORMATS
from metriclint.model import ConfigError, Severity

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="metriclint")
def main() -> None:
    """Check that what your code, docs and dashboards say a metric means is what it is."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--registry", metavar="PATH", help="The semantics registry (default: metrics.yaml in the project root).")
@click.option("--config", "config_file", metavar="FILE", help="A TOML file with a [tool.metriclint] table.")
@click.option("--format", "output_format", type=click.Choice(sorted(FORMATS)), default="text", show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary.")
def check(paths: tuple[str, ...], registry: str | None, config_file: str | None, output_format: str, quiet: bool) -> None:
    """Check PATHS (default: the current directory) for contradicting statements about metrics."""
    try:
        settings = config.load(paths, config_file, registry)
        report = engine.run(settings)
    except ConfigError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(EXIT_USAGE)
    FORMATS[output_format](report, sys.stdout, quiet)
    sys.exit(EXIT_FINDINGS if any(f.severity is Severity.ERROR for f in report.findings) else EXIT_CLEAN)
