"""Settings: what each project's settings file says (table.py reads it), the command line on
top, and which rules run where.

Takes the checked paths and the command line's options; gives one `Config` per project
(root, registry, paths, excludes, selection, per-file ignores), or exit-2 problems.

Each checked path's project and settings file are found from the path upward, stopping at the
repository root, as ruff does (homes.py). Relative paths in a discovered file resolve against
its folder; in a file given with --config, against the current directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from metriclint.base.files import MAX_BYTES
from metriclint.base.globs import Patterns
from metriclint.base.paths import display
from metriclint.base.toml import tomllib
from metriclint.checks import RULES
from metriclint.extract import prune, trust
from metriclint.model import ConfigError, Finding, Problem, Severity, TooltipSetting
from metriclint.settings import table
from metriclint.settings.homes import DEFAULT_REGISTRY, Home, escaping_link, homes, nested
from metriclint.settings.named_files import code_knowledge_files, given_file, why_unusable
from metriclint.settings.table import Located, known, tooltips

# Test files: read for the inventory, but their texts and code state nothing about a metric
# (a test's comment says what the test expects). Globs against the path from the project root,
# or the file name.
DEFAULT_TESTS = (
    "tests/*",
    "test/*",
    "*/tests/*",
    "*/test/*",
    "__tests__/*",
    "*/__tests__/*",
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "*.test.*",
    "*.spec.*",
)
CACHE_DIR = prune.DEFAULT_NAME  # at the project root; METRICLINT_CACHE_DIR moves it
__all__ = ["DEFAULT_REGISTRY", "known"]


NONE = table.FileSettings({})  # no settings file: the defaults


# Which rules run where, and how severe their findings are: `select`, `ignore`,
# `per-file-ignores` and `severity`, from the config and the command line. A selector is a
# rule code or a prefix of codes (`ML0` is every ML0xx rule), as in ruff.
@dataclass(frozen=True)
class Selection:
    root: Path  # per-file-ignores globs are relative to it
    select: tuple[str, ...] = ("ML",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[Patterns, tuple[str, ...]], ...] = ()  # gitignore-style, relative to `root`
    severity: tuple[tuple[str, Severity], ...] = ()

    def active(self, code: str, path: str) -> bool:
        """Whether rule `code` runs on the file shown as `path`. A rule off by default runs only
        where `select` names its code in full."""
        chosen = code in self.select if code in _OFF_BY_DEFAULT else _matches(code, self.select)
        if not chosen or _matches(code, self.ignore):
            return False
        return not any(_matches(code, codes) and pattern(Path(path)) for pattern, codes in self.per_file_ignores)

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """The findings of active rules, at their configured severity."""
        return [self._severity(f) for f in findings if self.active(f.rule, f.span.path)]

    def _severity(self, finding: Finding) -> Finding:
        chosen = [(len(selector), level) for selector, level in self.severity if finding.rule.startswith(selector)]
        if not chosen:
            return finding
        return replace(finding, severity=max(chosen, key=lambda item: item[0])[1])


_OFF_BY_DEFAULT = frozenset(rule.code for rule in RULES if not rule.default)


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(code.startswith(selector) for selector in selectors)


@dataclass(frozen=True, kw_only=True)
class Config:
    root: Path  # the project root: the config file's folder, else the checked folder
    paths: tuple[Path, ...]
    exclude: Patterns  # gitignore-style, relative to the root (base/globs.py)
    registry: Path | None  # None: run without a registry
    selection: Selection
    baseline: Path | None = None  # hide the findings recorded in this file
    changed: tuple[str, ...] | None = None  # report only findings touching these files (shown paths)
    tooltips: tuple[TooltipSetting, ...] = ()
    log_functions: tuple[str, ...] = ()  # the project's own logging helpers, by called name
    tests: tuple[str, ...] = DEFAULT_TESTS  # globs of the test files (see DEFAULT_TESTS)
    code_knowledge: tuple[Path, ...] = ()  # files declaring what the project's own helpers compute
    jobs: int = 0  # worker processes; 0: one per CPU
    max_file_size: int = MAX_BYTES  # a larger source file is ML900
    cache_dir: Path | None = None  # None: no cache
    max_cache_size: int = prune.DEFAULT_LIMIT  # bytes of entries the cache folder keeps
    scope: tuple[Path, ...] | None = None  # report only the findings in these files and folders; None: all
    notes: tuple[str, ...] = ()  # warnings about the settings, for stderr (a deprecated key, a path that matches nothing)
    nested: tuple[Path, ...] = ()  # roots of the projects inside this one: their files are theirs, checked with their settings


def with_speed(config: Config, jobs: int | None, cache_dir: str | None, no_cache: bool, checked: bool = True) -> Config:
    """The command line's --jobs, --cache-dir and --no-cache on top of the loaded settings.
    `checked`: a cache folder that is someone else's (extract/prune.py) is a usage error
    (`clean` looks at it, and leaves it alone)."""
    if jobs is not None and jobs < 1:
        raise ConfigError([Problem("--jobs", 0, 0, f"must be at least 1, not {jobs}")])
    given = os.environ.get("METRICLINT_CACHE_DIR")
    chosen = Path(cache_dir) if cache_dir else Path(given or config.root / CACHE_DIR)
    why = prune.refusal(chosen) if checked and not no_cache else None
    if why is not None:
        option = "--cache-dir" if cache_dir else "METRICLINT_CACHE_DIR" if given else "metriclint"
        raise ConfigError([Problem(option, 0, 0, f"{display(chosen)} {why}")])
    if checked and not no_cache and trust.key() is None:
        note = f"no cache key ({trust.key_file()} cannot be read or made; {trust.ENVIRONMENT} gives one): running without the cache"
        return replace(config, jobs=jobs or 0, cache_dir=None, notes=(*config.notes, note))
    return replace(config, jobs=jobs or 0, cache_dir=None if no_cache else chosen)


def projects(
    paths: tuple[str, ...],
    config_file: str | None,
    registry: str | None,
    *,
    select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
    baseline: str | None = None,
    changed_only: bool = False,
    base: Path | None = None,
    split: bool = True,
    extend_select: tuple[str, ...] = (),
    exclude: tuple[str, ...] | None = None,
    extend_exclude: tuple[str, ...] = (),
    overrides: tuple[str, ...] = (),
) -> list[Config]:
    """The settings of each project PATHS belong to (homes.py), the command line's on top.

    Each project is read whole, and only the findings in the given PATHS are reported: the
    other side of a contradiction is usually in a file that was not named. With `changed_only`
    (the pre-commit hook), PATHS are the changed files, and the findings touching them (at
    them, or with their other side in them) are reported. With --config, its settings hold
    for one project rooted at `base` (None: the current directory), as before discovery;
    the language server gives each workspace folder as its own `base`. With `split`, a
    project nested in a checked folder (settings of its own) is checked as its own project.
    """
    _check_command_line((*select, *extend_select), ignore, baseline)
    line = _CommandLine(
        registry=registry,
        select=select,
        ignore=ignore,
        baseline=baseline,
        changed_only=changed_only,
        extend_select=extend_select,
        exclude=exclude,
        extend_exclude=extend_exclude,
        overrides=_overrides(overrides),
    )
    folder = base or Path.cwd()
    if config_file is not None:
        file = given_file(config_file, "settings", "--config")
        loaded = _over(table.load(file), line)
        configured = tuple(folder / p for p in loaded.values.get("paths", ()))
        chosen = (configured or (folder,)) if changed_only else tuple(Path(p) for p in paths) or configured or (folder,)
        nearest = folder / DEFAULT_REGISTRY
        return [_config(line, folder, file, loaded, chosen, paths, None, nearest if why_unusable(nearest) is None else None)]
    checked = [Path(p) for p in paths] or [folder]
    groups: dict[Home | None, list[Path]] = {}
    for path, found in zip(checked, homes(checked)):
        groups.setdefault(found, []).append(path)
    inner = _split(groups, changed_only) if split else {}
    return [
        _project(line, found, given, inner.get(found, ()) if found is not None else ())
        for found, given in sorted(groups.items(), key=_project_order)
    ]


def _split(groups: dict[Home | None, list[Path]], changed_only: bool) -> dict[Home, tuple[Home, ...]]:
    """The projects nested in each project (homes.nested), which leave their files out of it;
    a nested project inside a checked folder joins `groups`, checked from its root (with
    `changed_only`, the changed files found their own projects already)."""
    inner: dict[Home, tuple[Home, ...]] = {}
    pending = [found for found in groups if found is not None]
    while pending:  # a nested project's own nested ones too
        found = pending.pop()
        inner[found] = nested(found, _read(found, groups[found], changed_only))
        folders = [p.resolve() for p in groups[found] if p.is_dir()]
        for home in inner[found]:
            if not changed_only and home not in groups and any(home.root.is_relative_to(folder) for folder in folders):
                groups[home] = [home.root]
                pending.append(home)
    return inner


def load(paths: tuple[str, ...], config_file: str | None, registry: str | None, **given: Any) -> Config:
    """The settings of the one project PATHS belong to; paths from several are a usage error,
    for the commands that show one project (audit, explain-metric, sources, init, generate),
    which show a project nested in it as part of it."""
    found = projects(paths, config_file, registry, split=False, **given)
    if len(found) > 1:
        roots = ", ".join(display(c.root) for c in found)
        raise ConfigError([Problem("metriclint", 0, 0, f"the paths belong to {len(found)} projects ({roots}); give the paths of one")])
    return found[0]


@dataclass(frozen=True, kw_only=True)
class _CommandLine:
    """What the command line sets for every project."""

    registry: str | None
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    baseline: str | None
    changed_only: bool
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None  # replaces the settings' `exclude`
    extend_exclude: tuple[str, ...] = ()
    overrides: tuple[tuple[str, Any], ...] = ()  # `--config KEY=VALUE`: over every settings file's keys


def _overrides(pairs: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """`--config KEY = VALUE` settings (ruff's), each a line of TOML, checked as a settings file's
    are; a path in one is relative to the current directory."""
    given: dict[str, Any] = {}
    for pair in pairs:
        try:
            given.update(tomllib.loads(pair))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError([Problem("--config", 0, 0, f"'{pair}' is neither a file nor KEY = VALUE in TOML ({error})")]) from None
    if "extend" in given:
        raise ConfigError([Problem("--config", 0, 0, "'extend' names a settings file: give the file with --config FILE")])
    try:
        checked = table.validate(given, Path("--config"))
    except ConfigError as error:  # the option is the place, not a line of a file
        raise ConfigError([Problem("--config", 0, 0, problem.message) for problem in error.problems]) from None
    return tuple(table.anchored(checked.values, Path.cwd()).items())


def write_target(name: str, option: str = "metriclint") -> Path:
    """Where writing the file `name` (given with `option`) lands: through its links, the file
    they name. A ConfigError (one line) when a link inside a project leads the write out of
    it (homes.escaping_link): a link committed to a repository must not make `fix` or a report
    overwrite a file elsewhere. Naming that file itself writes it."""
    escape = escaping_link(Path(name))
    if escape is not None:
        root, target = escape
        message = (
            f"{name} leads through a link out of its project ({display(root)}) to {target}; not written (name that file itself to write it)"
        )
        raise ConfigError([Problem(option, 0, 0, message)])
    return Path(os.path.realpath(name))


def _check_command_line(select: tuple[str, ...], ignore: tuple[str, ...], baseline: str | None) -> None:
    bad = [s for s in (*select, *ignore) if not known(s)]
    if bad:
        raise ConfigError([Problem("metriclint", 0, 0, f"unknown rule selector '{s}'; see `metriclint rules`") for s in bad])
    if baseline is not None:
        given_file(baseline, "baseline", "--baseline")


def _project_order(item: tuple[Home | None, list[Path]]) -> tuple[bool, str]:
    """Projects by root; the paths in none last."""
    found = item[0]
    return (found is None, found.root.as_posix() if found is not None else "")


def _over(loaded: table.FileSettings, line: _CommandLine) -> table.FileSettings:
    """A settings file's values with `--config KEY=VALUE` on top."""
    return table.FileSettings({**loaded.values, **dict(line.overrides)}, loaded.notes) if line.overrides else loaded


def _whole(found: Home, settings: table.FileSettings) -> tuple[Path, ...]:
    """What a project reads: its settings' `paths`, or its root."""
    return tuple(found.root / p for p in settings.values.get("paths", ())) or (found.root,)


def _read(found: Home, given: list[Path], changed_only: bool) -> tuple[Path, ...]:
    """The folders a project's run walks (its `paths`, and the folders named outside them)."""
    whole = _whole(found, table.load(found.settings) if found.settings is not None else NONE)
    return tuple(p for p in whole + (() if changed_only else tuple(given)) if p.is_dir())


def _project(line: _CommandLine, found: Home | None, given: list[Path], inner: tuple[Home, ...] = ()) -> Config:
    """One project's settings, read whole, less the `inner` projects nested in it (each
    checked with its own settings); a path in no project is read on its own."""
    shown = tuple(display(p) for p in given)
    if found is None:
        if line.changed_only:  # the changed files' project is the working directory's
            return _config(line, Path.cwd(), None, _over(NONE, line), (Path.cwd(),), shown, None, None)
        folders = [str(p.resolve() if p.is_dir() else p.resolve().parent) for p in given]
        return _config(line, Path(os.path.commonpath(folders)), None, _over(NONE, line), tuple(given), shown, None, None)
    file = found.settings
    settings = _over(table.load(file) if file is not None else NONE, line)
    whole = _whole(found, settings)
    if line.changed_only:
        return replace(_config(line, found.root, file, settings, whole, shown, None, found.nearest_registry), nested=_roots(inner))
    everything = any(found.root.is_relative_to(p.resolve()) for p in given)
    scope = None if everything else tuple(given)
    # A path that holds the whole project stands for the project, which is its `paths`; any
    # other is read besides them (a file named on the command line is always read).
    named = tuple(p for p in given if not found.root.is_relative_to(p.resolve()))
    return replace(_config(line, found.root, file, settings, whole + named, shown, scope, found.nearest_registry), nested=_roots(inner))


def _roots(inner: tuple[Home, ...]) -> tuple[Path, ...]:
    return tuple(sorted(home.root for home in inner))


def _config(
    line: _CommandLine,
    root: Path,
    file: Path | None,
    loaded: table.FileSettings,
    chosen: tuple[Path, ...],
    shown: tuple[str, ...],
    scope: tuple[Path, ...] | None,
    nearest_registry: Path | None,
) -> Config:
    """The command line over one settings file (`file`, None: defaults) of the project at `root`."""
    settings = loaded.values
    selected = line.select or (tuple(settings.get("select", ())) or Selection.select) + tuple(settings.get("extend-select", ()))
    selected += line.extend_select
    excluded = tuple(settings.get("exclude", ())) if line.exclude is None else line.exclude
    selection = Selection(
        root,
        selected,
        tuple(settings.get("ignore", ())) + tuple(settings.get("extend-ignore", ())) + line.ignore,
        tuple((Patterns((glob,), root), tuple(codes)) for glob, codes in settings.get("per-file-ignores", {}).items()),
        tuple((code, Severity(level)) for code, level in settings.get("severity", {}).items()),
    )
    missing = [p for p in settings.get("paths", ()) if not (root / p).exists()]
    notes = loaded.notes + tuple(
        Located(file).note(f"'paths' entry '{p}' matches nothing", "paths", settings["paths"].index(p)) for p in missing if file
    )
    registry_path: Path | None
    if line.registry is not None:
        registry_path = given_file(line.registry, "registry", "--registry")
    elif "registry" in settings:  # a settings file's, or --config registry=...
        registry_path = root / settings["registry"]
        why = why_unusable(registry_path)
        if why is not None:
            if file is None or "registry" in dict(line.overrides):
                raise ConfigError([Problem("--config", 0, 0, f"registry file '{settings['registry']}' {why}")])
            raise ConfigError([Located(file).at(f"registry file '{settings['registry']}' {why}", value_of=("registry",))])
    else:
        registry_path = nearest_registry
    return Config(
        root=root,
        paths=chosen,
        exclude=Patterns(excluded + tuple(settings.get("extend-exclude", ())) + line.extend_exclude, root),
        registry=registry_path,
        selection=selection,
        baseline=Path(line.baseline) if line.baseline is not None else None,
        changed=shown if line.changed_only else None,
        tooltips=tooltips(settings.get("tooltips", []), file) if file is not None else (),
        log_functions=tuple(settings.get("log-functions", ())),
        tests=tuple(settings.get("tests", DEFAULT_TESTS)),
        code_knowledge=code_knowledge_files(root, file, settings.get("code-knowledge", ())),
        max_file_size=settings.get("max-file-size", MAX_BYTES),
        max_cache_size=settings.get("max-cache-size", prune.DEFAULT_LIMIT),
        scope=scope,
        notes=notes,
    )
