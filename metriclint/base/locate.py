"""Where an input went wrong when its parser does not say: tomllib and json give up on deep
nesting with a bare RecursionError, and tomllib on a huge integer with a ValueError, neither
with a position. An error must still point at its line and column.

These scans run only after the parser failed, on text it already refused.
"""

from __future__ import annotations

import re
import sys

_OPEN, _CLOSE = "[{", "]}"


def deepest(text: str) -> tuple[int, int] | None:
    """Line and column (1-based) of the first bracket that opens the deepest level of `[`/`{`
    nesting, skipping quoted strings and `#` comments (TOML's and JSON's lexical rules, as far
    as brackets go); None if nothing nests."""
    depth = best = 0
    found: int | None = None
    position, quote = 0, ""
    while position < len(text):
        char = text[position]
        if quote:
            if char == "\\" and quote == '"':
                position += 1
            elif char == quote or char == "\n":
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            end = text.find("\n", position)
            position = len(text) if end < 0 else end
        elif char in _OPEN:
            depth += 1
            if depth > best:
                best, found = depth, position
        elif char in _CLOSE:
            depth = max(0, depth - 1)
        position += 1
    return None if found is None else place(text, found)


def long_number(text: str) -> tuple[int, int] | None:
    """Where the first integer with more digits than Python converts starts, or None."""
    limit = sys.get_int_max_str_digits()
    match = re.search(rf"\d(?:_?\d){{{limit},}}", text) if limit else None
    return None if match is None else place(text, match.start())


def place(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of `offset` in `text`."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
