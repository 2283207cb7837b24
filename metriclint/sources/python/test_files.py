"""Which test files hold anything a run uses, told from their bytes before they are parsed.

Of a test file only its code's keys count (a key it logs or reads back keeps a registry entry
alive, ML005), and its suppression comments: its texts state and name nothing
(extract/runner.py). Most test files write no key, and parsing and walking them was about a
seventh of a cold run's CPU time on Megatron-LM. A key reaches the walk in only two ways, both visible in the
bytes: as the argument of a call by a sink's name (rules/sinks.yaml, `log-functions`), or as a
string literal shaped like a key (`d["eval/acc"]`, `"eval/acc" in d`). So a file with neither
is skipped; the test is loose (a match in a comment keeps a file), never the other way round.
"""

from __future__ import annotations

import re
from functools import lru_cache

from metriclint.base import keys
from metriclint.knowledge.sinks import sinks

# What may be a string literal that holds a key, or its start or end (`"train/" + name`):
# text right after a quote, up to a quote, with a slash and no space, colon or line break, which
# no key has (base/keys.py `looks_like_key`). The opening quote is matched, not looked behind
# for, so that the search jumps from quote to quote (half the time of a lookbehind, whose test
# runs at every byte); the closing one is looked ahead for, as it may open the next literal.
_SLASHED = re.compile(rb"""["']([^\s"':]*/[^\s"':]*)(?=["'])""")
# A slash written as an escape in a literal (`"eval\x2facc"`).
_ESCAPED_SLASH = re.compile(rb"\\(?:x2f|u002f|U0000002f|0?57|N\{SOLIDUS\})", re.IGNORECASE)


def may_hold_keys(source: bytes, log_functions: frozenset[str]) -> bool:
    """Whether the walk of this test file can find a key or a suppression in it."""
    if b"metriclint" in source or b"prometheus_client" in source:
        return True
    if _sink_calls(log_functions).search(source) or _ESCAPED_SLASH.search(source):
        return True
    return any(_may_be_key(found.group(1)) for found in _SLASHED.finditer(source))


def _may_be_key(literal: bytes) -> bool:
    """A literal that may be a key, whole or in part (`"train/" + name`, `f"train/{name}"`)."""
    text = literal.decode("utf-8", "replace")
    return keys.looks_like_key(text) or text.startswith("/") or text.endswith("/") or "{" in text or "\\" in text


@lru_cache(maxsize=8)
def _sink_calls(log_functions: frozenset[str]) -> re.Pattern[bytes]:
    """A call by a sink's name: `wandb.log(`, `writer.add_scalar (`."""
    names = sorted(sinks(log_functions).names, key=len, reverse=True)
    return re.compile(rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in names) + rb")\s*\(")
