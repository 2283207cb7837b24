"""Log messages: the words a printed or logged message puts next to each value it formats.

`print(f"{alloc_gb:.1f} GB in use")` says that `alloc_gb` is in GB. A message is an f-string,
a `%`-format or a `"...".format(...)` passed to a printing or logging call, or returned from
`__str__`/`__repr__` (the calls and the separators are in rules/log_messages.yaml). Each field
owns the words right before and right after it, up to a separator; words between two fields
that no separator parts belong to neither (precision first: nothing tells whose they are).

Each form is read with a real parser: f-strings with `ast` (the fields' expressions carry their
positions), `.format` templates with Python's own `string.Formatter`, `%`-formats by the
conversion-spec grammar of the language reference (4.7.1), which Python exposes no parser for.
A message is read only when it is one single-line string token, so every offset in its text is
an offset in the file; anything else (an implicit concatenation, a mapping key `%(name)s`, a
`*` width, a nested format spec) is not read.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base.builtin import word_lists
from metriclint.sources.python.text import Literal, PythonText

_PREFIX_LETTERS = "rRuUbBfF"
_FLAGS = "#0- +"
_LENGTH = "hlL"
_CONVERSIONS = frozenset("diouxXeEfFgGcrsa")


@dataclass(frozen=True, slots=True)
class MessageRules:
    functions: frozenset[str]
    methods: frozenset[str]
    receivers: tuple[str, ...]
    describers: frozenset[str]
    separators: tuple[str, ...]


@lru_cache(maxsize=1)
def message_rules() -> MessageRules:
    lists = word_lists("log_messages.yaml")
    return MessageRules(
        frozenset(lists["functions"]), frozenset(lists["methods"]), lists["receivers"], frozenset(lists["describers"]), lists["separators"]
    )


@dataclass(frozen=True, slots=True)
class Field:
    """One formatted value of a message and the words that speak for it.

    `text` is the message's own source from the first to the last of those words, the field
    itself blanked out with spaces, so `text[i]` is at (`line`, `column + i`) in the file."""

    value: ast.expr
    text: str
    line: int
    column: int  # 1-based


@dataclass(frozen=True, slots=True)
class _Slot:
    start: int  # offsets of the whole `{...}` or `%...` in the message's text
    end: int
    value: ast.expr | None  # None: the argument it formats cannot be told


def prints(call: ast.Call, extra_functions: frozenset[str] = frozenset()) -> str | None:
    """Whether a call prints or logs its arguments as messages: "logs" for a logger's method
    (whose arguments after a `%`-format fill it), "prints" for a printing function, else None."""
    rules = message_rules()
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if isinstance(func, ast.Attribute) and name in rules.methods and _logger(func.value, rules.receivers):
        return "logs"
    return "prints" if name in rules.functions or name in extra_functions else None


def call_messages(call: ast.Call, text: PythonText, extra_functions: frozenset[str] = frozenset()) -> list[Field]:
    """The fields of the messages a call prints or logs; [] when it is no printing or logging call."""
    kind = prints(call, extra_functions)
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if kind is None or len(positional) != len(call.args):
        return []
    if kind == "logs" and positional and isinstance(positional[0], ast.Constant) and len(positional) > 1:
        return percent_fields(positional[0], positional[1:], text)  # logger.info("%.1f GB", x): formatted lazily
    return [f for argument in positional for f in message_fields(argument, text)]


def summands(node: ast.expr) -> list[ast.expr]:
    """The parts of a string put together with `+`: `" a " + f"{x} GB"` -> both."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return summands(node.left) + summands(node.right)
    return [node]


def message_fields(node: ast.expr, text: PythonText) -> list[Field]:
    """The fields of one message expression: an f-string, `"..." % args` or `"...".format(...)`."""
    if isinstance(node, ast.JoinedStr):
        return _fstring_fields(node, text)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        right = node.right
        if isinstance(right, ast.Tuple):
            return percent_fields(node.left, list(right.elts), text)
        return percent_fields(node.left, [right], text) if not isinstance(right, (ast.Dict, ast.Call, ast.List)) else []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        if isinstance(node.func.value, ast.Constant):
            return _format_fields(node.func.value, node, text)
    return []


def percent_fields(node: ast.Constant, values: list[ast.expr], text: PythonText) -> list[Field]:
    token = _token(node, text)
    if token is None or any(isinstance(v, ast.Starred) for v in values):
        return []
    slots = _percent_slots(token.text)
    if slots is None or len(slots) != len(values):
        return []
    return _fields(token, [_Slot(s, e, v) for (s, e), v in zip(slots, values)])


def _logger(receiver: ast.expr, words: tuple[str, ...]) -> bool:
    """`logger`, `self.log`, `logging`, `LOGGER`: a receiver named as a logger."""
    name = receiver.attr if isinstance(receiver, ast.Attribute) else receiver.id if isinstance(receiver, ast.Name) else ""
    return any(word in name.lower() for word in words)


