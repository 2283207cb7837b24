"""Settings: `[tool.metriclint]` in the nearest pyproject.toml (or the nearest metriclint.toml,
whose top level is the table), or a file given with --config; and which rules run where.

The nearest settings are looked for from the checked path upward, stopping at the repository
root, as ruff does. Relative paths in a discovered file resolve against its folder; in a file
given with --config, against the current directory.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from metriclint.base.toml import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from metriclint.base import locate
from metriclint.base.files import MAX_BYTES, read_text
from metriclint.base.paths import display, matches
from metriclint.checks import RULES
from metriclint.model import ConfigError, Finding, Problem, Severity, TooltipSetting

KEYS = (
    "registry", "paths", "exclude", "tests", "select", "ignore", "per-file-ignores", "severity", "tooltips", "log_functions",
    "max_file_size",
)
# Test files: read for the inventory, but their texts and code state nothing about a metric
# (a test's comment says what the test expects). Globs against the path from the project root,
# or the file name.
DEFAULT_TESTS = (
    "tests/*", "test/*", "*/tests/*", "*/test/*", "__tests__/*", "*/__tests__/*",
    "test_*.py", "*_test.py", "conftest.py", "*.test.*", "*.spec.*",
)
TOOLTIP_KEYS = ("path", "table", "match", "strip_prefix")
MATCH_MODES = ("exact", "prefix", "suffix", "substring", "regex", "glob")
DEFAULT_REGISTRY = "metrics.yaml"
OWN_FILE = "metriclint.toml"
CACHE_DIR = ".metriclint_cache"  # at the project root; METRICLINT_CACHE_DIR moves it


# Which rules run where, and how severe their findings are: `select`, `ignore`,
# `per-file-ignores` and `severity`, from the config and the command line. A selector is a
# rule code or a prefix of codes (`ML0` is every ML0xx rule), as in ruff.
CODES = tuple(rule.code for rule in RULES)


def known(selector: str) -> bool:
    return any(code.startswith(selector) for code in CODES) and bool(selector)


@dataclass(frozen=True)
class Selection:
    root: Path  # per-file-ignores globs are relative to it
    select: tuple[str, ...] = ("ML",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()

    def active(self, code: str, path: str) -> bool:
        """Whether rule `code` runs on the file shown as `path`."""
        if not _matches(code, self.select) or _matches(code, self.ignore):
            return False
        return not any(_matches(code, codes) and matches(Path(path), (glob,), self.root) for glob, codes in self.per_file_ignores)

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """The findings of active rules, at their configured severity."""
        return [self._severity(f) for f in findings if self.active(f.rule, f.span.path)]

    def _severity(self, finding: Finding) -> Finding:
        chosen = [(len(selector), level) for selector, level in self.severity if finding.rule.startswith(selector)]
        if not chosen:
            return finding
        return replace(finding, severity=max(chosen, key=lambda item: item[0])[1])


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(code.startswith(selector) for selector in selectors)


@dataclass(frozen=True)
class Config:
    root: Path  # the project root: the config file's folder, else the checked folder
    paths: tuple[Path, ...]
    exclude: tuple[str, ...]
    registry: Path | None  # None: run without a registry
    selection: Selection
    baseline: Path | None = None  # hide the findings recorded in this file
    changed: tuple[str, ...] | None = None  # report only findings touching these files (shown paths)
    tooltips: tuple[TooltipSetting, ...] = ()
    log_functions: tuple[str, ...] = ()  # the project's own logging helpers, by called name
    tests: tuple[str, ...] = DEFAULT_TESTS  # globs of the test files (see DEFAULT_TESTS)
    jobs: int = 0  # worker processes; 0: one per CPU
    max_file_size: int = MAX_BYTES  # a larger source file is ML900
    cache_dir: Path | None = None  # None: no cache


def with_speed(config: Config, jobs: int | None, cache_dir: str | None, no_cache: bool) -> Config:
    """The command line's --jobs, --cache-dir and --no-cache on top of the loaded settings."""
    if jobs is not None and jobs < 1:
        raise ConfigError([Problem("--jobs", 1, 1, f"--jobs must be at least 1, not {jobs}")])
    chosen = Path(cache_dir) if cache_dir else Path(os.environ.get("METRICLINT_CACHE_DIR") or config.root / CACHE_DIR)
    return replace(config, jobs=jobs or 0, cache_dir=None if no_cache else chosen)


