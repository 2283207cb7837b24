"""Which test files hold anything a run uses, told from their bytes before they are parsed.

Of a test file only its code's keys count (a key it logs or reads back keeps a registry entry
alive, ML005), and its suppression comments: its texts state and name nothing
(extract/runner.py). Most test files write no key, and parsing and walking them was about a
seventh of a cold run's CPU time on Megatron-LM. The walk of a test binds no name
(walk.py `_TestCollector`), so a key reaches it in only two ways, both visible in the bytes: as
the argument of a call by a sink's name (rules/sinks.yaml, `log-functions`), or as a string
literal shaped like a key, written whole, where the walk reads a key: a dict's key, a
subscript, `.get(...)`'s first argument, the left of `in` (`{"eval/acc": acc}`,
`d["eval/acc"]`, `"eval/acc" in d`), or a part of one built from literals alone
(`"eval/" + "acc"`). Slashed literals anywhere else (model names, paths) were half of all
tests parsed on miles and Megatron-LM, for nothing. So a file with neither is skipped; the test
is loose (a match in a comment keeps a file), never the other way round.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from metriclint.base import keys, patterns
from metriclint.knowledge.sinks import sinks

# What may be a string literal that holds a key, or its start or end (`"train/" + name`):
# text right after a quote, up to a quote, with a slash and no space, colon or line break, which
# no key has (base/keys.py `looks_like_key`). The opening quote is matched, not looked behind
# for, so that the search jumps from quote to quote (half the time of a lookbehind, whose test
# runs at every byte); the closing one is looked ahead for, as it may open the next literal.
_SLASHED = re.compile(rb"""["']([^\s"':]*/[^\s"':]*)(?=["'])""")
# A slash written as an escape in a literal (`"eval\x2facc"`).
_ESCAPED_SLASH = re.compile(rb"\\(?:x2f|u002f|U0000002f|0?57|N\{SOLIDUS\})", re.IGNORECASE)
_GAP = rb"(?:\s|\\\r?\n)*"  # spaces, line breaks and continuations between two tokens
_LITERAL_START = rb"[rRbBfFuU]{0,2}[\"']"
_F_PREFIX = re.compile(rb"(?<![\w\"'])(?:[rR]?[fF]|[fF][rR])$")  # an f-string's prefix, right before its quote
# After a literal's closing quote (and any closing parentheses): what makes it a key the walk
# reads, or a literal part of one (another literal follows, or is added or formatted in).
_KEYED_AFTER = re.compile(
    rb"[\"']*" + _GAP + rb"(?:\)" + _GAP + rb")*"
    rb"(?::|in\b|not" + _GAP + rb"in\b|if\b|[\"']|[rRbBfFuU]{1,2}[\"']"
    rb"|[+%]" + _GAP + rb"\(?" + _GAP + _LITERAL_START + rb"|\.format\()"
)
# ... or a subscript's key, which a list's last item looks like but for what opens it.
_CLOSED = re.compile(rb"[\"']*" + _GAP + rb"(?:\)" + _GAP + rb")*\]")
_SUBSCRIPTED = re.compile(rb"(?:[\w)\]\"']" + _GAP + rb"\[|\belse)" + _GAP + rb"(?:\(" + _GAP + rb")*[rRbBfFuU]{0,2}$")
# Before a literal (its prefix and any opening parentheses taken off): `.get(` reads it back,
# a literal added before it makes it the end of a key.
_KEYED_BEFORE = re.compile(rb"(?:\.get|[\"']" + _GAP + rb"\+)" + _GAP + rb"(?:\(" + _GAP + rb")*[rRbBfFuU]{0,2}$")


def may_hold_keys(source: bytes, log_functions: frozenset[str]) -> bool:
    """Whether the walk of this test file can find a key or a suppression in it."""
    if b"metriclint" in source or b"prometheus_client" in source:
        return True
    if _sink_calls(log_functions).search(source) or _ESCAPED_SLASH.search(source):
        return True
    return any(_may_be_key(found.group(1)) and _read_as_key(source, found) for found in _SLASHED.finditer(source))


def _may_be_key(literal: bytes) -> bool:
    """A literal that may be a key, whole or in part (`"train/" + name`, `f"train/{name}"`)."""
    text = literal.decode("utf-8", "replace")
    return keys.looks_like_key(text) or text.startswith("/") or text.endswith("/") or "{" in text or "\\" in text


def _read_as_key(source: bytes, found: re.Match[bytes]) -> bool:
    """Whether the walk of a test may read the literal `found` as a key or a part of one. An
    f-string with a field is never one there: the walk knows no name's value."""
    opening = found.start()
    if b"{" in found.group(1).replace(b"{{", b"") and _F_PREFIX.search(source, max(0, opening - 3), opening):
        return False
    if _KEYED_AFTER.match(source, found.end() + 1):
        return True
    before = source[max(0, opening - 40) : opening]
    return _KEYED_BEFORE.search(before) is not None or (
        _CLOSED.match(source, found.end() + 1) is not None and _SUBSCRIPTED.search(before) is not None
    )


@lru_cache(maxsize=8)
def _sink_calls(log_functions: frozenset[str]) -> Any:
    """A call by a sink's name: `wandb.log(`, `writer.add_scalar (`. Searched with RE2 (most
    test files call no sink and are searched to their end: Megatron-LM's in 11 ms, not 82), or
    Python's engine where RE2 cannot read a name. The spaces are spelled out as Python's bytes
    `\\s` has them (RE2's leaves out the vertical tab)."""
    names = sorted(sinks(log_functions).names, key=len, reverse=True)
    pattern = rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in names) + rb")[ \t\n\r\f\v]*\("
    return patterns.engine(pattern) or re.compile(pattern)
