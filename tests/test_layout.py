"""The package's layout: every import points down the pipeline, and no module-level import
closes a circle. A newcomer reads the stages bottom to top; an arrow upwards would mean a
stage needs one that runs after it."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "metriclint"
# Bottom to top: a module may import from its own level or below.
LEVELS = (
    ("metriclint", "metriclint.model", "metriclint.base"),
    ("metriclint.knowledge",),
    ("metriclint.sources",),
    ("metriclint.language",),
    ("metriclint.extract",),
    ("metriclint.evidence",),
    ("metriclint.checks",),
    ("metriclint.settings", "metriclint.filters", "metriclint.baseline"),
    ("metriclint.engine",),
    ("metriclint.report", "metriclint.fix", "metriclint.authoring", "metriclint.live"),
    (
        "metriclint.cli",
        "metriclint.__main__",
        "metriclint.server",
        "metriclint.docs",
    ),  # docs: the rules' examples run through the command line
)


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _level(module: str) -> int:
    """The level of the longest prefix that names a stage (`metriclint` alone is level 0)."""
    best = max(
        (
            (len(prefix), level)
            for level, prefixes in enumerate(LEVELS)
            for prefix in prefixes
            if module == prefix or module.startswith(prefix + ".")
        ),
    )
    return best[1]


def _imports(path: Path, module: str, top_level_only: bool) -> set[str]:
    """The metriclint modules `path` imports (`from metriclint.x import y` counts `metriclint.x.y`
    when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("metriclint"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("metriclint"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found - {module}


MODULES = {_name(p): p for p in PACKAGE.rglob("*.py")}


def test_every_import_points_down_the_pipeline() -> None:
    upward = [
        f"{module} (level {_level(module)}) imports {target} (level {_level(target)})"
        for module, path in MODULES.items()
        for target in _imports(path, module, top_level_only=False)
        if _level(target) > _level(module)
    ]
    assert upward == []


def test_no_module_level_import_closes_a_circle() -> None:
    graph = {module: _imports(path, module, top_level_only=True) & MODULES.keys() for module, path in MODULES.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append(trail[trail.index(target) :] + [module, target] if target in trail else [module, target])
            elif target not in state:
                visit(target, trail + [module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    assert circles == []


def test_no_parser_imports_a_check_or_a_later_stage() -> None:
    later = ("metriclint.checks", "metriclint.filters", "metriclint.cli", "metriclint.engine", "metriclint.settings")
    reached = [
        (module, target)
        for module, path in MODULES.items()
        if module.startswith(("metriclint.sources", "metriclint.language"))
        for target in _imports(path, module, top_level_only=False)
        if target.startswith(later)
    ]
    assert reached == []


def test_every_stage_folder_says_what_it_takes_and_gives() -> None:
    """A newcomer reads a folder's `__init__.py` first: it names the stage's input and output."""
    folders = sorted({p.parent for p in PACKAGE.rglob("*.py")} - {PACKAGE})
    unsaid = []
    for folder in folders:
        init = folder / "__init__.py"
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) if init.is_file() else None
        if doc is None or "Takes" not in doc or "gives" not in doc:
            unsaid.append(folder.relative_to(PACKAGE).as_posix())
    assert unsaid == []