def load(
    paths: tuple[str, ...],
    config_file: str | None,
    registry: str | None,
    *,
    select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
    baseline: str | None = None,
    changed_only: bool = False,
) -> Config:
    """Merge the defaults, the config file and the command line (which wins).

    With `changed_only` (the pre-commit hook), PATHS are the changed files: the whole project is
    read, since a contradiction spans files, and only findings touching PATHS are reported.
    """
    cwd = Path.cwd()
    file: Path | None
    if config_file is not None:
        file, base = Path(config_file), cwd
        table = _read_table(file, required=True) or {}
        root = cwd
    else:
        start = Path(paths[0]) if paths else cwd
        found = _find_settings(start.resolve() if start.is_dir() else start.resolve().parent)
        file, table = found if found else (None, {})
        checked = cwd if changed_only else start.resolve() if start.is_dir() else start.resolve().parent
        root = file.parent if file else checked
        base = root
    settings = _validate(table, file) if file else {}
    configured = tuple(base / p for p in settings.get("paths", ()))
    chosen_paths = (configured or (root,)) if changed_only else tuple(Path(p) for p in paths) or configured or (cwd,)
    bad = [s for s in (*select, *ignore) if not known(s)]
    if bad:
        raise ConfigError([Problem("<command line>", 1, 1, f"unknown rule selector '{s}'; see `metriclint rules`") for s in bad])
    selection = Selection(
        root,
        select or tuple(settings.get("select", ())) or Selection.select,
        tuple(settings.get("ignore", ())) + ignore,
        tuple((glob, tuple(codes)) for glob, codes in settings.get("per-file-ignores", {}).items()),
        tuple((code, Severity(level)) for code, level in settings.get("severity", {}).items()),
    )
    if baseline is not None:
        _given_file(baseline, "baseline", "--baseline")
    registry_path: Path | None
    if registry is not None:
        registry_path = _given_file(registry, "registry", "--registry")
    elif "registry" in settings and file is not None:  # only a file has settings
        registry_path = base / settings["registry"]
        why = _unusable(registry_path)
        if why is not None:
            line = _line_of(file, "registry")
            raise ConfigError([Problem(display(file), line, 1, f"registry file '{settings['registry']}' {why}")])
    else:
        default = root / DEFAULT_REGISTRY
        registry_path = default if _unusable(default) is None else None
    tooltips = _tooltips(settings.get("tooltips", []), file) if file else ()
    return Config(
        root, chosen_paths, tuple(settings.get("exclude", ())), registry_path, selection,
        Path(baseline) if baseline is not None else None,
        tuple(display(Path(p)) for p in paths) if changed_only else None,
        tooltips,
        tuple(settings.get("log_functions", ())),
        tuple(settings.get("tests", DEFAULT_TESTS)),
        max_file_size=settings.get("max_file_size", MAX_BYTES),
    )


def _given_file(name: str, what: str, option: str) -> Path:
    """The file an option names; a ConfigError at the path, or at the option when the path
    itself is unusable (too long for the file system), if it is not a readable file."""
    path = Path(name)
    why = _unusable(path)
    if why is None:
        return path
    where = name if why == "not found" else option
    raise ConfigError([Problem(where, 1, 1, f"{what} file {why} (given with {option})")])


