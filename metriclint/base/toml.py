"""TOML parsing on every supported Python: the standard library's `tomllib` from 3.11 on, and
before that `tomli`, the package it was taken from (the same parser, errors and messages);
and where each key is set, which tomllib does not keep."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

__all__ = ["key_lines", "tomllib"]

Path = tuple  # a key's path: table names and keys, and an array of tables' index


def key_lines(text: str) -> dict[Path, int]:
    """The line (1-based) each key path of a TOML document is set on: a table's at its header,
    a key's where its statement starts, dotted keys (`tool.metriclint.select = [...]`) and
    values over several lines included. The parser itself tells: each prefix of the document
    that ends after a whole statement parses, and the keys it adds were set by the statement
    it ends with, which starts on the first line after the last prefix that parsed that is not
    blank or a comment. Quadratic in the lines, so for locating a problem, not for every run."""
    lines = text.splitlines(keepends=True)
    found: dict[Path, int] = {}
    parsed = 0  # lines in the last prefix that parsed
    for end in range(1, len(lines) + 1):
        try:
            document = tomllib.loads("".join(lines[:end]))
        except (tomllib.TOMLDecodeError, RecursionError, ValueError):
            continue
        start = next((i + 1 for i in range(parsed, end) if lines[i].strip() and not lines[i].lstrip().startswith("#")), end)
        for path in _paths(document, ()):
            found.setdefault(path, start)
        parsed = end
    return found


def _paths(value: object, path: Path) -> list[Path]:
    found: list[Path] = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for number, item in enumerate(value):
            found += _paths(item, (*path, number))
    return found
