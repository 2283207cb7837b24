"""Text printed to a terminal or a log as one line that cannot recolour it."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with its control characters written as escapes (`\\x1b`, `\\n`): a file name or a
    quoted text must not move the cursor, recolour a terminal or break a line in two."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)
