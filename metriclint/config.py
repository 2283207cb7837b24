"""Settings: `[tool.metriclint]` in the nearest pyproject.toml, or a file given with --config.

The nearest table is looked for from the checked path upward, stopping at the repository
root, as ruff does. Relative paths in a discovered file resolve against its folder; in a file
given with --config, against the current directory.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metriclint.discover import display
from metriclint.model import ConfigError, Problem

KEYS = ("registry", "paths", "exclude")
DEFAULT_REGISTRY = "metrics.yaml"


@dataclass(frozen=True)
class Config:
    root: Path  # the project root: the config file's folder, else the checked folder
    paths: tuple[Path, ...]
    exclude: tuple[str, ...]
    registry: Path | None  # None: run without a registry


def load(paths: tuple[str, ...], config_file: str | None, registry: str | None) -> Config:
    """Merge the defaults, the config file and the command line (which wins)."""
    cwd = Path.cwd()
    if config_file is not None:
        file, base = Path(config_file), cwd
        table = _read_table(file, required=True) or {}
        root = cwd
    else:
        start = Path(paths[0]) if paths else cwd
        found = _find_pyproject(start.resolve() if start.is_dir() else start.resolve().parent)
        file, table = found if found else (None, {})
        root = file.parent if file else (start.resolve() if start.is_dir() else start.resolve().parent)
        base = root
    settings = _validate(table, file) if file else {}
    chosen_paths = tuple(Path(p) for p in paths) or tuple(base / p for p in settings.get("paths", ())) or (cwd,)
    if registry is not None:
        registry_path: Path | None = Path(registry)
        if not registry_path.is_file():
            raise ConfigError([Problem(registry, 1, 1, "registry file not found (given with --registry)")])
    elif "registry" in settings:
        registry_path = base / settings["registry"]
        if not registry_path.is_file():
            line = _line_of(file, "registry") if file else 1
            raise ConfigError([Problem(display(file), line, 1, f"registry file '{settings['registry']}' not found")])
    else:
        default = root / DEFAULT_REGISTRY
        registry_path = default if default.is_file() else None
    return Config(root, chosen_paths, tuple(settings.get("exclude", ())), registry_path)


def _find_pyproject(directory: Path) -> tuple[Path, dict[str, Any]] | None:
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            table = _read_table(candidate, required=False)
            if table is not None:
                return candidate, table
        if (folder / ".git").exists():
            return None
    return None


def _read_table(file: Path, required: bool) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError([Problem(display(file), 1, 1, f"cannot read the config: {error.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError([Problem(display(file), 1, 1, "the config is not UTF-8")]) from None
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line, column = (int(where.group(1)), int(where.group(2))) if where else (1, 1)
        message = re.sub(r"\s*\(at line \d+, column \d+\)|\s*\(at end of document\)", "", str(error))
        raise ConfigError([Problem(display(file), line, column, f"invalid TOML: {message}")]) from None
    table = data.get("tool", {}).get("metriclint")
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
            problems.append(Problem(display(file), line, 1, f"unknown key '{key}' in [tool.metriclint]; expected one of: {', '.join(KEYS)}"))
        elif key == "registry" and not isinstance(value, str):
            problems.append(Problem(display(file), line, 1, "'registry' must be a string (a path)"))
        elif key in ("paths", "exclude") and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            problems.append(Problem(display(file), line, 1, f"'{key}' must be a list of strings"))
    if problems:
        raise ConfigError(problems)
    return table


def _line_of(file: Path, key: str) -> int:
    """The line a key is set on; tomllib keeps no positions, so look for `key =` at a line start."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    for number, line in enumerate(lines, 1):
        stripped = line.lstrip()
        if stripped.startswith(key) and stripped[len(key):].lstrip().startswith("="):
            return number
    return 1
