"""The project's own log messages, inverted: a printed line read back into values.

`print(f"iteration {iteration:8d} | grad norm: {grad_norm:.3f} |")` printed the lines of a
Megatron-style log; the same f-string, read from the project (sources/python/messages.py finds
its fields and the walk which key each value is logged under), reads them back. Each message
piece (an f-string, a `%`-format, a `"...".format(...)` template; a line put together with
`+=` is several pieces, matched on the same printed line) becomes a `Template`: its literal
text, and a slot per field, labelled with the keys its value is logged under (those of the
log-message text the pipeline made of that field), or as the step when the formatted
expression's name is a step's (rules/live.yaml `steps`).

Only pieces with a keyed or step slot and a literal word to anchor them are kept. A template is
compiled into a pattern over the printed line: the literals as written (a run of white space
matches any), each field by what its conversion prints: digits for `d`, a float (or `nan`,
`inf`) otherwise; a field formatted with `%` is divided by 100 back.
"""

from __future__ import annotations

import ast
import re
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.model import Mention, SourceKind, Span
from metriclint.sources import Unreadable
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.messages import Field, call_messages, message_fields
from metriclint.sources.python.percent_format import conversion_specs
from metriclint.sources.python.text import PythonText

_FLOAT = r"[-+]?(?:(?:\d[\d,_]*)?\.?\d+(?:[eE][-+]?\d+)?|nan|NaN|inf|Inf|infinity|Infinity)"
_INT = r"[-+]?\d[\d,_]*"
_ANY = r".*?"
_INTEGER_TYPES = frozenset("dinxXob")
_MAX_FILE = 8 << 20


@dataclass(frozen=True)
class Slot:
    keys: tuple[str, ...]  # the keys its value is logged under; () for a field that is no metric
    step: bool = False
    kind: str = ""  # the conversion: "d", "f", "%", ... ("" when none is given)


@dataclass(frozen=True)
class Template:
    parts: tuple[str | Slot, ...]
    span: Span  # where the message is written

    @property
    def slots(self) -> list[Slot]:
        return [p for p in self.parts if isinstance(p, Slot)]

    @property
    def anchor(self) -> str:
        """The longest literal: a line without it cannot match, which is tested first."""
        return max((p.strip() for p in self.parts if isinstance(p, str)), key=len, default="")

    def pattern(self) -> re.Pattern[str]:
        pieces = []
        for index, part in enumerate(self.parts):
            if isinstance(part, str):
                words = [re.escape(w) for w in part.split()]
                text = r"\s+".join(words)
                lead = r"\s*" if part[:1].isspace() or index == 0 else ""
                tail = r"\s*" if part[-1:].isspace() or index == len(self.parts) - 1 else ""
                pieces.append(lead + text + tail if words else r"\s*")
            else:
                body = _INT if part.kind in _INTEGER_TYPES else _FLOAT if part.keys or part.step else _ANY
                pieces.append(rf"\s*({body})" if part.keys or part.step else rf"\s*{body}")
        first = self.parts[0] if self.parts else ""
        guard = r"(?<![\w.])" if isinstance(first, str) and first.strip()[:1].isalnum() else ""
        return re.compile(guard + "".join(pieces))


@lru_cache(maxsize=1)
def step_names() -> frozenset[str]:
    return frozenset(word_lists("live.yaml")["steps"])


def templates(mentions: Iterable[Mention], read: Callable[[str], bytes | None] | None = None) -> list[Template]:
    """The templates of every Python file some log-message text of `mentions` is in."""
    by_path: dict[str, dict[tuple[str, tuple[tuple[int, int], ...]], tuple[str, ...]]] = {}
    for mention in mentions:
        logged = tuple(k for k in mention.flows_to if not keys.is_printed(k))  # a value only printed is no key a run logs
        if mention.source == SourceKind.LOG and logged:
            by_path.setdefault(mention.path, {})[(mention.text, mention.origins)] = logged
    found: list[Template] = []
    for path, keyed in by_path.items():
        found += file_templates(path, keyed, read or _read)
    return found


def _read(path: str) -> bytes | None:
    try:
        file = Path(path)
        return file.read_bytes() if file.stat().st_size <= _MAX_FILE else None
    except OSError:
        return None


def file_templates(
    path: str, keyed: dict[tuple[str, tuple[tuple[int, int], ...]], tuple[str, ...]], read: Callable[[str], bytes | None]
) -> list[Template]:
    data = read(path)
    if data is None:
        return []
    try:
        text = PythonText(data)
        tree = text.parse()
    except Unreadable:
        return []
    keys_of: dict[int, tuple[str, ...]] = {}  # a formatted value's node -> the keys it is logged under

    def note(fields: list[Field]) -> None:
        for field in fields:
            keys = keyed.get((field.text, field.origins))
            if keys:
                keys_of[id(field.value)] = keys

    messages: list[ast.expr] = []
    logged: list[tuple[ast.Constant, list[ast.expr]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            note(call_messages(node, text))
            if _logs_lazily(node):
                logged.append((node.args[0], node.args[1:]))  # type: ignore[arg-type]
        if _is_message(node):
            note(message_fields(node, text))  # type: ignore[arg-type]
            messages.append(node)  # type: ignore[arg-type]
    made = [t for node in messages if (t := _template(node, keys_of, path)) is not None]
    made += [t for constant, values in logged if (t := _percent(constant, values, keys_of, _span(path, constant))) is not None]
    return made


def _is_message(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Mod)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
    ):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    )


