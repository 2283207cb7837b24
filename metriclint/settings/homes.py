"""Which project a checked path belongs to, found as ruff finds a file's settings.

From the path's folder upward, up to the repository root (the folder holding `.git`), the
first folder with a settings file is the project's root: `.metriclint.toml`, `metriclint.toml`
or a `pyproject.toml` with a `[tool.metriclint]` table, preferred in that order within a
folder. The registry is the one its settings name, else the nearest `metrics.yaml` on the way
up (a sub-project may have settings of its own and share the repository's registry). Without a
settings file, the folder of the nearest `metrics.yaml` is the root. Outside a repository the
walk ends at that folder: a settings file further up (in /tmp, in a home folder) belongs to no
project of this one's, and once took it over, root, paths and all. A path with neither above
it is in the project of its repository (its root the repository's top, with no registry);
outside a repository it belongs to no project, and is checked on its own.

A whole project is read whatever part of it is checked, since a contradiction's other side
(the registry, another docstring) is usually in another file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from metriclint.base.paths import repository_root
from metriclint.extract.discover import discover
from metriclint.settings.table import PYPROJECT, read_table

SETTINGS_FILES = (".metriclint.toml", "metriclint.toml", PYPROJECT)
DEFAULT_REGISTRY = "metrics.yaml"


@dataclass(frozen=True)
class Home:
    """A project: its root, the settings file found there (None: defaults), and the nearest
    `metrics.yaml` on the way up from the checked path (None: none)."""

    root: Path  # absolute, resolved
    settings: Path | None
    nearest_registry: Path | None


def homes(paths: list[Path]) -> list[Home | None]:
    """The project each path belongs to (None: none), worked out once per folder: pre-commit
    hands over thousands of files from a few folders."""
    found: dict[Path, Home | None] = {}
    result = []
    for path in paths:
        resolved = path.resolve()
        folder = resolved if resolved.is_dir() else resolved.parent
        if folder not in found:
            found[folder] = _home(folder)
        result.append(found[folder])
    return result


def nested(outer: Home, folders: tuple[Path, ...]) -> tuple[Home, ...]:
    """The projects inside `outer`'s `folders` that have settings of their own: from a run at
    a monorepo's root each file is checked with its nearest settings, as ruff does, and as a
    run on the file itself finds them. Each is listed with the files (what git or the walk
    skips holds no project)."""
    if not folders:
        return ()
    found = discover(folders, (), outer.root, SETTINGS_FILES)
    candidates = {path.parent.resolve() for path in found if path.name in SETTINGS_FILES} - {outer.root}
    inner = {home for folder in sorted(candidates) if settings_file(folder) is not None and (home := _home(folder)) is not None}
    # only the outermost: a project nested in a nested one is that one's
    return tuple(h for h in inner if h.root != outer.root and not any(o.root != h.root and h.root.is_relative_to(o.root) for o in inner))


def _home(folder: Path) -> Home | None:
    repository = repository_root(folder)
    settings: Path | None = None
    nearest: Path | None = None
    for here in (folder, *folder.parents):
        settings = settings or settings_file(here)
        if nearest is None and _regular(here / DEFAULT_REGISTRY):
            nearest = here / DEFAULT_REGISTRY
        if (settings is not None and nearest is not None) or here == repository or (repository is None and nearest is not None):
            break
    if settings is not None:
        return Home(settings.parent, settings, nearest)
    if nearest is not None:
        return Home(nearest.parent, None, nearest)
    # Neither: the repository is the project, as the run from its top reads it; a subfolder
    # checked on its own missed the other side of its contradictions.
    return Home(repository, None, None) if repository is not None else None


def escaping_link(path: Path) -> tuple[Path, Path] | None:
    """The first link on `path` (as written, from the current directory) that leads out of the
    project it lies in, as (that project's root, where `path` really leads); None if there is
    none. A link's project is the one found for its folder, else its repository, else its
    folder: a link anyone may have committed redirects a write only within it. Naming the
    target itself writes it; a link that stays within its folder (the system's `/tmp`) is followed."""
    written = Path(os.getcwd(), path)  # not normalised: in `link/../x`, `..` is the link target's parent
    for place in (*reversed(written.parents), written):
        if not os.path.islink(place):
            continue
        folder = place.parent.resolve()
        home = _home(folder)
        root = home.root if home is not None else repository_root(folder) or folder
        if not Path(os.path.realpath(place)).is_relative_to(root):
            return root, Path(os.path.realpath(path))
    return None


def settings_file(folder: Path) -> Path | None:
    """The file that holds `folder`'s settings, if any (a pyproject.toml only with the table)."""
    for name in SETTINGS_FILES:
        candidate = folder / name
        if _regular(candidate) and (name != PYPROJECT or read_table(candidate, required=False) is not None):
            return candidate
    return None


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
