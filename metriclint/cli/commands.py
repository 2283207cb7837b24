"""The commands. Each one that analyses a project takes the same project options
(project.py), and ends through status.py; process-wide settings (signals, the output streams'
error handling, pausing garbage collection) are made here and in project.py, not in the engine.
"""

from __future__ import annotations

import dataclasses
import io
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metriclint import __version__, baseline, engine, settings
from metriclint.base import files, signals
from metriclint.base.paths import display
from metriclint.cli import generate, live, rule_list, rule_page
from metriclint.cli.project import (
    ProjectOptions,
    analyse,
    collection_paused,
    combined_report,
    fail_on_option,
    merged,
    notice_no_registry,
    progress_bar,
    project_options,
    rule_codes,
    shown_settings,
    warn_unused,
)
from metriclint.cli.status import Guarded, exit_for, usage_error, usage_errors
from metriclint.extract import prune
from metriclint.model import Finding, Problem, Report, Severity
from metriclint.report import formats, once
from metriclint.report.formats import FORMATS, count

if TYPE_CHECKING:
    from metriclint.fix.rewrite import FileFix

# `fix`, `init`, `audit` and `explain-metric` import what only they use when they run, so that
# `check` (in pre-commit, every commit) does not load it. The audit's formats are named here for
# that reason (report/audit_formats.py renders them; tests/test_cli.py holds the two lists equal).
AUDIT_FORMAT_NAMES = ("text", "json", "markdown", "html")


@click.group(cls=Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="metriclint")
@click.option("--verbose", is_flag=True, help="On an internal error, print its traceback (so does METRICLINT_DEBUG=1).")
def main(verbose: bool) -> None:
    """Check that what your code, docs and dashboards say a metric means is what it is."""
    if threading.current_thread() is threading.main_thread():
        signals.install()  # unwind, so workers and temporary files are cleaned up
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not UTF-8 is printed as its own bytes, as `ls` does, not a traceback.
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="surrogateescape")


