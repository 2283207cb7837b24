"""Split a docstring into the blocks that speak for one name each.

Google (`Args:`), NumPy (`Parameters` over a dashed line) and Sphinx (`:param x:`) styles are
recognised line by line, on the raw docstring, so every block keeps exact positions. A block
is a documented parameter, attribute or return value, or a paragraph of free text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GOOGLE_SECTIONS = {
    "args": "param",
    "arguments": "param",
    "parameters": "param",
    "params": "param",
    "keyword args": "param",
    "keyword arguments": "param",
    "other parameters": "param",
    "attributes": "attribute",
    "returns": "returns",
    "return": "returns",
    "yields": "returns",
    "yield": "returns",
    "note": "text",
    "notes": "text",
    "warning": "text",
    "warnings": "text",
    "raises": "skip",
    "example": "skip",
    "examples": "skip",
    "see also": "skip",
    "references": "skip",
    "todo": "skip",
    "methods": "skip",
}
_SPHINX_FIELDS = {
    "param": "param",
    "parameter": "param",
    "arg": "param",
    "argument": "param",
    "key": "param",
    "keyword": "param",
    "ivar": "attribute",
    "cvar": "attribute",
    "var": "attribute",
    "returns": "returns",
    "return": "returns",
    "yields": "returns",
    "yield": "returns",
}
_SPHINX = re.compile(r":(?P<field>\w+)(?P<args>[^:]*):")
_ENTRY_NAME = re.compile(r"\*{0,2}(?P<name>[A-Za-z_][\w.]*)\s*(?:\([^)]*\))?\s*:(?!:)")
_NUMPY_ENTRY = re.compile(r"\*{0,2}(?P<name>[A-Za-z_]\w*)\s*(?::|$)")
_DASHES = re.compile(r"-{3,}\s*$")


@dataclass(frozen=True, slots=True)
class Block:
    """Text that speaks for `name`. `pieces` are (line index, start column, end column)."""

    kind: str  # param | attribute | returns | text
    name: str  # "" for free text and unnamed return values
    pieces: tuple[tuple[int, int, int], ...]


def parse(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    paragraph: list[tuple[int, int, int]] = []

    def flush() -> None:
        if paragraph:
            blocks.append(Block("text", "", tuple(paragraph)))
            paragraph.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = _indent(line)
        header = stripped[:-1].lower() if stripped.endswith(":") else None
        if not stripped or stripped.startswith(">>>"):
            flush()
            i += 1
        elif (sphinx := _SPHINX.match(stripped)) is not None:
            flush()
            i = _sphinx_field(lines, i, sphinx, blocks)
        elif header in _GOOGLE_SECTIONS:
            flush()
            i = _google_section(lines, i + 1, indent, _GOOGLE_SECTIONS[header], blocks)
        elif i + 1 < len(lines) and _DASHES.match(lines[i + 1].strip()) and stripped.lower() in _GOOGLE_SECTIONS:
            flush()
            i = _numpy_section(lines, i + 2, indent, _GOOGLE_SECTIONS[stripped.lower()], blocks)
        else:
            paragraph.append((i, indent, len(line.rstrip())))
            i += 1
    flush()
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _continuation(lines: list[str], i: int, deeper_than: int) -> tuple[list[tuple[int, int, int]], int]:
    """The lines from `i` on that are indented more than `deeper_than`; stops at a blank line."""
    pieces = []
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > deeper_than:
        pieces.append((i, _indent(lines[i]), len(lines[i].rstrip())))
        i += 1
    return pieces, i


def _after(line: str, index: int, offset: int) -> tuple[int, int, int]:
    """The piece of line `index` after `offset`, blanks trimmed; empty (at the text's end) when
    only blanks follow, as in `:param x:` with trailing spaces."""
    end = len(line.rstrip())
    return index, min(len(line) - len(line[offset:].lstrip()), end), end


def _sphinx_field(lines: list[str], i: int, match: re.Match[str], blocks: list[Block]) -> int:
    line = lines[i]
    kind = _SPHINX_FIELDS.get(match.group("field").lower(), "skip")
    args = match.group("args").split()
    pieces, end = _continuation(lines, i + 1, _indent(line))
    if kind != "skip":
        name = args[-1].lstrip("*") if args and kind != "returns" else ""
        blocks.append(Block(kind, name, (_after(line, i, _indent(line) + match.end()), *pieces)))
    return end


def _section_body(lines: list[str], i: int, floor: int, stop_at_numpy_header: bool) -> int:
    """The index of the first line from `i` on that no longer belongs to the section."""
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) < floor:
            break
        if stop_at_numpy_header and i + 1 < len(lines) and _DASHES.match(lines[i + 1].strip()):
            break
        i += 1
    return i


def _google_section(lines: list[str], i: int, header_indent: int, kind: str, blocks: list[Block]) -> int:
    """Entries of a Google section (indented below its header); returns the next line's index."""
    end = _section_body(lines, i, header_indent + 1, stop_at_numpy_header=False)
    _entries(lines, i, end, kind, _ENTRY_NAME, blocks)
    return end


def _numpy_section(lines: list[str], i: int, header_indent: int, kind: str, blocks: list[Block]) -> int:
    """Entries of a NumPy section (`name : type` at the header's indent); returns the next index."""
    end = _section_body(lines, i, header_indent, stop_at_numpy_header=True)
    _entries(lines, i, end, kind, _NUMPY_ENTRY, blocks)
    return end


def _entries(lines: list[str], i: int, end: int, kind: str, entry: re.Pattern[str], blocks: list[Block]) -> None:
    """Split a section body into one block per documented name.

    Google puts the description after the name's colon, NumPy on the indented lines below;
    either way the text is what follows the name on its line plus the deeper lines under it.
    """
    filled = [j for j in range(i, end) if lines[j].strip()]
    if not filled or kind == "skip":
        return
    if kind == "text" or (kind == "returns" and entry is _ENTRY_NAME):
        # Free text, and Google's "Returns:", which describes one unnamed value in prose.
        blocks.append(Block(kind, "", tuple((j, _indent(lines[j]), len(lines[j].rstrip())) for j in filled)))
        return
    entry_indent = _indent(lines[filled[0]])
    j = filled[0]
    while j < end:
        line = lines[j]
        match = entry.match(line, entry_indent) if line.strip() and _indent(line) == entry_indent else None
        if match is None:
            j += 1
            continue
        name = match.group("name")
        if entry is _NUMPY_ENTRY:
            head: tuple[tuple[int, int, int], ...] = ()
            if kind == "returns" and ":" not in line:
                name = ""  # a NumPy return entry may give only the type
        else:
            head = (_after(line, j, match.end()),)
        pieces, j = _continuation(lines, j + 1, entry_indent)
        blocks.append(Block(kind, name, head + tuple(pieces)))
