"""Which tooltip a dashboard shows for each metric key, computed the way the dashboard does.

A table alone cannot say which key receives which text: that depends on the keys that exist
and on the table's match mode. So after every file is extracted, each table is bound (by the
configuration, by its shape, or by auto-detection), every known key is looked up in it, and
the text it selects becomes a `tooltip` mention about that key, for ML001/ML002. When the
selected entry was written for another metric, that is ML003.

Match modes: `substring` and `regex` pick the first entry in table order (a `find()`);
`exact`, `prefix`, `suffix` and `glob` pick the most specific one, unless the code that reads
the table takes the first match (`TooltipTable.lookup`). A key template is looked up as the
key its placeholders produce when empty (`train/{tag}grad_norm` -> `train/grad_norm`).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

from metriclint.base import keys, patterns
from metriclint.base.paths import relative
from metriclint.language.attribution import MetricIndex
from metriclint.model import (
    Binding,
    ConfigError,
    Lookup,
    Mention,
    Mismatch,
    Problem,
    ReadFailure,
    Span,
    TooltipEntry,
    TooltipSetting,
    TooltipTable,
)

# Auto-detection takes a table when its patterns name known metrics: one look-alike name
# proves nothing, and a description table lists many names the code builds dynamically, so
# a few names (or every one of a small table) and a tenth of the entries are enough.
AUTO_MIN_NAMED = 3
AUTO_MIN_SHARE = 0.1


@dataclass(frozen=True)
class Shown:
    """The entry a table shows for `key`."""

    key: str
    entry: TooltipEntry
    binding: Binding


class MetricNames:
    """Every known metric key, and the names that designate each one (key, alias, last segment)."""

    def __init__(self, index: MetricIndex, spans: dict[str, Span]) -> None:
        self.index = index
        self.spans = spans
        known = list(dict.fromkeys([*(index.registry.metrics if index.registry else ()), *index.logged]))
        # A template with a known instance (its empty-placeholder one, or a key built from it)
        # adds nothing but duplicates: the dashboard shows the instances.
        plain = keys.KeySet(k for k in known if not keys.is_template(k))
        self.keys = [k for k in known if not (keys.is_template(k) and plain.same_metric(k))]
        self.owners: dict[str, set[str]] = {}
        for key in self.keys:
            for name in (key, keys.literal(keys.last_segment(key))):
                self.owners.setdefault(name, set()).add(key)
        for alias, key in index.by_alias.items():
            self.owners.setdefault(alias, set()).add(key)

    def owner_of(self, pattern: str, key: str) -> str | None:
        """The metric `pattern` was written for, when it designates metrics but not `key`."""
        owners = self.owners.get(pattern, set())
        if not owners or any(keys.same_metric(owner, key) for owner in owners):
            return None
        return sorted(owners)[0]


def bind(tables: Iterable[TooltipTable], settings: tuple[TooltipSetting, ...], root: Path, names: MetricNames) -> list[Binding]:
    """The tables that are read: configured ones (every setting must find one), shape-recognised
    ones, tables that the file's code looks keys up in when they select known metrics, and,
    with no configuration, tables whose patterns name known metrics."""
    tables = list(tables)
    bindings, used = [], set()
    for table in tables:
        setting = next((s for s in settings if _selects(s, table, root)), None)
        if setting is not None:
            used.add(setting)
            where = f"configured at {setting.origin.path}:{setting.origin.line}"
            bindings.append(Binding(table, setting.match, setting.strip_prefix, where))
        elif table.shape:
            bindings.append(Binding(table, "exact", False, f"{table.kind} shape"))
        elif table.lookup is not None:
            inferred = _inferred(table, table.lookup, names)
            if inferred is not None:
                bindings.append(inferred)
        elif not settings:
            auto = _auto(table, names)
            if auto is not None:
                bindings.append(auto)
    problems = [_unfound(s, tables, root) for s in settings if s not in used]
    if any(problems):
        raise ConfigError([p for p in problems if p is not None])
    return bindings


def _unfound(setting: TooltipSetting, tables: list[TooltipTable], root: Path) -> Problem | None:
    """A configured table name that its files do not hold (a file not checked is no error)."""
    there = sorted({t.name for t in tables if _selects(replace(setting, table=None), t, root)})
    if not there:
        return None
    return replace(
        setting.origin, message=f"no tooltip table '{setting.table}' in files matching '{setting.path}'; tables there: {', '.join(there)}"
    )


def _selects(setting: TooltipSetting, table: TooltipTable, root: Path) -> bool:
    if setting.table is not None and setting.table != table.name:
        return False
    return fnmatch.fnmatchcase(relative(Path(table.path), root), setting.path)


def _auto(table: TooltipTable, names: MetricNames) -> Binding | None:
    known = set(names.keys)  # a set: a table may have thousands of entries, and there may be thousands of keys
    full = sum(1 for e in table.entries if e.pattern in names.index.by_alias or e.pattern in known)
    named = sum(1 for e in table.entries if e.pattern in names.owners)
    if not _enough(named, table):
        return None
    strip = named - full > full  # mostly last segments: compare them with the key after its prefix
    return Binding(table, "exact", strip, f"auto: {named} of {len(table.entries)} patterns name known metrics")


def _inferred(table: TooltipTable, lookup: Lookup, names: MetricNames) -> Binding | None:
    """The table matched as its code reads it, taken when (as for auto-detection) enough of its
    entries are what some known key would be shown: a lookup alone does not make a table of
    metric descriptions."""
    binding = Binding(table, lookup.match, lookup.strip_prefix, "", lookup.first, lookup.lower)
    cited = f"lookup in {lookup.function} at line {lookup.line}: {lookup.how}"
    try:
        shown = len({id(s.entry) for s in select(binding, names)})
    except patterns.Unsafe:  # taken, so that reading it reports the pattern (ML900)
        return replace(binding, why=f"{cited}; a pattern cannot be matched in bounded time")
    if not _enough(shown, table):
        return None
    return replace(binding, why=f"{cited}; {shown} of {len(table.entries)} entries shown for known metrics")


def _enough(named: int, table: TooltipTable) -> bool:
    return named >= min(AUTO_MIN_NAMED, max(len(table.entries), 2)) and named >= AUTO_MIN_SHARE * len(table.entries)


def select(binding: Binding, names: MetricNames) -> Iterator[Shown]:
    """For every known key, the entry this table shows for it, if any."""
    lookup = _exact(binding, names.index) if binding.match == "exact" else partial(_scan, binding)
    for key in names.keys:
        entry = lookup(key)
        if entry is not None:
            yield Shown(key, entry, binding)


def _exact(binding: Binding, index: MetricIndex) -> Callable[[str], TooltipEntry | None]:
    """An exact table's look-up by dictionary: the first entry written for the key as tested,
    else for it after its prefix, else for an alias of the metric. Scanning the entries for each
    known key instead took most of a run with a large table (issue 19)."""
    written: dict[str, TooltipEntry] = {}
    aliased: dict[str, TooltipEntry] = {}
    for entry in sorted(binding.table.entries, key=lambda e: e.order):
        written.setdefault(entry.pattern, entry)
        if entry.pattern in index.by_alias:
            aliased.setdefault(index.by_alias[entry.pattern], entry)

    def lookup(key: str) -> TooltipEntry | None:
        instance, subject = _matched(binding, key)
        for found in (written.get(instance), written.get(subject), aliased.get(key)):
            if found is not None:
                return found
        return None

    return lookup


def _scan(binding: Binding, key: str) -> TooltipEntry | None:
    """The entry a pattern table shows for `key`: the first that selects it, or the most specific."""
    _, subject = _matched(binding, key)
    test, specificity = _MODES[binding.match]
    entries = binding.table.entries
    if binding.first_wins:
        return next((e for e in entries if test(e.pattern, subject)), None)
    ranked = [(-specificity(e.pattern), e.order, e) for e in entries if test(e.pattern, subject)]
    return min(ranked, key=lambda r: (r[0], r[1]))[2] if ranked else None


def _matched(binding: Binding, key: str) -> tuple[str, str]:
    """The key as the dashboard tests it (its empty-placeholder instance, lower-cased when the
    code does), whole and after its first "/" when the binding strips the prefix."""
    instance = keys.literal(key).lower() if binding.lower else keys.literal(key)
    return instance, instance.split("/", 1)[1] if binding.strip_prefix and "/" in instance else instance


def _literal_length(pattern: str) -> int:
    return sum(1 for char in pattern if char not in "*?[]")


# Each mode but `exact`: whether a pattern selects a subject, and how specific a pattern is
# (the most specific match wins unless the first one does).
_MODES: dict[str, tuple[Callable[[str, str], bool], Callable[[str], int]]] = {
    "substring": (lambda pattern, subject: pattern in subject, len),
    "regex": (patterns.search, len),  # raises patterns.Unsafe
    "prefix": (lambda pattern, subject: subject.startswith(pattern), len),
    "suffix": (lambda pattern, subject: subject.endswith(pattern), len),
    "glob": (lambda pattern, subject: fnmatch.fnmatchcase(subject, pattern), _literal_length),
}


def shown_in(bindings: Iterable[Binding], names: MetricNames) -> tuple[list[Shown], list[ReadFailure]]:
    """The entry each table shows for each known key; a regex table with a pattern that cannot
    be matched in bounded time is not read, and is an ML900 at that pattern (base/patterns.py)."""
    shown: list[Shown] = []
    failures = []
    for binding in bindings:
        try:
            shown += list(select(binding, names))
        except patterns.Unsafe as error:
            span = next(e.span for e in binding.table.entries if e.pattern == error.pattern)
            failures.append(ReadFailure(span, f"tooltip table '{binding.table.name}' not read: {error}"))
    return shown, failures


def mention(shown: Shown) -> Mention:
    """The selected text as a statement about the key that receives it."""
    text = shown.entry.text
    return Mention(text.source, text.path, text.text, text.origins, flows_to=(shown.key,), values=text.values)


def mismatch(shown: Shown, names: MetricNames) -> Mismatch | None:
    owner = names.owner_of(shown.entry.pattern, shown.key)
    if owner is None:
        return None
    span = names.spans.get(owner, shown.entry.span)
    return Mismatch(shown.key, shown.entry, shown.binding, owner, span)


def advice(item: Mismatch) -> str:
    """What to add so `item.key` gets its own text."""
    _, subject = _matched(item.binding, item.key)
    where = f" before line {item.entry.span.line}" if item.binding.first_wins else ""
    return f"add an entry for '{subject}'{where}"
