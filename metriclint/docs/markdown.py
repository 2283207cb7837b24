"""Writing Markdown: fenced blocks that hold any text, and table cells."""

from __future__ import annotations

import re

LANGUAGES = {".py": "python", ".yaml": "yaml", ".yml": "yaml", ".js": "javascript", ".ts": "typescript", ".json": "json", ".md": "markdown"}


def fenced(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any run of backticks it holds, so that a Markdown
    example's own fences stay inside."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}\n"


def language_of(name: str) -> str:
    """The fence language of a file named `name`, by its extension ("" when none fits)."""
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:], "") if dot >= 0 else ""


def cell(text: str) -> str:
    """`text` as one table cell: on one line, its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")