@main.command()
@project_options()
@click.option("--format", "--output-format", "output_format", type=click.Choice(list(FORMATS)), default="text", show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no progress bar.")
@click.option("--select", multiple=True, metavar="CODES", help="Run only these rules (codes or prefixes, comma-separated).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Run these rules too, besides the selected ones.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules, in addition to the config's `ignore`.")
@click.option("--fix", "fix_first", is_flag=True, help="Apply the fixes `metriclint fix` makes, then report what is left.")
@click.option("--show-settings", is_flag=True, help="Print the settings each project is checked with, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be checked, and exit.")
@fail_on_option
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has, instead of the findings.")
@click.option("--output-file", "-o", metavar="FILE", help="Write the report to FILE instead of printing it.")
@click.option("--baseline", "baseline_file", metavar="FILE", help="Hide the findings recorded in FILE; report only new ones.")
@click.option("--write-baseline", metavar="FILE", help="Record the current findings in FILE and exit 0.")
@click.option(
    "--changed-only",
    is_flag=True,
    help="PATHS are changed files (pre-commit): read the whole project, report findings touching them.",
)
@click.option(
    "--stdin-filename",
    metavar="PATH",
    help="With PATHS `-`: check the project as if PATH held standard input (an editor's buffer); report findings touching PATH.",
)
def check(
    project: ProjectOptions,
    output_format: str,
    quiet: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    fix_first: bool,
    show_settings: bool,
    show_files: bool,
    fail_on: str,
    exit_zero: bool,
    statistics: bool,
    output_file: str | None,
    baseline_file: str | None,
    write_baseline: str | None,
    changed_only: bool,
    stdin_filename: str | None,
) -> None:
    """Check PATHS (default: the current directory) for contradicting statements about metrics."""
    buffer = None
    stdin = stdin_filename is not None
    if (stdin or "-" in project.paths) and not (stdin and project.paths == ("-",)):
        raise click.UsageError("`-` (standard input) and --stdin-filename PATH go together, with no other PATHS")
    if fix_first and (stdin or write_baseline):
        raise click.UsageError("--fix writes the files: not with --stdin-filename or --write-baseline")
    if stdin_filename is not None:
        project, changed_only = dataclasses.replace(project, paths=(stdin_filename,)), True
        buffer = (Path(stdin_filename), sys.stdin.buffer.read())
    configs = project.each(
        select=rule_codes(select),
        extend_select=rule_codes(extend_select),
        ignore=rule_codes(ignore),
        baseline=None if write_baseline else baseline_file,
        changed_only=changed_only,
    )
    with usage_errors():
        report_file = settings.write_target(output_file, "--output-file") if output_file else None
        baseline_target = settings.write_target(write_baseline, "--write-baseline") if write_baseline else None
    if show_settings or show_files:
        for config in configs:
            click.echo("\n".join(shown_settings(config) if show_settings else [display(f) for f in engine.files(config)]))
        exit_for(())
    if fix_first:
        fixed = _fixes(project, write=True)
        click.echo(f"Fixed {count(len(fixed.fixed), 'finding')} in {count(fixed.files, 'file')}.", err=True)
    with progress_bar(quiet) as bar:
        report, shown = combined_report(configs, bar, once.hook_run() if changed_only and buffer is None else None, buffer)
    if buffer is not None:  # an editor places findings in the buffer it sent, so only those, as ruff
        report = shown = _in_file(report, buffer[0])
    if baseline_target is not None:
        with usage_errors():
            baseline.write(baseline_target, list(report.findings))
        click.echo(f"Recorded {count(len(report.findings), 'finding')} in {write_baseline}.", err=True)
        exit_for(())
    kept = io.StringIO()
    out = kept if output_file else sys.stdout
    if statistics:
        formats.statistics(shown, out)
    else:
        FORMATS[output_format](shown, out, quiet)
    if report_file is not None:
        _write(report_file, kept.getvalue(), "--output-file")
    if not quiet:
        notice_no_registry(configs)
    exit_for(() if exit_zero else report.findings, Severity(fail_on))


@main.command(name="audit")
@project_options()
@click.option("--format", "--output-format", "output_format", type=click.Choice(AUDIT_FORMAT_NAMES), default="text", show_default=True)
@click.option("--metric", metavar="KEY", help="Show only this metric (a key or a registry alias).")
@click.option("--output-file", "-o", metavar="FILE", help="Write the audit to FILE instead of printing it.")
def audit_command(project: ProjectOptions, output_format: str, metric: str | None, output_file: str | None) -> None:
    """Show, for every metric in PATHS, what each source says it means, and where they disagree."""
    from metriclint.report import audit
    from metriclint.report.audit_formats import AUDIT_FORMATS

    with progress_bar() as bar:
        result = audit.build(analyse(project.settings(), bar, findings_only=True), only=metric)
    if metric is not None and not result.metrics:
        usage_error([Problem("--metric", 0, 0, _unknown_metric(metric))])
    with usage_errors():
        target = settings.write_target(output_file, "--output-file") if output_file else None
    kept = io.StringIO()
    AUDIT_FORMATS[output_format](result, kept if target is not None else sys.stdout)
    if target is not None:
        _write(target, kept.getvalue(), "--output-file")
    exit_for(f for m in result.metrics for f in m.findings)


def _in_file(report: Report, path: Path) -> Report:
    """The report of one file: its findings only (not those whose other side it holds), counted as one file."""
    named = display(path)
    return Report(tuple(f for f in report.findings if f.span.path == named), 1)


def _write(target: Path, content: str, option: str) -> None:
    """Write `content` to `target` atomically; a usage error at `option` if it cannot be."""
    try:
        files.replace(target, content.encode("utf-8", "surrogateescape"))
    except OSError as error:
        usage_error([Problem(option, 0, 0, f"cannot write {display(target)}: {error.strerror or error}")])


def _unknown_metric(key: str) -> str:
    return f"no metric '{key}' is registered, logged or named in the checked files"


@main.command()
@project_options()
@click.option(
    "--keys",
    "list_keys",
    is_flag=True,
    help="Also list each key the code logs: where, and what logs it through which of the project's functions.",
)
def sources(project: ProjectOptions, list_keys: bool) -> None:
    """List the tooltip tables read under PATHS: path, kind, table, match mode, entries, and why."""
    config = project.settings()
    with usage_errors(), progress_bar() as bar:
        collection = engine.collect(config, bar, pause=collection_paused)
    warn_unused(config)
    for use in sorted(collection.uses if list_keys else (), key=lambda use: (use.key, use.span)):
        if use.span.path not in collection.tests and not use.from_keyword:
            click.echo(f"{use.key}\tlogged\t{use.span.path}:{use.span.line}\t{use.sink or 'a dict key shaped like a metric key'}")
    for binding in collection.bindings:
        table = binding.table
        click.echo(f"{table.path}\t{table.kind}\t{table.name or '/'}\t{binding.mode}\t{len(table.entries)} entries\t{binding.why}")
    texts = sum(1 for e in collection.extractions if e.mentions)
    click.echo(f"{len(collection.bindings)} tooltip tables; {texts} files with docstrings or comments; {len(collection.files)} files read.")


def _written(rewrite: FileFix, configs: list[settings.Config], analyses: list[engine.Analysis]) -> str:
    """Write the rewrite, only over bytes that read as the ones analysed; returns why it was
    not written, or ""."""
    path = Path(rewrite.path)
    if not any(engine.unchanged(a.collection, config, path, rewrite.original) for config, a in zip(configs, analyses)):
        return "the file changed since it was checked; not written (run fix again)"
    from metriclint.fix import rewrite as fixing

    return fixing.write(rewrite, [config.root for config in configs])


@dataclasses.dataclass(frozen=True)
class _Fixes:
    rewrites: list[FileFix]
    fixed: list[Finding]
    unfixed: list[tuple[Finding, str]]  # with why: the rule has no fix, the phrase cannot be rewritten, the file was not written
    files: int  # written


def _fixes(project: ProjectOptions, write: bool) -> _Fixes:
    """The rewrites `fix` makes under the project's PATHS, written when `write`."""
    from metriclint.fix import rewrite as fixing

    with usage_errors():  # a link named that leads out of its project: nothing is written
        for path in project.paths:
            settings.write_target(path)
    configs = project.each()
    with progress_bar() as bar:
        analyses = [analyse(config, bar) for config in configs]
    rewrites, unfixed = fixing.plan(merged([a.report for a in analyses]).findings)
    fixed, files = [], 0
    for rewrite in rewrites:
        problem = _written(rewrite, configs, analyses) if write else "--diff"
        if problem:
            unfixed += [(f, problem) for f in rewrite.fixed]
        else:
            fixed += rewrite.fixed
            files += 1
    return _Fixes(rewrites, fixed, unfixed, files)


@main.command()
@project_options()
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of the fixes and write nothing.")
def fix(project: ProjectOptions, show_diff: bool) -> None:
    """Rewrite each contradicting phrase under PATHS to the registry's wording (ML001).

    Exits 1 while findings remain that no fix settled."""
    done = _fixes(project, write=not show_diff)
    rewrites, fixed, unfixed, files = done.rewrites, done.fixed, done.unfixed, done.files
    if show_diff:
        for rewrite in rewrites:
            click.echo(rewrite.diff, nl=False)
    verb = "would fix" if show_diff else "fixed"
    for finding in fixed if not show_diff else [f for r in rewrites for f in r.fixed]:
        assert finding.fix is not None
        shown = f'{finding.span}: {finding.rule} {verb} "{finding.fix.phrase}" -> "{finding.fix.replacement}" ({finding.metric})'
        click.echo(shown, err=show_diff)
    for finding, why in sorted(unfixed, key=lambda item: item[0].sort_key):
        if finding.fix is not None and why != "--diff":
            click.echo(f"{finding.span}: {finding.rule} not fixed ({why}): {finding.message}", err=show_diff)
    others = sum(1 for finding, _ in unfixed if finding.fix is None)
    if others:
        click.echo(f"{count(others, 'other finding')} of rules with no automatic fix; `metriclint check` lists them.", err=show_diff)
    if show_diff:
        planned, left = [f for r in rewrites for f in r.fixed], [f for f, why in unfixed if why != "--diff"]
        summary = f"Would fix {count(len(planned), 'finding')} in {count(len(rewrites), 'file')}; {count(len(left), 'finding')} left."
    else:
        summary = f"Fixed {count(len(fixed), 'finding')} in {count(files, 'file')}; {count(len(unfixed), 'finding')} left."
    click.echo(summary, err=show_diff)
    exit_for(f for f, _ in unfixed)


@main.command()
@project_options(registry=False)
@click.option("--output", "-o", metavar="FILE", help="Where to write the draft (default: metrics.yaml in the project root).")
@click.option("--force", is_flag=True, help="Overwrite an existing registry.")
def init(project: ProjectOptions, output: str | None, force: bool) -> None:
    """Draft a registry from PATHS: every logged key, aliases, descriptions, agreed semantics,
    and comments where the texts disagree."""
    from metriclint.authoring import hints
    from metriclint.authoring import init as drafting

    config = project.settings()
    with usage_errors():
        target = settings.write_target(output or str(config.root / settings.DEFAULT_REGISTRY), "--output" if output else "metriclint")
    if target.exists() and not force:
        usage_error([Problem(display(target), 1, 1, "a registry already exists; pass --force to overwrite it")])
    with progress_bar() as bar:
        analysis = analyse(dataclasses.replace(config, registry=None), bar)  # a draft is what the project says without one
    entries = drafting.draft(analysis)
    try:
        files.replace(target, drafting.render(entries, analysis.report.files_checked).encode("utf-8"))
    except OSError as error:
        usage_error([Problem(display(target), 1, 1, f"cannot write: {error.strerror or error}")])
    disputes = sum(len(e.disputes) for e in entries)
    settled = sum(1 for e in entries if e.semantics)
    click.echo(
        f"Wrote {display(target)}: {count(len(entries), 'metric')}, {settled} with semantics, {count(disputes, 'disagreement')} to settle."
    )
    for unfollowed in hints.unfollowed_helpers(analysis.collection):
        click.echo(hints.hint(unfollowed))


@main.command("explain-metric")
@click.argument("key")
@project_options()
def explain_metric(key: str, project: ProjectOptions) -> None:
    """Show what the registry, the code (with each computing site) and the texts say metric KEY is."""
    from metriclint.report import audit
    from metriclint.report.metric import describe

    with progress_bar() as bar:
        analysis = analyse(project.settings(), bar, findings_only=True)
    lines = describe(audit.build(analysis, only=key), key)
    if not lines:  # a usage error, as in `audit --metric`
        usage_error([Problem("metriclint", 0, 0, _unknown_metric(key))])
    click.echo("\n".join(lines))


@main.command()
@click.argument("path", default=".", type=click.Path(exists=True, file_okay=False))
def clean(path: str) -> None:
    """Remove the cache folder of the project PATH is in (default: the current directory), and
    those of the projects inside it."""
    with usage_errors():
        config = settings.with_speed(settings.load((path,), None, None), None, None, False, checked=False)
    assert config.cache_dir is not None
    found: dict[Path, Path] = {}  # the same folder may be found both ways
    for folder in [config.cache_dir, *prune.caches_under(Path(path))]:
        found.setdefault(folder.resolve(), folder)
    caches = [folder for folder in found.values() if prune.is_cache(folder)]
    for folder in found.values():
        if folder.exists() and folder not in caches:
            click.echo(f"warning: {display(folder)} is not a metriclint cache folder; left alone", err=True)
    removed = []
    for folder in caches:
        if prune.remove(folder):
            removed.append(folder)
            click.echo(f"Removed {display(folder)}")
        else:
            click.echo(f"warning: {display(folder)} holds files that are not metriclint's; removed metriclint's only", err=True)
    if not caches:
        click.echo("No cache to remove.")


@main.command()
def server() -> None:
    """Run the language server on stdin and stdout, for editors (needs `pip install 'metriclint[server]'`)."""
    try:
        from metriclint.server.handlers import serve
    except ImportError as error:
        usage_error([Problem("metriclint server", 0, 0, f"needs {error.name}, which is not installed: pip install 'metriclint[server]'")])
    serve()


main.add_command(generate.group)
main.add_command(live.command)
main.add_command(rule_page.command)
main.add_command(rule_list.rules)
main.add_command(rule_list.explain)
