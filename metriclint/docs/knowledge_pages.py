"""The code knowledge page, from `rules/code/*.yaml`: one section per file, each entry with
what it says and the source it was read in (the comments written beside it).

The files differ in shape, so a section follows the file: its comments become prose, a list of
entries that say what a call returns becomes a table (each entry's comments its source), a long
entry and anything else are shown as written, comments included.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from metriclint.docs.markdown import cell, fenced

INTRO = (
    "# Code knowledge\n\n"
    "Generated from `rules/code/*.yaml`: what metriclint knows the code computes, each fact with "
    "the documentation or source it was read in. [Code evidence](../code-evidence.md) explains how "
    "the facts are followed through a project's code; a project adds its own in its registry's "
    "`code:` section or in `code-knowledge` files.\n"
)
NAMES = ("call", "method", "function", "expression", "construct", "entry", "unit", "facet")  # what an entry is known by, first found
FACTS = ("facts", "gives")
TABLE_LINES = 15  # an entry longer than this is shown whole, not as a row


def page(folder: Path) -> str:
    """The page for the files in `folder`, in the order of their names."""
    return "\n".join([INTRO, *(_file(path) for path in sorted(folder.glob("*.yaml")))])


def _file(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    root = yaml.compose("\n".join(lines) + "\n")
    assert isinstance(root, yaml.MappingNode), path
    parts = [f"## {path.name}\n"]
    for key, value in root.value:
        prose = _prose(_comments_above(lines, key.start_mark.line))
        parts.extend([prose] if prose else [])
        parts.append(_section(key, value, lines))
    return "\n".join(parts)


def _section(key: yaml.Node, value: yaml.Node, lines: list[str]) -> str:
    items = value.value if isinstance(value, yaml.SequenceNode) else []
    entries = [item for item in items if isinstance(item, yaml.MappingNode) and "says" in _data(item)]
    if not entries or len(entries) != len(items):
        return fenced("\n".join(lines[key.start_mark.line : _end(value, lines)]), "yaml")
    starts = [key.start_mark.line + 1] + [_end(item, lines) for item in entries[:-1]]  # an entry's comments may stand above it
    if any(_end(item, lines) - item.start_mark.line > TABLE_LINES for item in entries):
        return "\n".join(_whole(item, start, lines) for item, start in zip(entries, starts))
    rows = "".join(_row(item, start, lines) for item, start in zip(entries, starts))
    return f"`{key.value}`:\n\n| Known by | Says | Facts | Also | Source |\n|---|---|---|---|---|\n{rows}"


def _row(item: yaml.MappingNode, start: int, lines: list[str]) -> str:
    data = _data(item)
    name = _name(data)
    facts = next((_flow(data[k]) for k in FACTS if k in data), "")
    also = "; ".join(f"{k}: {_flow(v)}" for k, v in data.items() if k not in (name, "says", *FACTS))
    source = " ".join(line.strip().lstrip("#").strip() for line in lines[start : _end(item, lines)] if line.strip().startswith("#"))
    known = f"{name} `{_flow(data[name])}`" if name else ""
    return f"| {cell(known)} | {cell(str(data['says']))} | {cell(facts)} | {cell(also)} | {cell(source)} |\n"


def _whole(item: yaml.MappingNode, start: int, lines: list[str]) -> str:
    data = _data(item)
    name = _name(data)
    title = f"{name} `{_flow(_first(data[name]))}`: " if name else ""
    return f"{cell(title + str(data['says']))}\n\n" + fenced("\n".join(lines[start : _end(item, lines)]), "yaml")


def _first(value: object) -> object:
    """A list's first item (the title of an entry known by several names), else the value."""
    return value[0] if isinstance(value, list) and value else value


def _name(data: dict[str, object]) -> str:
    return next((k for k in NAMES if k in data), "")


def _data(node: yaml.Node) -> dict[str, object]:
    loader = yaml.SafeLoader("")
    try:
        constructed = loader.construct_document(node)
    finally:
        loader.dispose()
    return constructed if isinstance(constructed, dict) else {}


def _flow(value: object) -> str:
    if isinstance(value, str):
        return value
    return str(yaml.safe_dump(value, default_flow_style=True, width=math.inf, sort_keys=False)).strip().removesuffix("...").strip()


def _end(node: yaml.Node, lines: list[str]) -> int:
    """The line after `node`'s last, less the blank lines and comments that end it (those are
    about what follows)."""
    mark = node.end_mark
    end = mark.line + 1 if mark.line < len(lines) and lines[mark.line][: mark.column].strip() else mark.line
    while end > node.start_mark.line + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _comments_above(lines: list[str], line: int) -> list[str]:
    """The comment lines right above line `line`, at the left margin."""
    start = line
    while start > 0 and lines[start - 1].startswith("#"):
        start -= 1
    return lines[start:line]


def _prose(comments: list[str]) -> str:
    """Comment lines as Markdown: `#` alone parts paragraphs, `# - ` starts a list item."""
    blocks: list[str] = []
    current: list[str] = []
    for comment in comments + ["#"]:
        text = comment.lstrip("#").strip()
        if not text or text.startswith("- "):
            if current:
                blocks.append(" ".join(current))
            current = [text] if text else []
        else:
            current.append(text)
    joined = "".join(b + ("\n" if b.startswith("- ") and n.startswith("- ") else "\n\n") for b, n in zip(blocks, blocks[1:] + [""]))
    return joined.rstrip("\n") + "\n" if joined else ""
