"""The command line. Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage, config,
registry or internal error.

Every command that analyses a project takes the same project options (`project_options`), and
every exit status for findings comes from `_exit`. Process-wide settings (the output streams'
error handling, pausing garbage collection while results arrive) are made here, not in the
engine.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import gc
import io
import os
import signal
import sys
import threading
import traceback
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NoReturn

import click

from metriclint import __version__, baseline, engine, settings
from metriclint.authoring import generate
from metriclint.authoring import init as drafting
from metriclint.base import files
from metriclint.base.paths import display
from metriclint.checks import RULES, Example, Rule
from metriclint.fix import rewrite as fixing
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.registry import Registry
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import ConfigError, Finding, Problem, Report, Severity
from metriclint.report import audit, once, progress
from metriclint.report.audit_formats import AUDIT_FORMATS
from metriclint.report import formats
from metriclint.report.formats import FORMATS, count
from metriclint.report.metric import describe

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2

_registry_option = click.option("--registry", metavar="PATH", help="The semantics registry (default: metrics.yaml in the project root).")
_config_option = click.option("--config", "config_file", metavar="FILE", help="A TOML file with a [tool.metriclint] table.")
_SPEED_OPTIONS = (
    click.option("--jobs", "-j", type=int, metavar="N", help="Parse with N processes (default: one per CPU)."),
    click.option("--cache-dir", metavar="DIR", help="Where to keep per-file results (default: .metriclint_cache in the project root)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
)


@dataclass(frozen=True)
class Project:
    """The project options of an analysing command, as given on the command line."""

    paths: tuple[str, ...]
    registry: str | None
    config_file: str | None
    jobs: int | None
    cache_dir: str | None
    no_cache: bool

    def each(self, **given: Any) -> list[settings.Config]:
        """The settings of every project PATHS belong to, for the commands that report on
        several at once (check, fix)."""
        with _usage_errors():
            found = settings.projects(self.paths, self.config_file, self.registry, **given)
        _warn(note for config in found for note in config.notes)
        with _usage_errors():
            return [settings.with_speed(c, self.jobs, self.cache_dir, self.no_cache) for c in found]

    def settings(self, **given: Any) -> settings.Config:
        """The settings of the one project PATHS belong to, with the command line's on top;
        `given` are a command's own (`select`, `baseline`, ...). Usage errors (among them
        paths from several projects) end the command with exit status 2."""
        with _usage_errors():
            loaded = settings.load(self.paths, self.config_file, self.registry, **given)
        _warn(loaded.notes)
        with _usage_errors():
            return settings.with_speed(loaded, self.jobs, self.cache_dir, self.no_cache)


Command = Callable[..., None]


def project_options(*, registry: bool = True) -> Callable[[Command], Command]:
    """PATHS, --registry, --config, --jobs, --cache-dir and --no-cache, handed to the command as
    one `project` argument, so every analysing command takes them the same way. `init` drafts
    a registry rather than reading one, so it takes no --registry (`registry=False`)."""

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def with_project(
            paths: tuple[str, ...], config_file: str | None, jobs: int | None, cache_dir: str | None, no_cache: bool,
            registry: str | None = None, **rest: Any,
        ) -> None:
            command(project=Project(paths, registry, config_file, jobs, cache_dir, no_cache), **rest)

        options = (click.argument("paths", nargs=-1, type=click.Path(exists=True, allow_dash=True)), *([_registry_option] if registry else []),
                   _config_option, *_SPEED_OPTIONS)
        for option in reversed(options):
            with_project = option(with_project)
        return with_project

    return decorate


def _analyse(config: settings.Config, progress: engine.Progress | None = None, buffer: Buffer | None = None) -> engine.Analysis:
    """The run; with a `buffer`, its file holds the buffer's bytes instead of what is on disk."""
    with _usage_errors():
        if buffer is None:
            analysis = engine.analyse(config, progress, pause=_collection_paused)
        else:
            collection = engine.collect(config, progress, pause=_collection_paused)
            analysis = engine.check(engine.revise(collection, config, *buffer), config)
    _warn_unused(config)
    return analysis


