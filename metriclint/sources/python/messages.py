"""Log messages: the words a printed or logged message puts next to each value it formats.

`print(f"{alloc_gb:.1f} GB in use")` says that `alloc_gb` is in GB. A message is an f-string,
a `%`-format or a `"...".format(...)` passed to a printing or logging call, or returned from
`__str__`/`__repr__` (the calls and the separators are in rules/log_messages.yaml). Each field
owns the words right before and right after it, up to a separator; words between two fields
that no separator parts belong to neither (precision first: nothing tells whose they are).

Each form is read with a real parser: f-strings with `ast` (the fields' expressions carry their
positions), `.format` templates with Python's own `string.Formatter`, `%`-formats by the
conversion-spec grammar of the language reference (4.7.1), which Python exposes no parser for.
A message may be one string or an implicit concatenation of several, triple-quoted ones too:
text.py finds the pieces, and the text keeps each character where it is written, so offsets map
back to the file. A mapping key `%(name)s`, a `*` width or a nested format spec is not read.
"""

from __future__ import annotations

import ast
import string
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base.builtin import word_lists
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.percent_format import conversion_specs
from metriclint.sources.python.text import Literal, PythonText


@dataclass(frozen=True, slots=True)
class MessageRules:
    functions: frozenset[str]
    methods: frozenset[str]
    receivers: tuple[str, ...]
    describers: frozenset[str]
    separators: tuple[str, ...]
    joins: frozenset[str]


@lru_cache(maxsize=1)
def message_rules() -> MessageRules:
    lists = word_lists("log_messages.yaml")
    return MessageRules(
        frozenset(lists["functions"]),
        frozenset(lists["methods"]),
        lists["receivers"],
        frozenset(lists["describers"]),
        lists["separators"],
        frozenset(lists["joins"]),
    )


@dataclass(frozen=True, slots=True)
class Field:
    """One formatted value of a message and the words that speak for it.

    `text` is the message's own source from the first to the last of those words, the field
    itself and whatever stands between the pieces of a concatenation blanked out with spaces;
    `origins[i]` is the file position (line, 1-based column) of the first character of line
    `i` of `text`, as in a Mention. `shared`: nothing parts the words from a neighbouring field
    (`{fwd}/{bwd} ms`). `value_end`: where in `text` the field ends (`{t:.2f}s`)."""

    value: ast.expr
    text: str
    origins: tuple[tuple[int, int], ...]
    shared: bool = False
    value_end: int = 0


@dataclass(frozen=True, slots=True)
class _Slot:
    start: int  # offsets of the whole `{...}` or `%...` in the message's text
    end: int
    value: ast.expr | None  # None: the argument it formats cannot be told


