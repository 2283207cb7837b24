"""A settings file's table: read (`[tool.metriclint]` in a pyproject.toml, the top level of a
metriclint.toml), and checked, each problem reported at its line.

tomllib keeps no positions, so a problem's line is found by the parser again (base/toml.py).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metriclint.base import locate
from metriclint.base.files import read_text
from metriclint.base.paths import display, repository_root
from metriclint.base.toml import key_lines, tomllib
from metriclint.checks import RULES
from metriclint.model import ConfigError, Problem, Severity, TooltipSetting

KEYS = (
    "registry", "extend", "paths", "exclude", "extend-exclude", "tests", "select", "extend-select", "ignore", "extend-ignore",
    "per-file-ignores", "severity", "tooltips", "log-functions", "code-knowledge", "max-file-size", "max-cache-size",
)
LISTS = ("paths", "exclude", "extend-exclude", "tests", "select", "extend-select", "ignore", "extend-ignore", "log-functions", "code-knowledge")
FILES = ("paths", "registry", "code-knowledge")  # paths relative to the settings file's folder, kept inside its project
SELECTORS = ("select", "extend-select", "ignore", "extend-ignore")
EXTENDING = ("extend-exclude", "extend-select", "extend-ignore")  # added to what an `extend`ed file says, not replacing it
TOOLTIP_KEYS = ("path", "table", "match", "strip-prefix")
MATCH_MODES = ("exact", "prefix", "suffix", "substring", "regex", "glob")
PYPROJECT = "pyproject.toml"
CODES = tuple(rule.code for rule in RULES)


def known(selector: str) -> bool:
    """Whether `selector` is a rule code or a prefix of codes (`ML0` is every ML0xx rule)."""
    return any(code.startswith(selector) for code in CODES) and bool(selector)


def read_table(file: Path, required: bool) -> dict[str, Any] | None:
    """The settings a file holds: a pyproject.toml's `[tool.metriclint]` table (None if it has
    none), any other file's `[tool.metriclint]` table or else its top level, so a table
    copied from a pyproject.toml works in a metriclint.toml or a file given with --config.
    `required`: a pyproject.toml without the table is an error, not None."""
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
    own = tool.get("metriclint") if isinstance(tool, dict) else None
    table = own if own is not None or file.name == PYPROJECT else data
    if table is None and required:
        raise ConfigError([Problem(display(file), 1, 1, "no [tool.metriclint] table in this file")])
    if table is not None and not isinstance(table, dict):
        raise ConfigError([Problem(display(file), line_of(file, "metriclint"), 1, "tool.metriclint must be a table")])
    return table


@dataclass(frozen=True)
class Settings:
    """A settings file's checked values, under their kebab-case keys, with the files it
    `extend`s beneath them; and the notes to print (a deprecated spelling, at its line)."""

    values: dict[str, Any]
    notes: tuple[str, ...] = ()


def load(file: Path, required: bool = True, seen: tuple[Path, ...] = ()) -> Settings:
    """The settings `file` holds, on top of those of the file its `extend` names (ruff's
    `extend`): its own keys replace the base's, the `extend-*` lists add to them, and the
    base's `registry`, `paths` and `code-knowledge` stay relative to the base's own folder."""
    own = validate(read_table(file, required) or {}, file)
    _confine(own, file)
    if "extend" not in own.values:
        return own
    values = dict(own.values)
    base_file = file.parent / values.pop("extend")
    if base_file.resolve() in seen or base_file.resolve() == file.resolve():
        raise ConfigError([Problem(display(file), line_of(file, "extend"), 1, f"'extend' makes a circle through {display(base_file)}")])
    if not base_file.is_file():
        raise ConfigError([Problem(display(file), line_of(file, "extend"), 1, f"'extend' names {display(base_file)}, which is not a file")])
    base = load(base_file, False, (*seen, file.resolve()))
    inherited = anchored(base.values, base_file.parent)
    merged = {**inherited, **values} | {k: inherited.get(k, []) + values.get(k, []) for k in EXTENDING if k in inherited or k in values}
    return Settings(merged, base.notes + own.notes)


def _confine(settings: Settings, file: Path) -> None:
    """A settings file's `paths`, `registry` and `code-knowledge` stay inside its project (the repository that
    holds the file, else the file's folder): a file from a stranger's pull request must not make
    a run read `../../../../etc`. A path given on the command line may be anything."""
    folder = file.parent.resolve()
    boundary = repository_root(folder) or folder
    problems = []
    for key in FILES:
        value = settings.values.get(key)
        for entry in [value] if isinstance(value, str) else value or ():
            if not Path(os.path.normpath(folder / entry)).is_relative_to(boundary):
                message = f"'{key}' entry '{entry}' is outside the project ({display(boundary)}); give it on the command line instead"
                problems.append(Problem(display(file), line_of(file, key), 1, message))
    if problems:
        raise ConfigError(problems)


def anchored(values: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`registry`, `paths` and `code-knowledge` made absolute: they are relative to the file that set them."""
    anchored = dict(values)
    if "registry" in values:
        anchored["registry"] = str(folder.resolve() / values["registry"])
    for key in ("paths", "code-knowledge"):
        if key in values:
            anchored[key] = [str(folder.resolve() / p) for p in values[key]]
    return anchored


