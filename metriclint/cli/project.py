"""The project options every analysing command takes, and the run they ask for.

`project_options` gives a command PATHS, --registry, --config, --jobs, --cache-dir and
--no-cache as one `ProjectOptions`; `analyse` and `report` run the engine with the process-wide
settings a command line may make (garbage collection paused while results arrive and are checked).
"""

from __future__ import annotations

import functools
import gc
import json
import sys
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import click

from metriclint import engine, settings
from metriclint.base.escapes import printable
from metriclint.base.paths import display
from metriclint.cli.status import usage_errors
from metriclint.extract import prune, trust
from metriclint.model import ConfigError, Finding, Report
from metriclint.report import once, progress

registry_option = click.option("--registry", metavar="PATH", help="The semantics registry (default: metrics.yaml in the project root).")
fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(["error", "warning"]),
    default="error",
    show_default=True,
    help="Lowest severity that makes the exit status 1.",
)
config_option = click.option(
    "--config",
    "config",
    multiple=True,
    metavar="FILE|KEY=VALUE",
    help='A settings file (TOML: its [tool.metriclint] table, else its top level), or a setting over the files\' (`select = ["ML001"]`); repeatable.',
)
_EXCLUDE_OPTIONS = (
    click.option(
        "--exclude",
        multiple=True,
        metavar="PATTERNS",
        help="Skip these files (gitignore-style, comma-separated), instead of the settings' `exclude`.",
    ),
    click.option("--extend-exclude", multiple=True, metavar="PATTERNS", help="Skip these files too (gitignore-style, comma-separated)."),
)
_SPEED_OPTIONS = (
    click.option("--jobs", "-j", type=int, metavar="N", help="Parse with N processes (default: one per CPU)."),
    click.option("--cache-dir", metavar="DIR", help="Where to keep per-file results (default: .metriclint_cache in the project root)."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the cache."),
)


@dataclass(frozen=True, kw_only=True)
class ProjectOptions:
    """The project options of an analysing command, as given on the command line."""

    paths: tuple[str, ...]
    registry: str | None
    config_file: str | None
    jobs: int | None
    cache_dir: str | None
    no_cache: bool
    overrides: tuple[str, ...] = ()  # `--config KEY=VALUE`
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()

    def _given(self, given: dict[str, Any]) -> dict[str, Any]:
        return {"overrides": self.overrides, "exclude": self.exclude, "extend_exclude": self.extend_exclude, **given}

    def each(self, **given: Any) -> list[settings.Config]:
        """The settings of every project PATHS belong to, for the commands that report on
        several at once (check, fix)."""
        with usage_errors():
            found = settings.projects(self.paths, self.config_file, self.registry, **self._given(given))
            found = [settings.with_speed(c, self.jobs, self.cache_dir, self.no_cache) for c in found]
        _warn(note for config in found for note in config.notes)
        return found

    def settings(self, **given: Any) -> settings.Config:
        """The settings of the one project PATHS belong to, with the command line's on top;
        `given` are a command's own (`select`, `baseline`, ...). Usage errors (among them
        paths from several projects) end the command with exit status 2."""
        with usage_errors():
            loaded = settings.load(self.paths, self.config_file, self.registry, **self._given(given))
            loaded = settings.with_speed(loaded, self.jobs, self.cache_dir, self.no_cache)
        _warn(loaded.notes)
        return loaded


Command = Callable[..., None]


def project_options(*, registry: bool = True) -> Callable[[Command], Command]:
    """PATHS, --registry, --config, --jobs, --cache-dir and --no-cache, handed to the command as
    one `project` argument, so every analysing command takes them the same way. `init` drafts
    a registry rather than reading one, so it takes no --registry (`registry=False`)."""

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def with_project(
            paths: tuple[str, ...],
            config: tuple[str, ...],
            jobs: int | None,
            cache_dir: str | None,
            no_cache: bool,
            exclude: tuple[str, ...],
            extend_exclude: tuple[str, ...],
            registry: str | None = None,
            **rest: Any,
        ) -> None:
            config_file, overrides = config_files(config)
            excluded = _patterns(exclude) if exclude else None
            command(
                project=ProjectOptions(
                    paths=paths,
                    registry=registry,
                    config_file=config_file,
                    jobs=jobs,
                    cache_dir=cache_dir,
                    no_cache=no_cache,
                    overrides=overrides,
                    exclude=excluded,
                    extend_exclude=_patterns(extend_exclude),
                ),
                **rest,
            )

        options = (
            click.argument("paths", nargs=-1, type=click.Path(exists=True, allow_dash=True)),
            *([registry_option] if registry else []),
            config_option,
            *_EXCLUDE_OPTIONS,
            *_SPEED_OPTIONS,
        )
        for option in reversed(options):
            with_project = option(with_project)
        return with_project

    return decorate


def config_files(given: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """`--config` values: the settings file (at most one), and the `KEY=VALUE` settings, as ruff
    tells them apart: a value that names no file and holds `=` is a setting."""
    files = [value for value in given if "=" not in value or Path(value).is_file()]
    if len(files) > 1:
        raise click.BadParameter(f"give one settings file, not {len(files)}: {', '.join(files)}", param_hint="--config")
    return (files[0] if files else None), tuple(value for value in given if value not in files)


def rule_codes(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--select ML001,ML002 --select ML010`: repeated, comma-separated, or both."""
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


def _patterns(values: tuple[str, ...]) -> tuple[str, ...]:
    """`--exclude a,b --exclude c`: repeated, comma-separated, or both."""
    return tuple(p.strip() for value in values for p in value.split(",") if p.strip())


def analyse(
    config: settings.Config,
    progress: engine.Progress | None = None,
    buffer: Buffer | None = None,
    findings_only: bool = False,
) -> engine.Analysis:
    """The run; with a `buffer`, its file holds the buffer's bytes instead of what is on disk.
    `findings_only`: for a command that shows the findings and the texts behind them only
    (engine.judge), not every text and code flow of every file."""

    def run(config: settings.Config) -> engine.Analysis:
        if buffer is None:
            return (engine.judge if findings_only else engine.analyse)(config, progress)
        return engine.check(engine.revise(engine.collect(config, progress), config, *buffer), config)

    # Collection paused for the checks too: a 16 MB module's collections were a sixth of its warm run.
    with usage_errors(), collection_paused(), cache_warnings():
        try:
            analysis = run(config)
        except ConfigError:
            raise
        except Exception:  # noqa: BLE001 - a cache file whose use raises: the run again without the cache gives its findings
            if config.cache_dir is None:
                raise
            trust.dropped()
            analysis = run(replace(config, cache_dir=None))
    warn_unused(config)
    if analysis.collection.made.cut_short:
        _warn(
            [
                f"metriclint stopped following dicts of metrics across the functions of {display(config.root)} at its limit;"
                " keys logged only through the calls it did not read are missing (docs/inventory.md)"
            ]
        )
    return analysis


_collecting: list[bool] = []  # not empty while `cache_warnings` collects


@contextmanager
def _collected() -> Iterator[None]:
    _collecting.append(True)
    try:
        yield
    finally:
        _collecting.pop()


@contextmanager
def cache_warnings() -> Iterator[None]:
    """One warning for the cache files a run did not use (extract/trust.py): not sealed with
    this machine's key, or not what they claim to be; one for a cache folder it could not
    write (extract/prune.py). Other warnings are shown as usual. Inside another, it leaves
    them to the outer one: one line for the whole."""
    if _collecting:
        yield
        return
    with _collected(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", trust.Dropped)
        warnings.simplefilter("always", prune.Unwritable)
        yield
    count, unwritable = 0, None
    for warning in caught:
        if isinstance(warning.message, trust.Dropped):
            count += warning.message.count
        elif isinstance(warning.message, prune.Unwritable):
            unwritable = unwritable or warning.message
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)
    if unwritable is not None:
        click.echo(
            printable(
                f"warning: the cache in {display(unwritable.directory)} cannot be written ({unwritable.reason}); the run went on without it"
            ),
            err=True,
        )
    if count:
        click.echo(
            f"warning: {count} cache {'file was' if count == 1 else 'files were'} not written with this machine's cache key, "
            "or damaged: not used, and what they held was read again from the sources",
            err=True,
        )


def shown_settings(config: settings.Config) -> list[str]:
    """The settings a project is checked with, one `key = value` a line (`check --show-settings`),
    paths as the run shows them."""
    selection = config.selection
    shown = {
        "root": display(config.root),
        "registry": display(config.registry) if config.registry is not None else None,
        "paths": [display(p) for p in config.paths],
        "exclude": list(config.exclude.patterns),
        "nested-projects": [display(p) for p in config.nested],
        "select": list(selection.select),
        "ignore": list(selection.ignore),
        "per-file-ignores": {pattern.patterns[0]: list(codes) for pattern, codes in selection.per_file_ignores},
        "severity": {code: level.value for code, level in selection.severity},
        "tests": list(config.tests),
        "log-functions": list(config.log_functions),
        "code-knowledge": [display(p) for p in config.code_knowledge],
        "tooltips": [t.path for t in config.tooltips],
        "baseline": display(config.baseline) if config.baseline is not None else None,
        "max-file-size": config.max_file_size,
        "max-cache-size": config.max_cache_size,
        "cache-dir": display(config.cache_dir) if config.cache_dir is not None else None,
        "jobs": config.jobs or "one per CPU",
    }
    return [f"{key} = {json.dumps(value)}" for key, value in shown.items()]


def notice_no_registry(configs: list[settings.Config]) -> None:
    """Say so when a project is checked without a registry: then only the texts are compared
    with each other, and a user who expected the registry to be found should know at once."""
    for config in configs:
        if config.registry is None:
            where = display(config.root)
            click.echo(
                f"metriclint: no registry for {where} (no {settings.DEFAULT_REGISTRY} found, none configured); "
                "comparing the texts with each other only",
                err=True,
            )


def _warn(notes: Iterable[str]) -> None:
    """Warnings about the settings, each once, on stderr: they do not change the exit status."""
    for note in dict.fromkeys(notes):
        click.echo(printable(f"warning: {note}"), err=True)


def warn_unused(config: settings.Config) -> None:
    """An `exclude` pattern that matched nothing is likely a typo, or a folder since renamed."""
    _warn(f"'exclude' pattern '{p}' matches nothing under {display(config.root)}" for p in config.exclude.unused())


Buffer = tuple[Path, bytes]  # `--stdin-filename PATH -`: a file, and what an editor holds for it


def combined_report(
    configs: list[settings.Config],
    progress: engine.Progress | None = None,
    hook_run: str | None = None,
    buffer: Buffer | None = None,
) -> tuple[Report, Report]:
    """The findings of every project in one report, and the report to print: the same, less
    what an earlier invocation of the same pre-commit `hook_run` printed (report/once.py)."""
    reports: list[Report] = []
    shown: list[Finding] = []
    for config in configs:
        if hook_run is None or config.cache_dir is None:
            reports.append(analyse(config, progress, buffer, findings_only=True).report)
            shown += reports[-1].findings
            continue
        with cache_warnings(), once.exclusive(config.cache_dir):  # the lock and the notes are the cache's too
            reports.append(analyse(config, progress, findings_only=True).report)
            shown += once.unprinted(reports[-1].findings, config.cache_dir, hook_run, config.root)
    files = sum(r.files_checked for r in reports)
    printed = set(shown)
    earlier = tuple(f for r in reports for f in r.findings if f not in printed) if hook_run is not None else ()
    return merged(reports), Report(_sorted(shown), files, _sorted(earlier))


def merged(reports: list[Report]) -> Report:
    """The findings of several projects' reports in one."""
    return Report(_sorted(f for r in reports for f in r.findings), sum(r.files_checked for r in reports))


def _sorted(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    return tuple(sorted(findings, key=lambda f: f.sort_key))


@contextmanager
def progress_bar(quiet: bool = False) -> Iterator[progress.Bar | None]:
    """The progress bar every analysing command shows on a terminal (report/progress.py), or
    None where none is wanted; cleared at the end, so the command's output starts on a clean line."""
    bar = progress.Bar(sys.stderr) if progress.wanted(sys.stderr, quiet) else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


@contextmanager
def collection_paused() -> Iterator[None]:
    """Garbage collection paused while results arrive, or while claims are made of them. They
    come by the thousand, make no reference cycles and all live to the end of the run, so each
    collection would only walk the growing heap again: a fifth of a Megatron-LM run. Frozen
    before collection resumes, they are never walked again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
