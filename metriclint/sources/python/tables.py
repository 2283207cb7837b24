"""Tooltip texts a Python file defines: `prometheus_client` help strings (always read, the
name says which metric) and module-level dicts mapping keys to texts (tables, selected by
configuration, by how the module's own functions read them (lookup.py), or by auto-detection
later, language/tooltips.py)."""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from typing import Callable

from metriclint.base import keys
from metriclint.model import ConstantHelp, KeyUse, Mention, SourceKind, Span, TooltipEntry, TooltipTable
from metriclint.sources import source_lines
from metriclint.sources.python import lookup
from metriclint.sources.python.call_names import arguments
from metriclint.sources.python.text import PythonText

Resolve = Callable[[ast.expr], "str | None"]
_HELP_PARAMETERS = ("name", "documentation", "labelnames", "namespace", "subsystem", "unit")


class Tables:
    """The tables of one file, gathered as the walk meets their dicts and calls."""

    def __init__(self, path: str, text: PythonText) -> None:
        self.path, self.text = path, text
        self.dict_tables: list[TooltipTable] = []
        self.table_dicts: set[int] = set()  # dicts read as tooltip tables: their keys are not logged
        self.help_entries: list[TooltipEntry] = []
        self.constant_help: list[ConstantHelp] = []  # help texts of metrics another module's constant names
        self.descriptions: list[TooltipEntry] = []  # descriptions a sink call gives its key (`described`)
        self.units: list[TooltipEntry] = []  # units a sink call gives its key, a table of their own: one entry per key

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

    def help_string(self, node: ast.Call, known: Resolve, constant: Resolve) -> KeyUse | None:
        """`Counter("requests", "Requests served, per second")`: the help text of that metric,
        and the metric's name as a key the code defines. The name is a string this module knows
        whole (`known`: a literal, a constant bound here), or another module's constant
        (`constant`: its import path), left to the project step (evidence/constants.py). A
        namespace, subsystem or unit not known whole leaves the key unknown: a key without
        them would be another metric's."""
        given = _help_arguments(node)
        name_node, text_node = given.get("name"), given.get("documentation")
        text = self._string_mention(text_node) if text_node is not None else None
        parts = {part: known(given[part]) for part in ("namespace", "subsystem", "unit") if part in given}
        if name_node is None or text is None or None in parts.values():
            return None
        prefix = "".join(f"{parts[p]}_" for p in ("namespace", "subsystem") if parts.get(p))
        unit = parts.get("unit") or ""
        span = self.text.span(self.path, name_node)
        name = known(name_node)
        if name is None:
            path = constant(name_node)
            if path is not None:
                self.constant_help.append(ConstantHelp(path, prefix, unit, TooltipEntry(path, text, span, len(self.constant_help))))
            return None
        full = keys.prometheus_name(prefix, name, unit)
        if full is None:
            return None
        self.help_entries.append(TooltipEntry(full, text, span, len(self.help_entries)))
        return KeyUse(full, span)

    def described(self, key: str, node: ast.expr, span: Span, unit: bool = False) -> None:
        """A metric's own description where the code makes it (an OpenTelemetry instrument's
        `description`, rules/sinks.yaml): the key's tooltip, as a dashboard shows it. Its `unit`
        is one too, whose symbol ("s") is read as a log message's after its value."""
        text = self._string_mention(node, unit)
        table = self.units if unit else self.descriptions
        if text is not None:
            table.append(TooltipEntry(key, text, span, len(table)))

    def _string_mention(self, node: ast.expr, unit: bool = False) -> Mention | None:
        """A plain string literal as a tooltip text, positioned exactly (see `Literal.text`);
        a `unit`'s opens with its symbol."""
        string = self.text.literal(node)
        if string is None:
            return None
        lines = source_lines(string.text)
        origins = [(string.line, string.content_column)] + [(string.line + i, 1) for i in range(1, len(lines))]
        return Mention(SourceKind.TOOLTIP, self.path, "\n".join(lines), tuple(origins), values=(0,) if unit else ())

    def read(self, module: ast.Module) -> tuple[TooltipTable, ...]:
        """Every table, each dict with how `module`'s functions look keys up in it."""
        lookups = lookup.infer(module, {t.name for t in self.dict_tables}, self.text.lines) if self.dict_tables else {}
        tables = [replace(t, lookup=lookups.get(t.name)) for t in self.dict_tables]
        if self.help_entries:
            tables.append(TooltipTable(self.path, "prometheus", "prometheus_client", tuple(self.help_entries), shape=True))
        for name, entries in (("descriptions", self.descriptions), ("units", self.units)):
            if entries:
                tables.append(TooltipTable(self.path, "python", name, tuple(entries), shape=True))
        return tuple(tables)


def _help_arguments(node: ast.Call) -> dict[str, ast.expr]:
    """The arguments of a prometheus_client metric's constructor that make its name and help
    text, by parameter: every metric class takes them first, in this order."""
    given = arguments(node)
    positional = list(itertools.takewhile(lambda a: not a.star, (a for a in given if a.keyword is None)))  # `*args` hides the rest's places
    named = {a.keyword: a.value for a in given if a.keyword is not None}
    return {**dict(zip(_HELP_PARAMETERS, (a.value for a in positional))), **{p: named[p] for p in _HELP_PARAMETERS if p in named}}
