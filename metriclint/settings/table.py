"""A settings file's table: read (`[tool.metriclint]` in a pyproject.toml, the top level of a
metriclint.toml), and checked, each problem reported at its line.

tomllib keeps no positions: a problem's place is found in the document parsed again with
its positions (base/toml_places.py), and the value is shown as the file writes it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metriclint.base import locate
from metriclint.base.files import read_text
from metriclint.base.globs import Patterns
from metriclint.base.paths import display, repository_root
from metriclint.base.toml import tomllib
from metriclint.checks import RULES
from metriclint.model import ConfigError, Problem, Severity, TooltipSetting

if TYPE_CHECKING:
    from metriclint.base.places import Place, Places

KEYS = (
    "registry",
    "extend",
    "paths",
    "exclude",
    "extend-exclude",
    "tests",
    "select",
    "extend-select",
    "ignore",
    "extend-ignore",
    "per-file-ignores",
    "severity",
    "tooltips",
    "log-functions",
    "code-knowledge",
    "max-file-size",
    "max-cache-size",
)
LISTS = (
    "paths",
    "exclude",
    "extend-exclude",
    "tests",
    "select",
    "extend-select",
    "ignore",
    "extend-ignore",
    "log-functions",
    "code-knowledge",
)
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
        place = Located(file).places.value(("tool", "metriclint"))
        raise ConfigError([Problem(display(file), place.line, place.column, f"tool.metriclint must be a table, not {place.written}")])
    return table


@dataclass(frozen=True)
class FileSettings:
    """A settings file's checked values, under their kebab-case keys, with the files it
    `extend`s beneath them; and the notes to print (a deprecated spelling, at its line)."""

    values: dict[str, Any]
    notes: tuple[str, ...] = ()


class Located:
    """Where one settings file writes its keys and values, worked out when a problem or a note
    needs a place: keys by their path in the settings table (`("severity", "ML010")`), in the
    spelling the file uses (`log_functions` for `log-functions`)."""

    def __init__(self, file: Path) -> None:
        self.file, self.shown = file, display(file)
        self._places: Places | None = None

    @property
    def places(self) -> Places:
        from metriclint.base import places  # only once a problem needs a place: tree-sitter's TOML is not loaded otherwise

        if self._places is None:
            try:
                text = read_text(self.file)
            except (OSError, UnicodeDecodeError):
                text = ""
            self._places = places.in_toml(text)
        return self._places

    def key(self, *path: str | int) -> Place:
        return self.places.key(self._full(path))

    def value(self, *path: str | int) -> Place:
        return self.places.value(self._full(path))

    def at(self, message: str, *path: str | int, value_of: tuple[str | int, ...] | None = None) -> Problem:
        """A problem at the key `path`, or at the value `value_of` (`{value}` in the message
        becomes the value as written)."""
        place = self.key(*path) if value_of is None else self.value(*value_of)
        return Problem(self.shown, place.line, place.column, message.replace("{value}", place.written or "?"))

    def note(self, message: str, *path: str | int) -> str:
        place = self.key(*path)
        return f"{self.shown}:{place.line}:{place.column}: {message}"

    def _full(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        keys = self.places.keys
        prefix: tuple[str | int, ...] = ("tool", "metriclint") if ("tool", "metriclint") in keys or self.file.name == PYPROJECT else ()
        if path and isinstance(path[0], str) and (*prefix, path[0]) not in keys and (*prefix, path[0].replace("-", "_")) in keys:
            path = (path[0].replace("-", "_"), *path[1:])  # the older spelling
        return (*prefix, *path)


def load(file: Path, required: bool = True, seen: tuple[Path, ...] = ()) -> FileSettings:
    """The settings `file` holds, on top of those of the file its `extend` names (ruff's
    `extend`): its own keys replace the base's, the `extend-*` lists add to them, and the
    base's `registry`, `paths` and `code-knowledge` stay relative to the base's own folder."""
    own = validate(read_table(file, required) or {}, file)
    _confine(own, file)
    if "extend" not in own.values:
        return own
    values = dict(own.values)
    base_file = file.parent / values.pop("extend")
    where = Located(file)
    if base_file.resolve() in seen or base_file.resolve() == file.resolve():
        raise ConfigError([where.at(f"'extend' makes a circle through {display(base_file)}", value_of=("extend",))])
    if not base_file.is_file():
        raise ConfigError([where.at(f"'extend' names {display(base_file)}, which is not a file", value_of=("extend",))])
    base = load(base_file, False, (*seen, file.resolve()))
    inherited = anchored(base.values, base_file.parent)
    merged = {**inherited, **values} | {k: inherited.get(k, []) + values.get(k, []) for k in EXTENDING if k in inherited or k in values}
    return FileSettings(merged, base.notes + own.notes)


def _confine(settings: FileSettings, file: Path) -> None:
    """A settings file's `paths`, `registry` and `code-knowledge` stay inside its project (the repository that
    holds the file, else the file's folder): a file from a stranger's pull request must not make
    a run read `../../../../etc`, nor a link it commits (`paths = ["docs"]`, `docs` a link to
    `/etc`), so links are followed first. A path given on the command line may be anything."""
    folder = file.parent.resolve()
    boundary = repository_root(folder) or folder
    where = Located(file)
    problems = []
    for key in FILES:
        value = settings.values.get(key)
        for number, entry in _entries(value):
            if not Path(os.path.realpath(folder / entry)).is_relative_to(boundary):
                message = f"'{key}' entry '{entry}' is outside the project ({display(boundary)}); give it on the command line instead"
                problems.append(where.at(message, value_of=(key, *number)))
    if problems:
        raise ConfigError(problems)


def _entries(value: object) -> list[tuple[tuple[int, ...], str]]:
    """The paths a `registry` (one) or a list setting names, each with its index in the list."""
    if isinstance(value, str):
        return [((), value)]
    return [((number,), entry) for number, entry in enumerate(value)] if isinstance(value, list) else []


def anchored(values: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`registry`, `paths` and `code-knowledge` made absolute: they are relative to the file that set them."""
    anchored = dict(values)
    if "registry" in values:
        anchored["registry"] = str(folder.resolve() / values["registry"])
    for key in ("paths", "code-knowledge"):
        if key in values:
            anchored[key] = [str(folder.resolve() / p) for p in values[key]]
    return anchored