def _notice_no_registry(configs: list[settings.Config]) -> None:
    """Say so when a project is checked without a registry: then only the texts are compared
    with each other, and a user who expected the registry to be found should know at once."""
    for config in configs:
        if config.registry is None:
            where = display(config.root)
            click.echo(f"metriclint: no registry for {where} (no {settings.DEFAULT_REGISTRY} found, none configured); "
                       "comparing the texts with each other only", err=True)


def _warn(notes: Iterable[str]) -> None:
    """Warnings about the settings, each once, on stderr: they do not change the exit status."""
    for note in dict.fromkeys(notes):
        click.echo(f"warning: {note}", err=True)


def _warn_unused(config: settings.Config) -> None:
    """An `exclude` pattern that matched nothing is likely a typo, or a folder since renamed."""
    _warn(f"'exclude' pattern '{p}' matches nothing under {display(config.root)}" for p in config.exclude.unused())


Buffer = tuple[Path, bytes]  # `--stdin-filename PATH -`: a file, and what an editor holds for it


def _report(
    configs: list[settings.Config], progress: engine.Progress | None = None, hook_run: str | None = None, buffer: Buffer | None = None,
) -> tuple[Report, Report]:
    """The findings of every project in one report, and the report to print: the same, less
    what an earlier invocation of the same pre-commit `hook_run` printed (report/once.py)."""
    reports: list[Report] = []
    shown: list[Finding] = []
    for config in configs:
        if hook_run is None or config.cache_dir is None:
            reports.append(_analyse(config, progress, buffer).report)
            shown += reports[-1].findings
            continue
        with once.exclusive(config.cache_dir):
            reports.append(_analyse(config, progress).report)
            shown += once.unprinted(reports[-1].findings, config.cache_dir, hook_run, config.root)
    files = sum(r.files_checked for r in reports)
    return Report(_sorted(f for r in reports for f in r.findings), files), Report(_sorted(shown), files)


def _sorted(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: f.sort_key))


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Garbage collection paused while results arrive. They come by the thousand, make no
    reference cycles and all live to the end of the run, so each collection would only walk
    the growing heap again: a fifth of a Megatron-LM run. Frozen before collection resumes,
    they are never walked again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _exit(findings: Iterable[Finding], fail_on: Severity = Severity.ERROR) -> NoReturn:
    """Exit 1 when a finding is at least as severe as `fail_on`, else 0."""
    failing = {Severity.ERROR} if fail_on is Severity.ERROR else {Severity.ERROR, Severity.WARNING}
    sys.exit(EXIT_FINDINGS if any(f.severity in failing for f in findings) else EXIT_CLEAN)


class _Guarded(click.Group):
    """Commands whose unforeseen failure is one line and exit 2, not a traceback and exit 1: CI
    logs stay readable, and exit 1 keeps meaning "findings". `--verbose` or METRICLINT_DEBUG=1
    print the traceback too, for the report."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError):
            raise  # click's own endings, and a closed pipe, which click handles as a reader expects
        except KeyboardInterrupt:
            sys.exit(128 + signal.SIGINT)  # as a shell reports a process that SIGINT ended: 130
        except Exception as error:  # noqa: BLE001 - the last guard
            if ctx.params.get("verbose") or os.environ.get("METRICLINT_DEBUG", "") not in ("", "0"):
                traceback.print_exc()
            detail = " ".join(str(error).split())
            click.echo(f"metriclint: internal error: {type(error).__name__}: {detail[:300]}; please report it", err=True)
            sys.exit(EXIT_USAGE)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="metriclint")
@click.option("--verbose", is_flag=True, help="On an internal error, print its traceback (so does METRICLINT_DEBUG=1).")
def main(verbose: bool) -> None:
    """Check that what your code, docs and dashboards say a metric means is what it is."""
    if threading.current_thread() is threading.main_thread():
        for ending in (signal.SIGTERM, signal.SIGHUP):  # unwind, so workers and temporary files are cleaned up
            signal.signal(ending, _exit_for)
    for stream in (sys.stdout, sys.stderr):
        # A file name that is not UTF-8 is printed as its own bytes, as `ls` does, not a traceback.
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="surrogateescape")


def _exit_for(signum: int, frame: object) -> None:
    """SIGTERM or SIGHUP: exit as a shell reports a process the signal ended (143, 129)."""
    sys.exit(128 + signum)


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--select ML001,ML002 --select ML010`: repeated, comma-separated, or both."""
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


