"""Keys logged through dicts of metrics that cross functions: what reaches a sink from a
caller's dict, a called function's returned dict or a class's attribute.

Each file's walk (sources/python/bags.py) logs the entries it sees put in a dict that reaches a
sink, and records what the dict holds of elsewhere (model.Held): a parameter (`def log(self,
metrics): wandb.log(metrics)`), a project call's result (`wandb.log(compute_stats(batch))`), or
an attribute filled by another method (`self.stats[key].append(v)` in `step`, logged in
`on_log`). This step follows those back to the dicts they come from, through as many calls as
it takes, so a project's own logger is a sink without being named: its callers' dicts are
logged. Every question is answered once, and chains stop after `MAX_HOPS`.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator

from metriclint.base import keys
from metriclint.evidence.code_claims import Project, param_at, passed_at
from metriclint.evidence.dotted import Dotted
from metriclint.model import Atom, Bag, CallFlow, Entry, FunctionFlow, KeyUse, ProjectClass

MAX_HOPS = 12


@dataclass(frozen=True, slots=True)
class LoggedEntry:
    """An entry of a dict some sink logs: its key as logged, and the function it was put in
    (whose flow its value's atoms belong to)."""

    use: KeyUse
    function: str
    value: frozenset[Atom]


class _Families:
    """Which classes share their attributes: a class and every class it extends or that
    extends it, through the project's classes."""

    def __init__(self, classes: Iterable[ProjectClass]) -> None:
        named = {c.name: c for c in classes}
        resolve = Dotted(named).resolve
        self.parent: dict[str, str] = {name: name for name in named}
        for project_class in named.values():
            for base, _ in project_class.bases:
                found = resolve(base)
                if found is not None:
                    self.parent[self.root(found.name)] = self.root(project_class.name)

    def root(self, name: str) -> str:
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name


class LoggedBags:
    def __init__(self, functions: Iterable[FunctionFlow], calls: Iterable[CallFlow], classes: Iterable[ProjectClass]) -> None:
        classes = list(classes)
        self.project = Project(functions, calls, classes)
        self.families = _Families(classes)
        self.puts: dict[tuple[str, str], list[tuple[str, Bag]]] = defaultdict(list)  # (family, attribute) -> (function, bag put in it)
        for flow in self.project.functions.values():
            for attribute, bag in flow.stored:
                owner, name = attribute.rsplit(".", 1)
                self.puts[(self.families.root(owner), name)].append((flow.name, bag))
        self.memo: dict[tuple[str, Bag, int], tuple[tuple[Entry, str], ...]] = {}

    def logged(self) -> Iterator[LoggedEntry]:
        """Every entry a sink logs through a dict it cannot see whole, keyed as it is logged."""
        for flow in self.project.functions.values():
            for logged in flow.logged:
                for entry, function in self.entries(flow.name, logged.bag, 0):
                    if entry.recorded:
                        continue  # logged where it was written, with its file's keys
                    for key, span in self._filled(function, entry):
                        yield LoggedEntry(KeyUse(key, span, False, entry.measured, entry.through), function, entry.value)

    def entries(self, function: str, bag: Bag, hops: int) -> tuple[tuple[Entry, str], ...]:
        """The entries `bag` (of `function`) holds, each with the function it was put in."""
        memo = (function, bag, hops)
        if memo in self.memo:
            return self.memo[memo]
        self.memo[memo] = ()  # a cycle adds nothing
        found: list[tuple[Entry, str]] = [(entry, function) for entry in bag.entries]
        for held in bag.held if hops < MAX_HOPS else ():
            for entry, where in self._held(function, held.kind, held.name, hops + 1):
                found.append((_rekeyed(entry, held.rekey), where))
        self.memo[memo] = tuple(dict.fromkeys(found))
        return self.memo[memo]

    def _held(self, function: str, kind: str, name: str, hops: int) -> Iterator[tuple[Entry, str]]:
        if kind == "param":
            flow = self.project.functions.get(function)
            for call in self.project.callers.get(function, ()) if flow is not None else ():
                for where, bag in call.bags:
                    if param_at(flow, where, call.bound) == name:  # type: ignore[arg-type]
                        yield from self.entries(call.caller, bag, hops)
        elif kind == "result":
            callee = self.project.resolve(name)
            if callee is not None:
                yield from self.entries(callee.name, callee.gives, hops)
        elif kind == "attribute":
            owner, attribute = name.rsplit(".", 1)
            for where, bag in self.puts.get((self.families.root(owner), attribute), ()):
                yield from self.entries(where, bag, hops)

    def _filled(self, function: str, entry: Entry) -> list[tuple[str, object]]:
        """The keys an entry's key template makes with the strings its function's callers pass
        for the parameters it names (`record(name, value)` called as `record("perf/wps", x)`),
        each at that call; the key as it is, at its own place, when no caller passes one."""
        flow = self.project.functions.get(function)
        named = [p for p in flow.params if f"{{{p}}}" in entry.key] if flow is not None and keys.is_template(entry.key) else []
        made: list[tuple[str, object]] = []
        for call in self.project.callers.get(function, ()) if named else ():
            given = {p: texts for p in named for where, texts in call.texts if where in (p, passed_at(flow, p, call.bound))}  # type: ignore[arg-type]
            if len(given) != len(named) or math.prod(len(t) for t in given.values()) > keys.MAX_VALUES:
                continue
            for combination in itertools.product(*given.values()):
                key = entry.key
                for param, text in zip(given, combination):
                    key = key.replace(f"{{{param}}}", text)
                made.append((key, call.span))
        return made or [(entry.key, entry.span)]


def _rekeyed(entry: Entry, rekey: str) -> Entry:
    return entry if rekey == "{}" else Entry(rekey.replace("{}", entry.key), entry.span, entry.value, entry.measured, entry.through)


def logged_entries(functions: Iterable[FunctionFlow], calls: Iterable[CallFlow], classes: Iterable[ProjectClass]) -> list[LoggedEntry]:
    """Every entry logged through a dict that crosses functions, once per key and place; keys
    still too generic to name a metric (`{name}`, `train/{key}`) are left out."""
    found = LoggedBags(functions, calls, classes).logged()
    unique = {(e.use.key, e.use.span): e for e in found if not keys.too_generic(e.use.key)}
    return list(unique.values())



