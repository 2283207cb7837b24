"""Where the conversion specs of a printf-style (`%`) format string are.

Log messages are read with them (messages.py), and the live check inverts a message with them
(live/templates.py): one reading, so that both agree on what a message formats."""

from __future__ import annotations

_FLAGS = "#0- +"


_LENGTH = "hlL"


_CONVERSIONS = frozenset("diouxXeEfFgGcrsa")


def conversion_specs(written: str) -> list[tuple[int, int]] | None:
    """Where each conversion spec of a `%`-format is, as (start, end) offsets: `%` [flags]
    [width] [.precision] [length] type; None for what is not read (a mapping key, a `*` width,
    a malformed spec)."""
    found = []
    at = written.find("%")
    while at != -1:
        end = at + 1
        if written[end : end + 1] == "%":
            at = written.find("%", end + 1)
            continue
        while written[end : end + 1] and written[end] in _FLAGS:
            end += 1
        while written[end : end + 1].isdigit():
            end += 1
        if written[end : end + 1] == ".":
            end += 1
            while written[end : end + 1].isdigit():
                end += 1
        if written[end : end + 1] and written[end] in _LENGTH:
            end += 1
        if written[end : end + 1] not in _CONVERSIONS or not written[end : end + 1]:
            return None  # `%(key)s`, `%*d`, or a lone `%`
        found.append((at, end + 1))
        at = written.find("%", end + 1)
    return found
