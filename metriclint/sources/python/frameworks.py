"""Keys a framework logs itself, for the walk: a class that subclasses an entry point of
rules/code/frameworks.yaml (transformers' Trainer), or a call of one (`LearningRateMonitor()`),
logs the entry point's keys without a logging call in the project. They join the inventory at
the use. A call's facts reach ML006 as a function flow of the file's own; a class's wait for
the project-wide step (evidence/inherited.py), since a class of another file may extend it and
change what it logs, so each class is recorded with its bases and the methods that matter.

A name alone is no use: the class or call must resolve, through the file's imports, to the
entry point's full path. A use whose subclass overrides how the keys are made, or that a
callback of the project's own may rewrite, gives nothing (frameworks.yaml says which)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from metriclint.knowledge.frameworks import EntryPoint, FrameworkKey, facts_at
from metriclint.model import FRAMEWORKS, CodeFact, FunctionFlow, KeyUse, ProjectClass, Rewrite, Span
from metriclint.sources.python.bindings import Bindings
from metriclint.sources.python.switches import switched_off


@dataclass(frozen=True, slots=True)
class _Use:
    entry: EntryPoint
    path: str  # the entry point as the file names it, resolved
    span: Span
    defined: frozenset[str] | None  # a subclass's methods; None for a call
    silent: bool  # a call with a keyword or a callback that changes its logs


class EntryUses(Bindings):
    """Records the uses of entry points while walking; `framework_keys` turns them into keys
    and facts once the whole file is known."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entry_uses: list[_Use] = []
        self.rewrites: list[Rewrite] = []
        self.project_classes: list[ProjectClass] = []
        self._classes: list[tuple[str, Span, tuple[tuple[str, Span], ...], frozenset[str]]] = []
        known = self.code.knowledge.entry_points
        entries = list(dict.fromkeys(known.values()))
        self._entry_names = frozenset(path.rsplit(".", 1)[-1] for path in known)
        self._rewritable = [entry for entry in entries if entry.unless_defined and entry.shipped_by]
        self._overridable = frozenset(name for e in entries for name in (e.overrides.union(*(k.overrides for k in e.keys))))
        self._hooks = (frozenset(n for e in entries for n in e.unless_defined), frozenset(n for e in entries for n in e.unless_called))
        self._defined: set[str] = set()  # the hooks the file defines, and those it calls
        self._called: set[str] = set()

    def defined_here(self, name: str) -> None:
        """The walk meets a function or method definition."""
        if name in self._hooks[0]:
            self._defined.add(name)

    def _visit_Call(self, node: ast.Call) -> bool:
        if isinstance(node.func, ast.Attribute) and node.func.attr in self._hooks[1]:
            self._called.add(node.func.attr)
        entry = self._entry(node.func)
        if entry is not None:
            self.entry_uses.append(_Use(*entry, self.span(node.func), None, self._changes_logs(entry[0], node)))
        return super()._visit_Call(node)

    def entry_class(self, node: ast.ClassDef) -> None:
        """A class that names an entry point among its bases, or that extends another class of
        the framework with a method that may rewrite the entry point's logs (`on_log`)."""
        defined = frozenset(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        bases = []
        for base in node.bases:
            entry = self._entry(base)
            if entry is not None:
                self.entry_uses.append(_Use(*entry, self.span(base), defined, bool(entry[0].overrides & defined)))
            rewritten = [e for e in self._rewritable if e.unless_defined & defined] if self._rewritable else []
            path = self.code.chain(base, {}) if rewritten else None
            self.rewrites += [Rewrite(e.paths, self.span(node)) for e in rewritten if path is not None and e.shipped(path)]
            name = self.code.callee(base, [])
            if name is not None:
                bases.append((name, self.span(base)))
        name = ".".join((self.module, *self.classes, node.name))  # every class: one the project cannot place is another package's
        self._classes.append((name, self.span(node), tuple(bases), defined & self._overridable))

    def _entry(self, node: ast.expr) -> tuple[EntryPoint, str] | None:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name not in self._entry_names:
            return None
        path = self.code.chain(node, {})
        entry = self.code.knowledge.entry_points.get(path or "")
        return (entry, path) if entry is not None and path is not None else None

    def _changes_logs(self, entry: EntryPoint, node: ast.Call) -> bool:
        """A call passes a keyword that moves its keys, a callback the framework does not ship,
        or a config that leaves what writes the keys switched off."""
        if entry.switched_on_by is not None and switched_off(entry.switched_on_by, node, self.tree):
            return True
        for keyword in node.keywords:
            if keyword.arg in entry.unless_keywords or keyword.arg is None and (entry.callbacks or entry.unless_keywords):
                return True
            if keyword.arg == entry.callbacks and entry.callbacks and not self._shipped_callbacks(entry, keyword.value):
                return True
        return False

    def _shipped_callbacks(self, entry: EntryPoint, value: ast.expr) -> bool:
        if not isinstance(value, (ast.List, ast.Tuple)):
            return False
        for item in value.elts:
            made = item.func if isinstance(item, ast.Call) else item
            path = self.code.chain(made, {})
            if path is None or not entry.shipped(path):
                return False
        return True

    def framework_keys(self) -> None:
        """The keys of the file's uses and the facts of its calls, less those a definition or
        a call elsewhere in the file may change; and the file's classes, with the entry points
        whose logs it may change."""
        silenced = frozenset(e.paths[0] for e in dict.fromkeys(self.code.knowledge.entry_points.values()) if self._rewrites(e))
        self.project_classes = [ProjectClass(*shape, silenced) for shape in self._classes]
        sinks: list[tuple[str, frozenset[CodeFact]]] = []
        for use in self.entry_uses:
            if use.silent or use.entry.paths[0] in silenced:
                continue
            for logged in use.entry.keys:
                if use.defined is None or not logged.overrides & use.defined:
                    self._logged(use, logged, sinks)
        if sinks:
            self.functions.append(FunctionFlow(f"{self.module}.{FRAMEWORKS}", (), False, tuple(sinks), ()))

    def _rewrites(self, entry: EntryPoint) -> bool:
        """The file defines a method that may rewrite the entry point's logs, or calls one that
        adds something that may."""
        return bool(entry.unless_defined & self._defined or entry.unless_called & self._called)

    def _logged(self, use: _Use, logged: FrameworkKey, sinks: list[tuple[str, frozenset[CodeFact]]]) -> None:
        """A class's facts are the project-wide step's: only a call's are known here."""
        facts = facts_at(use.entry, logged, use.span, use.path) if use.defined is None else frozenset()
        for key in logged.keys:
            self.keys.append(KeyUse(key, use.span, measured=False))  # counted; no logging call to register
            if facts:
                sinks.append((key, facts))