def validate(table: dict[str, Any], file: Path) -> FileSettings:
    """The table's values checked, every problem at its place with the value as written;
    snake_case keys (the old spelling) are read as their kebab-case form, with a note."""
    where = Located(file)
    notes = []
    spelled: dict[str, Any] = {}
    for key, value in table.items():
        kebab = key.replace("_", "-")
        if kebab != key and kebab in KEYS:
            notes.append(where.note(f"'{key}' is deprecated; write '{kebab}'", key))
            key = kebab
        spelled[key] = value
    problems = [problem for key, value in spelled.items() for problem in _problems(key, value, where)]
    if "tooltips" in spelled and isinstance(spelled["tooltips"], list):
        notes += [
            where.note("'strip_prefix' is deprecated; write 'strip-prefix'", "tooltips", number, "strip_prefix")
            for number, item in enumerate(spelled["tooltips"])
            if isinstance(item, dict) and "strip_prefix" in item
        ]
    if problems:
        raise ConfigError(problems)
    return FileSettings(spelled, tuple(notes))


def _problems(key: str, value: Any, where: Located) -> list[Problem]:
    """What is wrong with one setting, each at its place."""
    if key not in KEYS:
        return [where.at(f"unknown key '{key}' in [tool.metriclint]; expected one of: {', '.join(KEYS)}", key)]
    if key in ("registry", "extend"):
        what = "a path" if key == "registry" else "the path of a settings file"
        if not isinstance(value, str):
            return [where.at(f"'{key}' must be a string ({what}), not {{value}}", value_of=(key,))]
        return [where.at(f"'{key}' holds a NUL character, which no path can", value_of=(key,))] if "\0" in value else []
    if key in LISTS:
        return _list_problems(key, value, where)
    if key in ("max-file-size", "max-cache-size"):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return []
        return [where.at(f"'{key}' must be a positive number of bytes, not {{value}}", value_of=(key,))]
    if key == "per-file-ignores":
        if not isinstance(value, dict):
            return [where.at("'per-file-ignores' must map globs to lists of rule codes, not {value}", value_of=(key,))]
        found = [p for glob in value for p in _glob_problems(key, glob, where, (key, glob))]
        return found + [p for glob, codes in value.items() for p in _list_problems(key, codes, where, glob)]
    if key == "severity":
        if not isinstance(value, dict):
            return [where.at('\'severity\' must map rule codes to "error" or "warning", not {value}', value_of=(key,))]
        levels = {s.value for s in Severity}
        return [where.at(_unknown(code), key, code) for code in value if not known(code)] + [
            where.at(f'severity of {code} must be "error" or "warning", not {{value}}', value_of=(key, code))
            for code, level in value.items()
            if not (isinstance(level, str) and level in levels)
        ]
    return _tooltip_problems(value, where)


