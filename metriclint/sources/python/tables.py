"""Tooltip texts a Python file defines: `prometheus_client` help strings (always read, the
name says which metric) and module-level dicts mapping keys to texts (tables, selected by
configuration, by how the module's own functions read them (lookup.py), or by auto-detection
later, language/tooltips.py)."""

from __future__ import annotations

import ast
from dataclasses import replace

from metriclint.model import KeyUse, Mention, SourceKind, TooltipEntry, TooltipTable
from metriclint.sources import source_lines
from metriclint.sources.python import lookup
from metriclint.sources.python.code import arguments
from metriclint.sources.python.text import PythonText


class Tables:
    """The tables of one file, gathered as the walk meets their dicts and calls."""

    def __init__(self, path: str, text: PythonText) -> None:
        self.path, self.text = path, text
        self.dict_tables: list[TooltipTable] = []
        self.table_dicts: set[int] = set()  # dicts read as tooltip tables: their keys are not logged
        self.help_entries: list[TooltipEntry] = []

    def holds(self, node: ast.Dict) -> bool:
        """Whether the dict was read as a table: its keys are patterns, not logged keys."""
        return id(node) in self.table_dicts

    def dict_table(self, name: str, value: ast.Dict) -> None:
        """`DESCRIPTIONS = {"train/loss": "..."}` at module level: a table, if every value is text."""
        entries = []
        for order, (key, item) in enumerate(zip(value.keys, value.values)):
            if not isinstance(key, ast.Constant) or not isinstance(key.value, str):  # `{**rest}` has no key
                return
            pattern = self.text.literal(key)
            text = self._string_mention(item)
            if pattern is None or text is None:
                return
            entries.append(TooltipEntry(key.value, text, self.text.span(self.path, key), order))
        if entries:
            self.dict_tables.append(TooltipTable(self.path, "python", name, tuple(entries)))
            self.table_dicts.add(id(value))

    def help_string(self, node: ast.Call) -> KeyUse | None:
        """`Counter("requests", "Requests served, per second")`: the help text of that metric,
        and the metric's name as a key the code defines."""
        given = arguments(node)
        positional = [a.value for a in given if a.keyword is None and not a.star]
        named = {a.keyword: a.value for a in given if a.keyword is not None}
        name_node = named.get("name", positional[0] if positional else None)
        text_node = named.get("documentation", positional[1] if len(positional) > 1 else None)
        name = string_value(name_node)
        text = self._string_mention(text_node) if text_node is not None else None
        if name is None or text is None or name_node is None:
            return None
        prefix = [string_value(named.get(k)) for k in ("namespace", "subsystem")]
        full = "_".join([p for p in prefix if p] + [name])
        span = self.text.span(self.path, name_node)
        self.help_entries.append(TooltipEntry(full, text, span, len(self.help_entries)))
        return KeyUse(full, span)

    def _string_mention(self, node: ast.expr) -> Mention | None:
        """A plain string literal as a tooltip text, positioned exactly (see `Literal.text`)."""
        string = self.text.literal(node)
        if string is None:
            return None
        lines = source_lines(string.text)
        origins = [(string.line, string.content_column)] + [(string.line + i, 1) for i in range(1, len(lines))]
        return Mention(SourceKind.TOOLTIP, self.path, "\n".join(lines), tuple(origins))

    def read(self, module: ast.Module) -> tuple[TooltipTable, ...]:
        """Every table, each dict with how `module`'s functions look keys up in it."""
        lookups = lookup.infer(module, {t.name for t in self.dict_tables}) if self.dict_tables else {}
        tables = [replace(t, lookup=lookups.get(t.name)) for t in self.dict_tables]
        help_table = TooltipTable(self.path, "prometheus", "prometheus_client", tuple(self.help_entries), shape=True)
        return (*tables, help_table) if self.help_entries else tuple(tables)


def string_value(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
