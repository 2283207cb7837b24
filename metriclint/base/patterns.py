"""Regular expressions written in the checked files (`match = "regex"` tooltip tables),
matched in linear time; and RE2 for metriclint's own patterns where it is the faster engine.

Python's `re` backtracks: `(x+x+)+y` against forty x's runs for minutes, and a pattern in a
pull request from a stranger would hang CI. RE2 (Google's engine, the `google-re2` wheel)
matches in time linear in the text for every pattern it accepts; it refuses the features that
need backtracking (lookaround, backreferences). A pattern Python's `re` accepts and RE2 refuses
is reported, never run with `re`: there is no bound on what it could cost.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would log each refused pattern to stderr itself


class Unsafe(Exception):
    """A pattern that only a backtracking engine runs, so its time has no bound."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"pattern {pattern!r} needs a backtracking regex engine ({reason}), whose time has no bound")
        self.pattern = pattern


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`; a pattern no engine accepts matches
    nothing, as before. Raises Unsafe."""
    compiled = _compiled(pattern)
    return compiled is not None and compiled.search(text) is not None


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    """RE2's compiled pattern, None for a pattern that is no regex at all. Raises Unsafe."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except UnicodeEncodeError:
        return None  # lone surrogates, which UTF-8 cannot spell: no text RE2 reads holds them
    except re2.error as refused:
        try:
            re.compile(pattern)
        except re.error:
            return None
        reason = refused.args[0].decode("utf-8", "replace") if refused.args and isinstance(refused.args[0], bytes) else str(refused)
        raise Unsafe(pattern, reason) from None


def engine(pattern: str | bytes) -> Any:
    """RE2's compiled `pattern`, or None where RE2 refuses it. For metriclint's own patterns
    whose alternatives are many (every sink's name, every phrase): RE2 compiles them at once
    and reads each character once, where Python's engine tries each alternative in turn. A
    bytes pattern reads each byte as a character, as Python's bytes patterns do. A pattern of
    lone surrogates (a registry phrase written `"\\ud83d"`) has no UTF-8 for RE2 to compile."""
    try:
        return re2.compile(pattern, _BYTES if isinstance(pattern, bytes) else _OPTIONS)
    except (re2.error, UnicodeEncodeError):
        return None


_BYTES = re2.Options()
_BYTES.log_errors = False
_BYTES.encoding = re2.Options.Encoding.LATIN1
