"""`metriclint live-check`: what the texts and the registry say, held against a run's values.

Needs the `live` extra; the live stage is imported only when the command runs, so `check`
loads none of it."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import click

from metriclint.cli.project import ProjectOptions, analyse, fail_on_option, progress_bar, project_options, rule_codes
from metriclint.cli.status import exit_for, usage_error
from metriclint.model import Problem, Severity
from metriclint.report.formats import FORMATS


@click.command("live-check")
@project_options()
@click.option(
    "--run",
    "runs",
    multiple=True,
    required=True,
    metavar="RUN",
    help="A run's file or folder (TensorBoard, trainer_state.json, W&B, MLflow, JSON lines, a text log); repeatable.",
)
@click.option("--fact", "facts", multiple=True, metavar="KEY=VALUE", help="A fact a test needs (max_grad_norm=1.0); repeatable.")
@click.option("--step-key", metavar="KEY", help="The JSON-lines field that holds the step (default: step, _step, global_step, ...).")
@click.option("--rank-key", default="rank", show_default=True, metavar="KEY", help="The JSON-lines field that holds the rank.")
@click.option("--format", "output_format", type=click.Choice(list(FORMATS)), default="text", show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no progress bar.")
@click.option("--select", multiple=True, metavar="CODES", help="Run only these rules; ML014 (undetermined) only when named.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules, in addition to the config's `ignore`.")
@fail_on_option
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--output-file", "-o", metavar="FILE", help="Write the report to FILE instead of printing it.")
@click.option("--dask", metavar="ADDRESS", help="Read each run's files on this Dask scheduler (`local:N`: a local cluster of N workers).")
def command(
    project: ProjectOptions,
    runs: tuple[str, ...],
    facts: tuple[str, ...],
    step_key: str | None,
    rank_key: str,
    output_format: str,
    quiet: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fail_on: str,
    exit_zero: bool,
    output_file: str | None,
    dask: str | None,
) -> None:
    """Hold what PATHS say about their metrics against the values the runs logged."""
    try:
        import google_crc32c  # noqa: F401 - the extra's one compiled dependency

        from metriclint.live import check
        from metriclint.live import facts as fact_sources
    except ImportError as error:
        usage_error([Problem("metriclint live-check", 0, 0, f"needs {error.name}, which is not installed: pip install 'metriclint[live]'")])
    missing = [run for run in runs if not Path(run).exists()]
    if missing:
        usage_error([Problem("--run", 0, 0, f"'{run}' does not exist") for run in missing])
    given, problems = fact_sources.given(facts)
    if problems:
        usage_error(problems)
    config = project.settings(select=rule_codes(select), ignore=rule_codes(ignore))
    with progress_bar(quiet) as bar:
        analysis = analyse(config, bar)
    if dask is not None:
        try:
            from dask import distributed  # noqa: F401
        except ImportError:
            usage_error([Problem("--dask", 0, 0, "needs dask.distributed, which is not installed: pip install 'metriclint[live-scale]'")])
    report = check.check(analysis, config, check.Runs(runs, tuple(given), step_key, rank_key, dask))
    kept = io.StringIO()
    FORMATS[output_format](report, kept if output_file else sys.stdout, quiet)
    if output_file:
        from metriclint.cli.commands import _write

        _write(Path(output_file), kept.getvalue(), "--output-file")
    exit_for(() if exit_zero else report.findings, Severity(fail_on))