def _logs_lazily(call: ast.Call) -> bool:
    """`logger.info("%.3f", x)`: a format and its values handed to a logger."""
    first = call.args[0] if call.args else None
    return (
        isinstance(call.func, ast.Attribute)
        and len(call.args) > 1
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and "log" in called_name(call.func.value).lower()
    )


def _span(path: str, node: ast.AST) -> Span:
    line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
    return Span(path, line, column, getattr(node, "end_lineno", line) or line, (getattr(node, "end_col_offset", 0) or 0) + 1)


def _slot(value: ast.expr | None, keys_of: dict[int, tuple[str, ...]], kind: str) -> Slot:
    keys = keys_of.get(id(value), ()) if value is not None else ()
    return Slot(keys, step=not keys and _step_name(value), kind=kind)


def _step_name(value: ast.expr | None) -> bool:
    name = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else None
    return name in step_names()


def _kind(spec: str) -> str:
    """The conversion type a format spec ends in: `.3f` -> f, `8d` -> d, `,` -> ""."""
    return spec[-1] if spec[-1:].isalpha() or spec[-1:] == "%" else ""


def _template(node: ast.expr, keys_of: dict[int, tuple[str, ...]], path: str) -> Template | None:
    parts: list[str | Slot] = []
    if isinstance(node, ast.JoinedStr):
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                spec = value.format_spec
                if spec is not None and not all(isinstance(v, ast.Constant) for v in spec.values):  # type: ignore[attr-defined]
                    return None
                written = "".join(str(v.value) for v in spec.values) if spec is not None else ""  # type: ignore[attr-defined]
                parts.append(_slot(value.value, keys_of, _kind(written)))
    elif isinstance(node, ast.BinOp):
        right = node.right
        values = list(right.elts) if isinstance(right, ast.Tuple) else [right]
        return _percent(node.left, values, keys_of, _span(path, node))  # type: ignore[arg-type]
    elif isinstance(node, ast.Call):
        return _format(node, keys_of, _span(path, node))
    return _kept(parts, _span(path, node))


def _percent(constant: ast.Constant, values: list[ast.expr], keys_of: dict[int, tuple[str, ...]], span: Span) -> Template | None:
    text = str(constant.value)
    specs = conversion_specs(text)
    if specs is None or len(specs) != len(values):
        return None
    parts: list[str | Slot] = []
    at = 0
    for (start, end), value in zip(specs, values):
        parts += [text[at:start].replace("%%", "%"), _slot(value, keys_of, text[end - 1])]
        at = end
    parts.append(text[at:].replace("%%", "%"))
    return _kept(parts, span)


def _format(call: ast.Call, keys_of: dict[int, tuple[str, ...]], span: Span) -> Template | None:
    template = str(call.func.value.value)  # type: ignore[attr-defined]
    named = {k.arg: k.value for k in call.keywords if k.arg is not None}
    parts: list[str | Slot] = []
    automatic = 0
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return None
    for literal, name, spec, _ in parsed:
        parts.append(literal)
        if name is None:
            continue
        if name == "":
            name, automatic = str(automatic), automatic + 1
        value = call.args[int(name)] if name.isdigit() and int(name) < len(call.args) else named.get(name)
        parts.append(_slot(value, keys_of, _kind(spec or "")))
    return _kept(parts, span)


def _kept(parts: list[str | Slot], span: Span) -> Template | None:
    """The template, if a slot of it is a metric or the step and a literal word anchors it."""
    merged: list[str | Slot] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif part != "":
            merged.append(part)
    if not any(isinstance(p, Slot) and (p.keys or p.step) for p in merged):
        return None
    if not any(isinstance(p, str) and any(c.isalpha() for c in p) for p in merged):
        return None
    return Template(tuple(merged), span)


def read_line(line: str, compiled: list[tuple[Template, re.Pattern[str], str]]) -> Iterator[tuple[Slot, float]]:
    """Each keyed or step slot's value on one printed line, by every template that matches it."""
    for template, pattern, anchor in compiled:
        if anchor not in line:
            continue
        for match in pattern.finditer(line):
            groups = iter(match.groups())
            for slot in template.slots:
                if slot.keys or slot.step:
                    value = _number(next(groups), slot.kind)
                    if value is not None:
                        yield slot, value


def _number(text: str, kind: str) -> float | None:
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return None
    return value / 100 if kind == "%" else value