def _list_problems(key: str, value: Any, where: Located, within: str | None = None) -> list[Problem]:
    """A list of strings: each entry at its place (`within`: the per-file-ignores glob it is under)."""
    path: tuple[str | int, ...] = (key,) if within is None else (key, within)
    wrong = (
        f"'{key}' must be a list of strings, not {{value}}"
        if within is None
        else "'per-file-ignores' must map globs to lists of rule codes, not {value}"
    )
    if not isinstance(value, list):
        return [where.at(wrong, value_of=path)]
    problems = []
    for number, entry in enumerate(value):
        at: tuple[str | int, ...] = (*path, number)
        if not isinstance(entry, str):
            problems.append(where.at(wrong, value_of=at))
        elif key in (*FILES, "extend") and "\0" in entry:
            problems.append(where.at(f"'{key}' holds a NUL character, which no path can", value_of=at))
        elif key in SELECTORS or key == "per-file-ignores":
            problems += [where.at(_unknown(entry), value_of=at)] if not known(entry) else []
        elif key in ("exclude", "extend-exclude"):
            problems += _glob_problems(key, entry, where, at)
    return problems


def _glob_problems(key: str, glob: str, where: Located, at: tuple[str | int, ...]) -> list[Problem]:
    """A gitignore-style pattern that pathspec cannot read (`!` alone), at its place."""
    try:
        Patterns((glob,), Path("."))
    except (ValueError, TypeError):  # pathspec's GitIgnorePatternError is a ValueError
        place = where.key(*at) if key == "per-file-ignores" else where.value(*at)
        return [Problem(where.shown, place.line, place.column, f"'{key}' pattern {_quoted(glob)} is not a valid gitignore-style pattern")]
    return []


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _unknown(selector: str) -> str:
    return f"unknown rule selector '{selector}'; see `metriclint rules`"


def _tooltip_problems(value: Any, where: Located) -> list[Problem]:
    if not isinstance(value, list):
        return [where.at("'tooltips' must be an array of tables: [[tool.metriclint.tooltips]], not {value}", value_of=("tooltips",))]
    problems = []
    for number, item in enumerate(value):
        if not isinstance(item, dict):
            problems.append(
                where.at("'tooltips' must be an array of tables: [[tool.metriclint.tooltips]], not {value}", value_of=("tooltips", number))
            )
            continue
        for written, setting in item.items():
            key, at = written.replace("_", "-"), ("tooltips", number, written)
            if key not in TOOLTIP_KEYS:
                problems.append(
                    where.at(f"unknown key '{key}' in [[tool.metriclint.tooltips]]; expected one of: {', '.join(TOOLTIP_KEYS)}", *at)
                )
            elif key in ("path", "table") and not isinstance(setting, str):
                problems.append(where.at(f"'{key}' must be a string, not {{value}}", value_of=at))
            elif key == "match" and not (isinstance(setting, str) and setting in MATCH_MODES):
                problems.append(where.at(f"unknown match mode {{value}}; expected one of: {', '.join(MATCH_MODES)}", value_of=at))
            elif key == "strip-prefix" and not isinstance(setting, bool):
                problems.append(where.at(f"'{written}' must be true or false, not {{value}}", value_of=at))
        if "path" not in item:
            problems.append(
                where.at("a [[tool.metriclint.tooltips]] table needs 'path' (a glob of the files that hold it)", "tooltips", number)
            )
    return problems


def tooltips(items: list[dict[str, Any]], file: Path) -> tuple[TooltipSetting, ...]:
    where = Located(file)
    return tuple(
        TooltipSetting(
            item["path"],
            item.get("table"),
            item.get("match", "exact"),
            item.get("strip-prefix", item.get("strip_prefix", False)),
            where.at("", "tooltips", number),
        )
        for number, item in enumerate(items)
    )