@main.command()
@project_options()
@click.option("--format", "output_format", type=click.Choice(list(FORMATS)), default="text", show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no progress bar.")
@click.option("--select", multiple=True, metavar="CODES", help="Run only these rules (codes or prefixes, comma-separated).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Skip these rules, in addition to the config's `ignore`.")
@click.option(
    "--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
    help="Lowest severity that makes the exit status 1.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule has, instead of the findings.")
@click.option("--output-file", "-o", metavar="FILE", help="Write the report to FILE instead of printing it.")
@click.option("--baseline", "baseline_file", metavar="FILE", help="Hide the findings recorded in FILE; report only new ones.")
@click.option("--write-baseline", metavar="FILE", help="Record the current findings in FILE and exit 0.")
@click.option(
    "--changed-only", is_flag=True,
    help="PATHS are changed files (pre-commit): read the whole project, report findings touching them.",
)
@click.option(
    "--stdin-filename", metavar="PATH",
    help="With PATHS `-`: check the project as if PATH held standard input (an editor's buffer); report findings touching PATH.",
)
def check(
    project: Project, output_format: str, quiet: bool, select: tuple[str, ...], ignore: tuple[str, ...], fail_on: str,
    exit_zero: bool, statistics: bool, output_file: str | None, baseline_file: str | None, write_baseline: str | None,
    changed_only: bool, stdin_filename: str | None,
) -> None:
    """Check PATHS (default: the current directory) for contradicting statements about metrics."""
    buffer = None
    stdin = stdin_filename is not None
    if (stdin or "-" in project.paths) and not (stdin and project.paths == ("-",)):
        raise click.UsageError("`-` (standard input) and --stdin-filename PATH go together, with no other PATHS")
    if stdin_filename is not None:
        project, changed_only = dataclasses.replace(project, paths=(stdin_filename,)), True
        buffer = (Path(stdin_filename), sys.stdin.buffer.read())
    configs = project.each(
        select=_codes(select), ignore=_codes(ignore), baseline=None if write_baseline else baseline_file, changed_only=changed_only,
    )
    bar = progress.Bar(sys.stderr) if progress.wanted(sys.stderr, quiet) else None
    try:
        report, shown = _report(configs, bar, once.hook_run() if changed_only and buffer is None else None, buffer)
    finally:
        if bar is not None:
            bar.close()
    if write_baseline:
        with _usage_errors():
            baseline.write(Path(write_baseline), list(report.findings))
        click.echo(f"Recorded {count(len(report.findings), 'finding')} in {write_baseline}.", err=True)
        _exit(())
    kept = io.StringIO()
    out = kept if output_file else sys.stdout
    if statistics:
        formats.statistics(shown, out)
    else:
        FORMATS[output_format](shown, out, quiet)
    if output_file:
        _write(Path(output_file), kept.getvalue(), "--output-file")
    if not quiet:
        _notice_no_registry(configs)
    _exit(() if exit_zero else report.findings, Severity(fail_on))


@main.command(name="audit")
@project_options()
@click.option("--format", "output_format", type=click.Choice(list(AUDIT_FORMATS)), default="text", show_default=True)
@click.option("--metric", metavar="KEY", help="Show only this metric (a key or a registry alias).")
def audit_command(project: Project, output_format: str, metric: str | None) -> None:
    """Show, for every metric in PATHS, what each source says it means, and where they disagree."""
    result = audit.build(_analyse(project.settings()), only=metric)
    if metric is not None and not result.metrics:
        _usage_error([Problem("--metric", 0, 0, _unknown_metric(metric))])
    AUDIT_FORMATS[output_format](result, sys.stdout)
    _exit(f for m in result.metrics for f in m.findings)


def _write(target: Path, content: str, option: str) -> None:
    """Write `content` to `target` atomically; a usage error at `option` if it cannot be."""
    try:
        files.replace(target, content.encode("utf-8", "surrogateescape"))
    except OSError as error:
        _usage_error([Problem(option, 0, 0, f"cannot write {display(target)}: {error.strerror or error}")])


def _unknown_metric(key: str) -> str:
    return f"no metric '{key}' is registered, logged or named in the checked files"


def _usage_error(problems: list[Problem]) -> NoReturn:
    for problem in problems:
        click.echo(str(problem), err=True)
    sys.exit(EXIT_USAGE)


@contextmanager
def _usage_errors() -> Iterator[None]:
    """A bad config, registry or baseline: every problem as `file:line:col: message`, exit 2."""
    try:
        yield
    except ConfigError as error:
        _usage_error(error.problems)


@main.command()
def rules() -> None:
    """List every rule: code, name, default severity, what it finds."""
    for rule in RULES:
        click.echo(f"{rule.code}  {rule.name:<24} {rule.severity.value:<8} {rule.summary}")


@main.command()
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
    reported = "".join(f"  -> {line}\n" for line in example.expect)
    return shown + reported


@main.command()
@project_options()
def sources(project: Project) -> None:
    """List the tooltip tables read under PATHS: path, kind, table, match mode, entries, and why."""
    config = project.settings()
    with _usage_errors():
        collection = engine.collect(config, pause=_collection_paused)
    _warn_unused(config)
    for binding in collection.bindings:
        table = binding.table
        click.echo(f"{table.path}\t{table.kind}\t{table.name or '/'}\t{binding.mode}\t{len(table.entries)} entries\t{binding.why}")
    texts = sum(1 for e in collection.extractions if e.mentions)
    click.echo(f"{len(collection.bindings)} tooltip tables; {texts} files with docstrings or comments; {len(collection.files)} files read.")


@main.command()
@project_options()
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of the fixes and write nothing.")
def fix(project: Project, show_diff: bool) -> None:
    """Rewrite each contradicting phrase under PATHS to the registry's wording (ML001).

    Exits 1 while findings remain that no fix settled."""
    report = _report(project.each())[0]
    rewrites, unfixed = fixing.plan(report.findings)
    fixed, files = [], 0
    for rewrite in rewrites:
        problem = "--diff" if show_diff else fixing.write(rewrite)
        if show_diff:
            click.echo(rewrite.diff, nl=False)
        if problem:
            unfixed += [(f, problem) for f in rewrite.fixed]
        else:
            fixed += rewrite.fixed
            files += 1
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
    _exit(f for f, _ in unfixed)


@main.group(name="generate")
def generate_group() -> None:
    """Write files from the registry: a dashboard's tooltip table, a Markdown table of metrics."""


_output_option = click.option("--output", "-o", metavar="FILE", help="Write to FILE (default: print).")
_check_option = click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff when FILE is out of date (for CI).")


@generate_group.command(name="tooltips")
@click.option("--format", "fmt", type=click.Choice(generate.FORMATS), required=True)
@_output_option
@_check_option
@_registry_option
@_config_option
def generate_tooltips(fmt: str, output: str | None, check: bool, registry: str | None, config_file: str | None) -> None:
    """The dashboard's description table (key -> description) from the registry."""
    _emit(generate.tooltips(_registry(registry, config_file), fmt), output, check)


@generate_group.command(name="docs")
@_output_option
@_check_option
@_registry_option
@_config_option
def generate_docs(output: str | None, check: bool, registry: str | None, config_file: str | None) -> None:
    """A Markdown table of the registry (metric, description, facets); in an existing page, the
    region between `<!-- metriclint:begin -->` and `<!-- metriclint:end -->`."""
    loaded = _registry(registry, config_file)
    page = _read(Path(output)) if output is not None and Path(output).exists() else None
    try:
        _emit(generate.docs(loaded, page), output, check)
    except generate.RegionError as error:
        _usage_error([Problem(str(output), 1, 1, str(error))])


def _registry(registry: str | None, config_file: str | None) -> Registry:
    with _usage_errors():
        loaded = settings.load((), config_file, registry)
        if loaded.registry is None:
            raise ConfigError([Problem("metriclint", 0, 0, "no registry found: write metrics.yaml or pass --registry")])
        return registry_module.load(loaded.registry, display(loaded.registry), load_builtin()[0])[0]


def _read(path: Path) -> str:
    try:
        return files.read_text(path)
    except OSError as error:
        _usage_error([Problem(str(path), 1, 1, f"cannot read: {error.strerror or error}")])
    except UnicodeDecodeError as error:
        _usage_error([Problem(str(path), 1, 1, f"cannot read: {error}")])


def _emit(content: str, output: str | None, check: bool) -> None:
    """Print, write, or (with --check) compare with what FILE holds."""
    if output is None:
        if check:
            _usage_error([Problem("metriclint", 0, 0, "--check needs --output FILE")])
        click.echo(content, nl=False)
        return
    path = Path(output)
    current = _read(path) if path.exists() else ""
    if check:
        if current == content:
            click.echo(f"{output} is up to date.", err=True)
            sys.exit(EXIT_CLEAN)
        diff = difflib.unified_diff(current.splitlines(keepends=True), content.splitlines(keepends=True), f"a/{output}", f"b/{output}")
        click.echo("".join(diff), nl=False)
        click.echo(f"{output} is out of date; run the same command without --check.", err=True)
        sys.exit(EXIT_FINDINGS)
    if current != content:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            files.replace(path, content.encode("utf-8"))
        except OSError as error:
            _usage_error([Problem(output, 1, 1, f"cannot write: {error.strerror or error}")])
    click.echo(f"Wrote {output}.", err=True)


@main.command()
@project_options(registry=False)
@click.option("--output", "-o", metavar="FILE", help="Where to write the draft (default: metrics.yaml in the project root).")
@click.option("--force", is_flag=True, help="Overwrite an existing registry.")
def init(project: Project, output: str | None, force: bool) -> None:
    """Draft a registry from PATHS: every logged key, aliases, descriptions, agreed semantics,
    and comments where the texts disagree."""
    config = project.settings()
    target = Path(output) if output else config.root / settings.DEFAULT_REGISTRY
    if target.exists() and not force:
        _usage_error([Problem(display(target), 1, 1, "a registry already exists; pass --force to overwrite it")])
    analysis = _analyse(dataclasses.replace(config, registry=None))  # a draft is what the project says without one
    entries = drafting.draft(analysis)
    try:
        files.replace(target, drafting.render(entries, analysis.report.files_checked).encode("utf-8"))
    except OSError as error:
        _usage_error([Problem(display(target), 1, 1, f"cannot write: {error.strerror or error}")])
    disputes = sum(len(e.disputes) for e in entries)
    settled = sum(1 for e in entries if e.semantics)
    click.echo(
        f"Wrote {display(target)}: {count(len(entries), 'metric')}, {settled} with semantics, "
        f"{count(disputes, 'disagreement')} to settle."
    )


@main.command("explain-metric")
@click.argument("key")
@project_options()
def explain_metric(key: str, project: Project) -> None:
    """Show what the registry, the code (with each computing site) and the texts say metric KEY is."""
    analysis = _analyse(project.settings())
    lines = describe(key, analysis.registry, analysis.claims, analysis.code)
    if not lines:  # a usage error, as in `audit --metric`
        _usage_error([Problem("metriclint", 0, 0, _unknown_metric(key))])
    click.echo("\n".join(lines))


@main.command()
def server() -> None:
    """Run the language server on stdin and stdout, for editors (needs `pip install 'metriclint[server]'`)."""
    try:
        from metriclint.server.handlers import serve
    except ImportError as error:
        _usage_error([Problem("metriclint server", 0, 0, f"needs {error.name}, which is not installed: pip install 'metriclint[server]'")])
    serve()