def _unusable(path: Path) -> str | None:
    """Why `path` cannot be read as a file ("not found", or the system's reason), or None."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as error:
        return f"cannot be used: {error.strerror or error}"
    return None if stat.S_ISREG(mode) else "not found"


def _find_settings(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    for folder in (directory, *directory.parents):
        own = folder / OWN_FILE
        if own.is_file():
            return own, _read_table(own, required=True) or {}
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            table = _read_table(candidate, required=False)
            if table is not None:
                return candidate, table
        if (folder / ".git").exists():
            return None
    return None


def _read_table(file: Path, required: bool) -> dict[str, Any] | None:
    text = ""
    try:
        text = read_text(file)
        data = tomllib.loads(text)
    except OSError as error:
        raise ConfigError([Problem(display(file), 1, 1, f"cannot read the config: {error.strerror or error}")]) from None
    except UnicodeDecodeError:
        raise ConfigError([Problem(display(file), 1, 1, "the config is not UTF-8")]) from None
    except RecursionError:
        line, column = locate.deepest(text) or (1, 1)
        raise ConfigError([Problem(display(file), line, column, "invalid TOML: nested too deeply")]) from None
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        last = text.split("\n")[-1]  # tomllib says "at end of document" without a position
        line, column = (int(where.group(1)), int(where.group(2))) if where else (text.count("\n") + 1, len(last) + 1)
        message = re.sub(r"\s*\(at line \d+, column \d+\)|\s*\(at end of document\)", "", str(error))
        raise ConfigError([Problem(display(file), line, column, f"invalid TOML: {message}")]) from None
    except ValueError:  # an integer of more digits than Python converts
        line, column = locate.long_number(text) or (1, 1)
        message = f"invalid TOML: a number of more than {sys.get_int_max_str_digits()} digits"
        raise ConfigError([Problem(display(file), line, column, message)]) from None
    tool = data.get("tool", {})
    table = data if file.name == OWN_FILE else tool.get("metriclint") if isinstance(tool, dict) else None
    if table is None and required:
        raise ConfigError([Problem(display(file), 1, 1, "no [tool.metriclint] table in this file")])
    if table is not None and not isinstance(table, dict):
        raise ConfigError([Problem(display(file), _line_of(file, "metriclint"), 1, "tool.metriclint must be a table")])
    return table


def _validate(table: dict[str, Any], file: Path) -> dict[str, Any]:
    problems = []
    for key, value in table.items():
        line = _line_of(file, key)
        if key not in KEYS:
            expected = ", ".join(KEYS)
            problems.append(Problem(display(file), line, 1, f"unknown key '{key}' in [tool.metriclint]; expected one of: {expected}"))
        elif key == "registry" and not isinstance(value, str):
            problems.append(Problem(display(file), line, 1, "'registry' must be a string (a path)"))
        elif key in ("paths", "exclude", "tests", "select", "ignore", "log_functions") and not _strings(value):
            problems.append(Problem(display(file), line, 1, f"'{key}' must be a list of strings"))
        elif key in ("registry", "paths") and "\0" in "".join(value if isinstance(value, list) else [value]):
            problems.append(Problem(display(file), line, 1, f"'{key}' holds a NUL character, which no path can"))
        elif key == "max_file_size" and not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            problems.append(Problem(display(file), line, 1, "'max_file_size' must be a positive number of bytes"))
        elif key in ("select", "ignore"):
            problems += [Problem(display(file), line, 1, _unknown(code)) for code in value if not known(code)]
        elif key == "per-file-ignores" and not (isinstance(value, dict) and all(_strings(v) for v in value.values())):
            problems.append(Problem(display(file), line, 1, "'per-file-ignores' must map globs to lists of rule codes"))
        elif key == "per-file-ignores":
            problems += [Problem(display(file), line, 1, _unknown(c)) for codes in value.values() for c in codes if not known(c)]
        elif key == "severity" and not isinstance(value, dict):
            problems.append(Problem(display(file), line, 1, "'severity' must map rule codes to \"error\" or \"warning\""))
        elif key == "severity":
            levels = {s.value for s in Severity}
            problems += [Problem(display(file), line, 1, _unknown(c)) for c in value if not known(c)]
            problems += [
                Problem(display(file), line, 1, f"severity of {c} must be \"error\" or \"warning\", not {v!r}")
                for c, v in value.items() if v not in levels
            ]
        elif key == "tooltips":
            problems += _tooltip_problems(value, file)
    if problems:
        raise ConfigError(problems)
    return table


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _unknown(selector: str) -> str:
    return f"unknown rule selector '{selector}'; see `metriclint rules`"


def _tooltip_problems(value: Any, file: Path) -> list[Problem]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return [Problem(display(file), _line_of(file, "tooltips"), 1, "'tooltips' must be an array of tables: [[tool.metriclint.tooltips]]")]
    problems = []
    for number, item in enumerate(value):
        where = _tooltip_line(file, number)
        for key, setting in item.items():
            line = _line_of(file, key, where)
            if key not in TOOLTIP_KEYS:
                problems.append(Problem(display(file), line, 1, f"unknown key '{key}' in [[tool.metriclint.tooltips]]; expected one of: {', '.join(TOOLTIP_KEYS)}"))
            elif key in ("path", "table") and not isinstance(setting, str):
                problems.append(Problem(display(file), line, 1, f"'{key}' must be a string"))
            elif key == "match" and setting not in MATCH_MODES:
                problems.append(Problem(display(file), line, 1, f"unknown match mode {setting!r}; expected one of: {', '.join(MATCH_MODES)}"))
            elif key == "strip_prefix" and not isinstance(setting, bool):
                problems.append(Problem(display(file), line, 1, "'strip_prefix' must be true or false"))
        if "path" not in item:
            problems.append(Problem(display(file), where, 1, "a [[tool.metriclint.tooltips]] table needs 'path' (a glob of the files that hold it)"))
    return problems


def _tooltips(items: list[dict[str, Any]], file: Path) -> tuple[TooltipSetting, ...]:
    return tuple(
        TooltipSetting(
            item["path"], item.get("table"), item.get("match", "exact"), item.get("strip_prefix", False),
            Problem(display(file), _tooltip_line(file, number), 1, ""),
        )
        for number, item in enumerate(items)
    )


def _tooltip_line(file: Path, number: int) -> int:
    """The line of the `number`-th (0-based) `[[tool.metriclint.tooltips]]` header."""
    headers = [i for i, line in enumerate(_lines(file), 1) if line.strip().replace(" ", "") == "[[tool.metriclint.tooltips]]"]
    return headers[number] if number < len(headers) else 1


def _lines(file: Path) -> list[str]:
    try:
        return read_text(file).splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _line_of(file: Path, key: str, after: int = 0) -> int:
    """The line a key is set on (after line `after`); tomllib keeps no positions, so look for
    `key =` at a line start, or the header of its own table (`[tool.metriclint.severity]`)."""
    for number, line in enumerate(_lines(file), 1):
        stripped = line.lstrip()
        if number <= after:
            continue
        if stripped.startswith(key) and stripped[len(key):].lstrip().startswith("="):
            return number
        if stripped.replace(" ", "") in (f"[tool.metriclint.{key}]", f"[{key}]"):
            return number
    return 1