def validate(table: dict[str, Any], file: Path) -> Settings:
    """The table's values checked, every problem at its line; snake_case keys (the old
    spelling) are read as their kebab-case form, with a note."""
    problems = []
    notes = []
    spelled: dict[str, Any] = {}
    for key, value in table.items():
        kebab = key.replace("_", "-")
        if kebab != key and kebab in KEYS:
            notes.append(f"{display(file)}:{line_of(file, key)}:1: '{key}' is deprecated; write '{kebab}'")
            key = kebab
        spelled[key] = value
    written = {key.replace("_", "-"): key for key in table}  # the spelling to find a key's line by
    for key, value in spelled.items():
        line = line_of(file, written.get(key, key))
        if key not in KEYS:
            expected = ", ".join(KEYS)
            problems.append(Problem(display(file), line, 1, f"unknown key '{key}' in [tool.metriclint]; expected one of: {expected}"))
        elif key == "registry" and not isinstance(value, str):
            problems.append(Problem(display(file), line, 1, "'registry' must be a string (a path)"))
        elif key in LISTS and not _strings(value):
            problems.append(Problem(display(file), line, 1, f"'{key}' must be a list of strings"))
        elif key == "extend" and not isinstance(value, str):
            problems.append(Problem(display(file), line, 1, "'extend' must be a string (the path of a settings file)"))
        elif key in (*FILES, "extend") and "\0" in "".join(value if isinstance(value, list) else [value]):
            problems.append(Problem(display(file), line, 1, f"'{key}' holds a NUL character, which no path can"))
        elif key in ("max-file-size", "max-cache-size") and not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            problems.append(Problem(display(file), line, 1, f"'{key}' must be a positive number of bytes"))
        elif key in SELECTORS:
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
            notes += _tooltip_notes(value, file)
    if problems:
        raise ConfigError(problems)
    return Settings(spelled, tuple(notes))


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _unknown(selector: str) -> str:
    return f"unknown rule selector '{selector}'; see `metriclint rules`"


def _tooltip_problems(value: Any, file: Path) -> list[Problem]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return [Problem(display(file), line_of(file, "tooltips"), 1, "'tooltips' must be an array of tables: [[tool.metriclint.tooltips]]")]
    problems = []
    for number, item in enumerate(value):
        where = _tooltip_line(file, number)
        for written, setting in item.items():
            line, key = line_of(file, written, where), written.replace("_", "-")
            if key not in TOOLTIP_KEYS:
                problems.append(Problem(display(file), line, 1, f"unknown key '{key}' in [[tool.metriclint.tooltips]]; expected one of: {', '.join(TOOLTIP_KEYS)}"))
            elif key in ("path", "table") and not isinstance(setting, str):
                problems.append(Problem(display(file), line, 1, f"'{key}' must be a string"))
            elif key == "match" and setting not in MATCH_MODES:
                problems.append(Problem(display(file), line, 1, f"unknown match mode {setting!r}; expected one of: {', '.join(MATCH_MODES)}"))
            elif key == "strip-prefix" and not isinstance(setting, bool):
                problems.append(Problem(display(file), line, 1, f"'{written}' must be true or false"))
        if "path" not in item:
            problems.append(Problem(display(file), where, 1, "a [[tool.metriclint.tooltips]] table needs 'path' (a glob of the files that hold it)"))
    return problems


def _tooltip_notes(value: Any, file: Path) -> list[str]:
    """A note for each tooltip table that spells `strip-prefix` the old way."""
    if not isinstance(value, list):
        return []
    return [
        f"{display(file)}:{line_of(file, 'strip_prefix', _tooltip_line(file, number))}:1: 'strip_prefix' is deprecated; write 'strip-prefix'"
        for number, item in enumerate(value) if isinstance(item, dict) and "strip_prefix" in item
    ]


def tooltips(items: list[dict[str, Any]], file: Path) -> tuple[TooltipSetting, ...]:
    return tuple(
        TooltipSetting(
            item["path"], item.get("table"), item.get("match", "exact"), item.get("strip-prefix", item.get("strip_prefix", False)),
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


def line_of(file: Path, key: str, after: int = 0) -> int:
    """The line a settings key is set on (after line `after`), as the TOML parser finds it
    (base/toml.py): a dotted key or a table's header too; those in `[tool.metriclint]` first."""
    try:
        found = key_lines(read_text(file))
    except (OSError, UnicodeDecodeError):
        return 1
    lines = sorted((path[:2] != ("tool", "metriclint"), line) for path, line in found.items() if path and path[-1] == key and line > after)
    return lines[0][1] if lines else 1
