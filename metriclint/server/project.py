"""One workspace folder's analysis, kept in memory between edits.

The project is collected once (with the cache, as `metriclint check` does); an edit replaces
one file's extraction with what its unsaved buffer holds and runs the checks again, so a
keystroke costs one file's parse and the project-wide steps, not the whole tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metriclint import engine, settings
from metriclint.base.paths import display
from metriclint.model import ConfigError, Finding, Problem
from metriclint.settings import Config
from metriclint.sources import SUFFIXES


@dataclass(frozen=True)
class WorkspaceOptions:
    """What the editor says about a folder (workspace settings): paths relative to the folder."""

    registry: str | None = None
    config: str | None = None
    runs: tuple[str, ...] = ()  # globs of the runs whose newest the hover reads (live/summary.py)

    def over(self, base: WorkspaceOptions) -> WorkspaceOptions:
        """These settings, with `base`'s where these set none: a folder's own over the workspace's."""
        return WorkspaceOptions(self.registry or base.registry, self.config or base.config, self.runs or base.runs)


def client_options(given: Any) -> WorkspaceOptions:
    """`{"registry": ..., "config": ...}`, or the same under `"metriclint"` (a client's settings section)."""
    if not isinstance(given, dict):
        return WorkspaceOptions()
    section = given.get("metriclint", given)
    section = section if isinstance(section, dict) else {}
    registry, config = (value if isinstance(value := section.get(name), str) and value else None for name in ("registry", "config"))
    runs = section.get("runs")
    return WorkspaceOptions(registry, config, tuple(r for r in runs if isinstance(r, str) and r) if isinstance(runs, list) else ())


class WorkspaceFolder:
    """A workspace folder: its settings, what its files hold, and what the checks found."""

    def __init__(self, root: Path, options: WorkspaceOptions = WorkspaceOptions()) -> None:
        self.root = root
        self.runs = options.runs
        self.config = _config(root, options)
        self.collection = engine.collect(self.config)
        self.analysis = engine.check(self.collection, self.config)

    def holds(self, path: Path) -> bool:
        """Whether an edit of `path` concerns this project: a file inside it that it reads, or its registry."""
        inside = path.resolve().is_relative_to(self.root.resolve())
        return inside and (path.suffix in SUFFIXES or self.is_registry(path) or self.knows(path))

    def knows(self, path: Path) -> bool:
        shown = display(path)
        return any(display(f) == shown for f in self.collection.files)

    def is_registry(self, path: Path) -> bool:
        registry = self.config.registry
        return registry is not None and path.resolve() == registry.resolve()

    def edit(self, buffers: dict[Path, bytes]) -> None:
        """Take the unsaved contents of the edited files and check again; only those files are read."""
        collection = self.collection
        for path, data in buffers.items():
            if self.is_registry(path):
                collection = engine.reregister(collection, self.config, _registry_text(path, data))
            else:
                collection = engine.revise(collection, self.config, path, data)
        self.collection = collection
        self.analysis = engine.check(collection, self.config, self.analysis)

    def findings(self) -> dict[str, list[Finding]]:
        """The reported findings by shown path."""
        found: dict[str, list[Finding]] = {}
        for finding in self.analysis.report.findings:
            found.setdefault(finding.span.path, []).append(finding)
        return found


def _registry_text(path: Path, data: bytes) -> str:
    """A registry buffer's text; one that is not UTF-8 (JSON carries a lone surrogate) is the
    registry's error, as a file's is."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError([Problem(display(path), 1, 1, f"cannot read the registry: {error}")]) from None


def _config(root: Path, options: WorkspaceOptions) -> Config:
    """The folder's settings as `metriclint check FOLDER` reads them, with the editor's paths on top."""
    config_file = str(root / options.config) if options.config else None
    registry = str(root / options.registry) if options.registry else None
    loaded = settings.load((str(root),), config_file, registry, base=root)
    return settings.with_speed(loaded, None, None, False)
