"""The metric names a PromQL expression reads, for Grafana panels.

A small scanner rather than a grammar: it only needs the selectors' names. It skips strings,
label matchers `{...}`, ranges `[...]`, functions and aggregations (a name before `(`), and
the label lists after `by`, `without`, `on`, `ignoring` and `group_*`.
"""

from __future__ import annotations

_CLOSING = {"{": "}", "[": "]"}
_GROUPING = ("by", "without")


def metric_names(expression: str, keywords: frozenset[str]) -> list[str]:
    names: list[str] = []
    i, n = 0, len(expression)
    while i < n:
        char = expression[i]
        if char in "\"'`":
            end = expression.find(char, i + 1)
            while end > 0 and expression[end - 1] == "\\" and char != "`":
                end = expression.find(char, end + 1)
            i = n if end < 0 else end + 1
        elif char in _CLOSING:
            end = expression.find(_CLOSING[char], i + 1)
            i = n if end < 0 else end + 1
        elif char.isalpha() or char in "_:":
            start = i
            while i < n and (expression[i].isalnum() or expression[i] in "_:"):
                i += 1
            word = expression[start:i]
            rest = expression[i:].lstrip()
            if word.lower() in keywords:
                if rest.startswith("("):
                    close = expression.find(")", i)
                    i = n if close < 0 else close + 1
            elif not rest.startswith("(") and not _grouping(rest):
                names.append(word)
        elif char.isdigit():
            while i < n and (expression[i].isalnum() or expression[i] in "._"):
                i += 1
        else:
            i += 1
    return list(dict.fromkeys(names))


def _grouping(rest: str) -> bool:
    """`sum by (x) (...)`: the word before `by`/`without` is an aggregation, not a metric."""
    word = rest.split("(", 1)[0].strip().lower()
    return word in _GROUPING