def _token(node: ast.expr, text: PythonText) -> Literal | None:
    """The message as one single-line string token, or None."""
    if node.lineno != node.end_lineno or (isinstance(node, ast.Constant) and not isinstance(node.value, str)):
        return None
    raw = text.segment(node)
    prefix = raw[: len(raw) - len(raw.lstrip(_PREFIX_LETTERS))]
    quote = raw[len(prefix) : len(prefix) + 1]
    if quote not in ("'", '"') or raw[len(prefix) : len(prefix) + 3] == quote * 3 or "b" in prefix.lower():
        return None
    line, column = text.start(node)
    token = Literal(raw, prefix, quote, line, column, line)
    if len(raw) < len(prefix) + 2 or not raw.endswith(quote) or quote in token.content:
        return None  # `"a" "b"`, or a quote that may be escaped
    return token


def _fstring_fields(node: ast.JoinedStr, text: PythonText) -> list[Field]:
    token = _token(node, text)
    if token is None:
        return []
    written = token.text
    base = token.content_column - 1  # the content's 0-based column
    slots: list[_Slot] = []
    for part in node.values:
        if not isinstance(part, ast.FormattedValue):
            continue
        if part.format_spec is not None and any(isinstance(p, ast.FormattedValue) for p in ast.walk(part.format_spec)):
            return []  # `{x:>{width}}`: its braces nest
        start = text.column(node.lineno, part.value.col_offset) - base
        last = max(text.column(node.lineno, n.end_col_offset or 0) for n in ast.walk(part.value) if isinstance(n, ast.expr)) - base
        opening = written.rfind("{", 0, start)
        closing = written.find("}", last)
        if opening == -1 or closing == -1 or written[opening + 1 : start].strip(" (") or (slots and opening < slots[-1].end):
            return []
        slots.append(_Slot(opening, closing + 1, part.value))
    return _fields(token, slots)


def _format_fields(template: ast.Constant, call: ast.Call, text: PythonText) -> list[Field]:
    """`"{} GB".format(x)`, read with Python's own format-string parser."""
    token = _token(template, text)
    if token is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    written = token.text
    try:
        parsed = list(string.Formatter().parse(written))
    except ValueError:
        return []
    named = {k.arg: k.value for k in call.keywords}
    slots: list[_Slot] = []
    at = automatic = 0
    for literal, name, spec, conversion in parsed:
        at += len(literal) + literal.count("{") + literal.count("}")  # each brace is written twice
        if name is None:
            continue
        source = "{" + name + (f"!{conversion}" if conversion else "")
        source += f":{spec}}}" if written.startswith(source + ":", at) else "}"
        if not written.startswith(source, at):
            return []
        width = len(source)
        if name == "":
            name, automatic = str(automatic), automatic + 1
        value = call.args[int(name)] if name.isdigit() and int(name) < len(call.args) else named.get(name)
        slots.append(_Slot(at, at + width, value))
        at += width
    return _fields(token, slots) if at == len(written) else []


def _percent_slots(written: str) -> list[tuple[int, int]] | None:
    """Where each conversion spec of a `%`-format is: `%` [flags] [width] [.precision] [length]
    type; None for what is not read (a mapping key, a `*` width, a malformed spec)."""
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


def _fields(token: Literal, slots: list[_Slot]) -> list[Field]:
    """Each slot's words: back to the separator before it and on to the one after it, never
    into the gap to a neighbour that nothing parts from it."""
    written = token.text
    fields = []
    for index, slot in enumerate(slots):
        if slot.value is None:
            continue
        before_from = slots[index - 1].end if index else 0
        after_to = slots[index + 1].start if index + 1 < len(slots) else len(written)
        cut = _cut(written, before_from, slot.start, backwards=True)
        start = cut if cut is not None else (slot.start if index else before_from)
        cut = _cut(written, slot.end, after_to, backwards=False)
        end = cut if cut is not None else (slot.end if index + 1 < len(slots) else after_to)
        words = written[start : slot.start] + " " * (slot.end - slot.start) + written[slot.end : end]
        if words.strip():
            fields.append(Field(slot.value, words, token.line, token.content_column + start))
    return fields


def _cut(written: str, start: int, end: int, backwards: bool) -> int | None:
    """Where a field's words stop in `written[start:end]`, read away from the field: at a
    separator, or at a bracket that opens or closes an aside the field is not in (`GB (step=`);
    a bracket closed within the words is part of them (`per GPU (TFLOP/s/GPU):`). None: nothing
    parts them."""
    rules = message_rules()
    away, toward = (")]", "([") if backwards else ("([", ")]")  # brackets met in reading order
    stack: list[tuple[str, int]] = []
    for i in range(end - 1, start - 1, -1) if backwards else range(start, end):
        for separator in rules.separators:
            at = i - len(separator) + 1 if backwards else i
            if at >= start and at + len(separator) <= end and written.startswith(separator, at):
                return i + 1 if backwards else i
        char = written[i]
        if char in away:
            stack.append((toward[away.index(char)], i))
        elif char in toward:
            if not stack or stack[-1][0] != char:
                return i + 1 if backwards else i
            stack.pop()
    if stack:
        return stack[0][1] + 1 if backwards else stack[0][1]
    return None
