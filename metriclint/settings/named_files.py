"""The files the settings and the command line name (a registry, code knowledge files).

Each must be a readable file; one that is not is a ConfigError at the option or at the
setting's line, so that the user sees where they named it rather than a failed read later."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from metriclint.model import ConfigError, Problem
from metriclint.settings.table import Located


def code_knowledge_files(root: Path, file: Path | None, names: list[str]) -> tuple[Path, ...]:
    """The files `code-knowledge` names (only a settings file can); one that cannot be read is
    an error at the setting's line, as a missing registry is."""
    if file is None:
        return ()
    found = tuple(root / name for name in names)
    problems = [
        Located(file).at(f"code knowledge file '{name}' {why}", value_of=("code-knowledge", number))
        for number, (name, path) in enumerate(zip(names, found))
        if (why := why_unusable(path)) is not None
    ]
    if problems:
        raise ConfigError(problems)
    return found


def given_file(name: str, what: str, option: str) -> Path:
    """The file an option names; a ConfigError at the path, or at the option when the path
    itself is unusable (too long for the file system), if it is not a readable file."""
    path = Path(name)
    why = why_unusable(path)
    if why is None:
        return path
    where = name if why in ("not found", "is not a regular file") else option  # else the path may be unprintable
    raise ConfigError([Problem(where, 0, 0, f"{what} file {why} (given with {option})")])


def why_unusable(path: Path) -> str | None:
    """Why `path` cannot be read as a file ("not found", or the system's reason), or None."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as error:
        return f"cannot be used: {error.strerror or error}"
    return None if stat.S_ISREG(mode) else "is not a regular file"
