"""Keys a framework logs itself, for the walk: a class that subclasses an entry point of
rules/code/frameworks.yaml (transformers' Trainer), or a call of one (`LearningRateMonitor()`),
logs the entry point's keys without a logging call in the project. They join the inventory at
the use, and their facts reach ML006 as a function flow of the file's own.

A name alone is no use: the class or call must resolve, through the file's imports, to the
entry point's full path. A use whose subclass overrides how the keys are made, or that a
callback of the project's own may rewrite, gives nothing (frameworks.yaml says which)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from metriclint.knowledge.frameworks import EntryPoint, FrameworkKey
from metriclint.model import FRAMEWORKS, CodeFact, FunctionFlow, KeyUse, Rewrite, Span
from metriclint.sources.python.bindings import Bindings


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
        known = self.code.knowledge.entry_points
        self._entry_names = frozenset(path.rsplit(".", 1)[-1] for path in known)
        self._rewritable = [entry for entry in dict.fromkeys(known.values()) if entry.unless_defined and entry.shipped_by]

    def _visit_Call(self, node: ast.Call) -> bool:
        entry = self._entry(node.func)
        if entry is not None:
            self.entry_uses.append(_Use(*entry, self.span(node.func), None, self._changes_logs(entry[0], node)))
        return super()._visit_Call(node)

    def entry_class(self, node: ast.ClassDef) -> None:
        """A class that names an entry point among its bases, or that extends another class of
        the framework with a method that may rewrite the entry point's logs (`on_log`)."""
        defined = frozenset(s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for base in node.bases:
            entry = self._entry(base)
            if entry is not None:
                self.entry_uses.append(_Use(*entry, self.span(base), defined, bool(entry[0].overrides & defined)))
            rewritten = [e for e in self._rewritable if e.unless_defined & defined] if self._rewritable else []
            path = self.code.chain(base, {}) if rewritten else None
            self.rewrites += [Rewrite(e.paths, self.span(node)) for e in rewritten if path is not None and e.shipped(path)]

    def _entry(self, node: ast.expr) -> tuple[EntryPoint, str] | None:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if name not in self._entry_names:
            return None
        path = self.code.chain(node, {})
        entry = self.code.knowledge.entry_points.get(path or "")
        return (entry, path) if entry is not None and path is not None else None

    def _changes_logs(self, entry: EntryPoint, node: ast.Call) -> bool:
        """A call passes a keyword that moves its keys, or a callback the framework does not ship."""
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
        """The keys and facts of the file's uses, less those a definition or a call elsewhere
        in the file may change."""
        uses = [use for use in self.entry_uses if not use.silent]
        if not uses:
            return
        defined, called = _names(self.tree)
        sinks: list[tuple[str, frozenset[CodeFact]]] = []
        for use in uses:
            entry = use.entry
            if entry.unless_defined & defined or entry.unless_called & called:
                continue
            for logged in entry.keys:
                if use.defined is None or not logged.overrides & use.defined:
                    self._logged(use, logged, sinks)
        if sinks:
            self.functions.append(FunctionFlow(f"{self.module}.{FRAMEWORKS}", (), False, tuple(sinks), ()))

    def _logged(self, use: _Use, logged: FrameworkKey, sinks: list[tuple[str, frozenset[CodeFact]]]) -> None:
        says = f"{logged.says} ({use.entry.source})"
        facts = frozenset(CodeFact(facet, value, use.span, use.path, says) for facet, value in logged.facts)
        for key in logged.keys:
            self.keys.append(KeyUse(key, use.span, measured=False))  # counted; no logging call to register
            if facts:
                sinks.append((key, facts))


def _names(tree: ast.Module) -> tuple[frozenset[str], frozenset[str]]:
    """The functions and methods the file defines, and the methods it calls by name."""
    defined, called = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            called.add(node.func.attr)
    return frozenset(defined), frozenset(called)
