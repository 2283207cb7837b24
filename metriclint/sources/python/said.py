"""What log messages say, for the walk: the words next to each value a message formats
(messages.py), kept for the values that are also logged under a key.

A message speaks for a metric only where its value demonstrably is the logged one: the same
binding of a local (the assignment the walk last met for that name, `Scope.named`), a parameter
not rebound, or `self.attr` logged by a method of the same class. A line about a local that is
never logged, or that was rebound since, says nothing about any metric. Which keys a value
reaches is known only at the end of the file, so the fields wait until then (`said`).
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Any

from metriclint.base import keys
from metriclint.model import Atom, Span
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.messages import Field, call_messages, message_fields, message_rules, prints, summands
from metriclint.sources.python.sinks import KeyRecorder
from metriclint.sources.python.state import NOT_LOGGED, Logging


class Messages(KeyRecorder):
    """Collects message fields and the keys each value is logged under, by the value's handle."""

    def _visit_Call(self, node: ast.Call) -> bool:
        super()._visit_Call(node)
        if called_name(node.func) not in self._printing_names:
            return True  # the cheap first test: most calls print nothing, and this is every call of the file
        self._wait(call_messages(node, self.text, self.message_functions))
        if prints(node, self.message_functions):
            for argument in node.args:
                if isinstance(argument, ast.Name):
                    self._said_composed(self.composing.pop((self.scopes[-1].name, argument.id), []))
        return True

    @cached_property
    def _printing_names(self) -> frozenset[str]:
        """The last names of every call that `prints` may find printing or logging."""
        rules = message_rules()
        return rules.functions | rules.methods | self.message_functions

    def compose(self, name: str, value: ast.expr, extend: bool) -> None:
        """`line = f"..."`, `line += f" {x:.1f} GB |"`: a message put together in a variable (as
        Megatron builds its log line), said when the variable is printed in the same function.

        Each value is identified where it is written (the binding it has then), but the message
        is read only once the variable is printed: most strings built in a variable are paths,
        keys or labels that never are (on radixark/miles, 994 of 28,191 message readings)."""
        found = []
        for part in summands(value):
            handles = {id(v): handle for v in formatted_values(part) if (handle := self._handle(v)) is not None}
            if handles:
                found.append((part, handles))
        where = (self.scopes[-1].name, name)
        if extend:
            self.composing.setdefault(where, []).extend(found)
        elif found:
            self.composing[where] = found
        else:
            self.composing.pop(where, None)

    def _said_composed(self, parts: list[tuple[ast.expr, dict[int, tuple[Any, ...]]]]) -> None:
        """The fields of a printed variable's message parts, each by the handle its value had
        where the part was written; a value still bound as it was then is checked as printed
        (`_printed`) as it is in a message printed at once."""
        for part, handles in parts:
            for field in message_fields(part, self.text):
                handle = handles.get(id(field.value))
                if handle is not None:
                    self.waiting.append((field, handle))
                    if self._handle(field.value) == handle:
                        self._printed(field, handle)

    def returned_message(self, node: ast.Return) -> None:
        """`return f"..."` in `__str__`/`__repr__`: the object describes its own fields."""
        function = self.scopes[-1].name.rsplit(".", 1)[-1] if len(self.scopes) > 1 else ""
        if node.value is not None and function in message_rules().describers:
            self._wait(message_fields(node.value, self.text))

    def _record_key(
        self,
        key: str,
        span: Span,
        value: ast.expr,
        from_keyword: bool,
        logging: Logging = NOT_LOGGED,
        atoms: frozenset[Atom] | None = None,
    ) -> None:
        super()._record_key(key, span, value, from_keyword, logging, atoms)
        handle = self._handle(value)
        if handle is not None:
            self.logged_as.setdefault(handle, []).append(key)

    def _wait(self, fields: list[Field]) -> None:
        for field in fields:
            handle = self._handle(field.value)
            if handle is not None:
                self.waiting.append((field, handle))
                self._printed(field, handle)

    def _printed(self, field: Field, handle: tuple[Any, ...]) -> None:
        """A value the message alone speaks for (no neighbour shares its words) is checked as a
        metric of its own, named for where it is printed (keys.printed): what the code makes of
        it is taken here, where it is printed, and kept only if it is never logged (`said`)."""
        if handle[0] == "key" or field.shared:
            return
        line, _ = field.origins[0]
        name = handle[-1] if isinstance(handle[-1], str) and handle[0] != "local" else self.text.segment(field.value)
        key = keys.printed(name, self.path, line)
        self.printed_as[id(field)] = key
        self.value_logged(key, field.value, NOT_LOGGED)

    def _handle(self, value: ast.expr) -> tuple[Any, ...] | None:
        """What identifies a value across the lines of one file, or None when nothing does."""
        value = self.unwrapped(value)
        scope = self.scopes[-1]
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, str):
            return ("key", value.slice.value) if keys.looks_like_key(value.slice.value) else None  # `metrics["train/loss"]` is that metric
        if isinstance(value, ast.Name):
            if value.id in scope.named:
                return ("local", scope.name, scope.named[value.id][0])
            return ("param", scope.name, value.id) if value.id in scope.params else None
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self" and self.classes:
            return ("self", ".".join(self.classes), value.attr)
        return None

    def said(self) -> None:
        """Each waiting field whose value is logged becomes a text about the keys it is logged under."""
        for field, handle in self.waiting:
            logged = [handle[1]] if handle[0] == "key" else self.logged_as.get(handle)
            if logged:
                self.prose.log_message(field.text, field.origins, tuple(dict.fromkeys(logged)), field.value_end)
            elif id(field) in self.printed_as:
                self.prose.log_message(field.text, field.origins, (self.printed_as[id(field)],), field.value_end)


def formatted_values(node: ast.expr) -> list[ast.expr]:
    """The values a message expression may format, found without reading its text: each field
    `message_fields` finds in it formats one of these."""
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.FormattedValue)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant):
        right = node.right
        return list(right.elts) if isinstance(right, ast.Tuple) else [right]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
    ):
        return [*node.args, *(k.value for k in node.keywords)]
    return []