@dataclass(frozen=True, slots=True)
class _Written:
    """A message as written: the content of its string pieces, one character for each
    character in the file, with what stands between the pieces (quotes, white space, a
    comment, a line break) blanked out, so that every offset maps back to the file.

    `starts[i]` is the offset in `text` where file line `line + i` starts; `text[0]` is at
    0-based column `column` of `line`, each later line at column 0. `breaks` are the line
    breaks of the message itself (inside a triple-quoted piece), which part words; a line
    break between two pieces does not. `pieces` are each piece with its content's offset."""

    text: str
    line: int
    column: int
    starts: tuple[int, ...]
    breaks: frozenset[int]
    pieces: tuple[tuple[int, Literal], ...]

    def offset(self, line: int, column: int) -> int:
        """The offset in `text` of 0-based `column` on file `line`."""
        return self.starts[line - self.line] + column - (self.column if line == self.line else 0)

    def origins(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        """The file positions of the lines of `text[start:end]`, as Field and Mention keep them."""
        row = self.text.count("\n", 0, start)
        first = start - self.starts[row] + (self.column if row == 0 else 0) + 1
        return ((self.line + row, first),) + tuple((self.line + r, 1) for r in range(row + 1, row + 1 + self.text.count("\n", start, end)))


def prints(call: ast.Call, extra_functions: frozenset[str] = frozenset()) -> str | None:
    """Whether a call prints or logs its arguments as messages: "logs" for a logger's method
    (whose arguments after a `%`-format fill it), "prints" for a printing function, else None."""
    rules = message_rules()
    func = call.func
    name = called_name(func)
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
    if (
        kind == "prints"
        and len(positional) > 1
        and _joins(call)
        and any(_is_string(a) for a in positional)
        and not any(map(_formats, positional))
    ):
        return _joined_fields(positional, text)
    return [f for argument in positional for f in message_fields(argument, text)]


def _joins(call: ast.Call) -> bool:
    """A printing function that joins its arguments with spaces, called without another `sep`."""
    name = called_name(call.func)
    sep = next((k.value for k in call.keywords if k.arg == "sep"), None)
    return name in message_rules().joins and (sep is None or (isinstance(sep, ast.Constant) and sep.value == " "))


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
    written = _written([node], text)
    if written is None or any(isinstance(v, ast.Starred) for v in values):
        return []
    slots = []
    for offset, piece in written.pieces:  # no spec spans two pieces
        found = conversion_specs(piece.text)
        if found is None:
            return []
        slots += [(offset + start, offset + end) for start, end in found]
    if len(slots) != len(values):
        return []
    return _fields(written, [_Slot(s, e, v) for (s, e), v in zip(slots, values)])


def _logger(receiver: ast.expr, words: tuple[str, ...]) -> bool:
    """`logger`, `self.log`, `logging`, `LOGGER`: a receiver named as a logger."""
    name = called_name(receiver).lower()
    return any(word in name for word in words)


def _written(nodes: list[ast.expr], text: PythonText) -> _Written | None:
    """The message `nodes` are written as, one after another: one string, or the arguments
    `print` joins with spaces, where what is no string is blanked like the gaps between pieces
    (text.py finds each string's pieces); None for bytes."""
    pieces: list[Literal] = []
    for node in nodes:
        if _is_string(node):
            found = text.pieces(node)
            if found is None:
                return None
            pieces += found
    line, column = (pieces[0].line, pieces[0].content_column - 1) if _is_string(nodes[0]) else text.start(nodes[0])
    chunks: list[str] = []
    starts, breaks, placed = [0], set(), []
    at_line, at_column, length = line, column, 0

    def blank_to(to_line: int, to_column: int) -> None:  # the gap: blank, its line breaks kept for the positions
        nonlocal at_line, at_column, length
        while at_line < to_line:
            chunks.append("\n")
            length, at_line, at_column = length + 1, at_line + 1, 0
            starts.append(length)
        chunks.append(" " * (to_column - at_column))
        length, at_column = length + to_column - at_column, to_column

    for piece in pieces:
        blank_to(piece.line, piece.content_column - 1)
        body = piece.text
        placed.append((length, piece))
        for i, char in enumerate(body):
            if char == "\n":
                starts.append(length + i + 1)
                if piece.content[i - 1 : i] != "\\":  # a continuation backslash is no line break of the message
                    breaks.add(length + i)
        chunks.append(body)
        length += len(body)
        at_line = piece.line + body.count("\n")
        at_column = len(body) - body.rfind("\n") - 1 if "\n" in body else piece.content_column - 1 + len(body)
    blank_to(*text.end(nodes[-1]))
    return _Written("".join(chunks), line, column, tuple(starts), frozenset(breaks), tuple(placed))


def _is_string(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _formats(node: ast.expr) -> bool:
    """Whether an expression puts a string together (`%`, `+`, `.format`) rather than being a value."""
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, (ast.Mod, ast.Add)) and any(_is_string(n) or _formats(n) for n in (node.left, node.right))
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"


def _joined_fields(arguments: list[ast.expr], text: PythonText) -> list[Field]:
    """`print("tps:", tps, "tokens/s")`: the arguments print joins with spaces are one message,
    each value a field, each f-string's fields too."""
    written = _written(arguments, text)
    if written is None:
        return []
    slots: list[_Slot] = []
    for argument in arguments:
        if isinstance(argument, ast.JoinedStr):
            found = _fstring_slots(argument, written, text)
            if found is None:
                return []
            slots += found
        elif not _is_string(argument):
            start, end = text.start(argument), text.end(argument)
            slots.append(_Slot(written.offset(*start), written.offset(*end), argument))
    return _fields(written, slots)


def _fstring_fields(node: ast.JoinedStr, text: PythonText) -> list[Field]:
    written = _written([node], text)
    slots = _fstring_slots(node, written, text) if written is not None else None
    return _fields(written, slots) if written is not None and slots is not None else []


def _fstring_slots(node: ast.JoinedStr, written: _Written, text: PythonText) -> list[_Slot] | None:
    """Where each field of an f-string is in `written`: from its `{` to its `}`; None when
    one cannot be told (a nested spec, a position that does not land on its braces)."""
    message = written.text
    slots: list[_Slot] = []
    for part in node.values:
        if not isinstance(part, ast.FormattedValue):
            continue
        if part.format_spec is not None and any(isinstance(p, ast.FormattedValue) for p in ast.walk(part.format_spec)):
            return None  # `{x:>{width}}`: its braces nest
        start = written.offset(*text.start(part.value))
        last = max(written.offset(*text.end(n)) for n in ast.walk(part.value) if isinstance(n, ast.expr))
        opening = message.rfind("{", 0, start)
        closing = message.find("}", last)
        if opening == -1 or closing == -1 or message[opening + 1 : start].strip(" (") or (slots and opening < slots[-1].end):
            return None
        slots.append(_Slot(opening, closing + 1, part.value))
    return slots


def _format_fields(template: ast.Constant, call: ast.Call, text: PythonText) -> list[Field]:
    """`"{} GB".format(x)`, read with Python's own format-string parser, piece by piece."""
    written = _written([template], text)
    if written is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return []
    named = {k.arg: k.value for k in call.keywords}
    slots: list[_Slot] = []
    automatic = 0
    for offset, piece in written.pieces:
        content = piece.text
        try:
            parsed = list(string.Formatter().parse(content))
        except ValueError:
            return []
        at = 0
        for literal, name, spec, conversion in parsed:
            at += len(literal) + literal.count("{") + literal.count("}")  # each brace is written twice
            if name is None:
                continue
            source = "{" + name + (f"!{conversion}" if conversion else "")
            source += f":{spec}}}" if content.startswith(source + ":", at) else "}"
            if not content.startswith(source, at):
                return []
            if name == "":
                name, automatic = str(automatic), automatic + 1
            value = call.args[int(name)] if name.isdigit() and int(name) < len(call.args) else named.get(name)
            slots.append(_Slot(offset + at, offset + at + len(source), value))
            at += len(source)
        if at != len(content):
            return []
    return _fields(written, slots)


def _fields(written: _Written, slots: list[_Slot]) -> list[Field]:
    """Each slot's words: back to the separator before it and on to the one after it, never
    into the gap to a neighbour that nothing parts from it."""
    message = written.text
    fields = []
    for index, slot in enumerate(slots):
        if slot.value is None:
            continue
        before_from = slots[index - 1].end if index else 0
        after_to = slots[index + 1].start if index + 1 < len(slots) else len(message)
        cut, after = _cut(written, before_from, slot.start, backwards=True), _cut(written, slot.end, after_to, backwards=False)
        shared = (cut is None and index > 0) or (after is None and index + 1 < len(slots))
        start = cut if cut is not None else (slot.start if index else before_from)
        end = after if after is not None else (slot.end if index + 1 < len(slots) else after_to)
        blank = "".join(c if c == "\n" else " " for c in message[slot.start : slot.end])
        words = message[start : slot.start] + blank + message[slot.end : end]
        if words.strip():
            fields.append(Field(slot.value, words, written.origins(start, end), shared, slot.end - start))
    return fields


def _cut(written: _Written, start: int, end: int, backwards: bool) -> int | None:
    """Where a field's words stop in `text[start:end]`, read away from the field: at a
    separator or a line break of the message, or at a bracket that opens or closes an aside
    the field is not in (`GB (step=`); a bracket closed within the words is part of them (`per
    GPU (TFLOP/s/GPU):`). None: nothing parts them."""
    flat = written.text.replace("\n", " ")  # a separator may end a line: `"loss {x}."` then the next piece
    stop = _first_stop(written.breaks, flat, start, end, backwards)
    away, toward = (")]", "([") if backwards else ("([", ")]")  # brackets met in reading order
    stack: list[tuple[str, int]] = []
    for i in range(end - 1, start - 1 if stop is None else stop, -1) if backwards else range(start, end if stop is None else stop):
        char = flat[i]
        if char in away:
            stack.append((toward[away.index(char)], i))
        elif char in toward:
            if not stack or stack[-1][0] != char:
                return i + 1 if backwards else i
            stack.pop()
    if stop is not None:
        return stop + 1 if backwards else stop
    if stack:
        return stack[0][1] + 1 if backwards else stack[0][1]
    return None


def _first_stop(breaks: frozenset[int], flat: str, start: int, end: int, backwards: bool) -> int | None:
    """The first position in `flat[start:end]`, read away from the field, that is a line break
    of the message or where a separator ends (read backwards) or starts (forwards); None if
    there is none. Found with `str.find`, not by trying every separator at every character:
    on radixark/miles, `_fields` took 0.7 of a cold run's 8 CPU seconds that way, 0.2 now."""
    ends = [b for b in breaks if start <= b < end]
    for separator in message_rules().separators:
        at = flat.rfind(separator, start, end) if backwards else flat.find(separator, start, end)
        if at != -1:
            ends.append(at + len(separator) - 1 if backwards else at)
    if not ends:
        return None
    return max(ends) if backwards else min(ends)
