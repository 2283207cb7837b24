"""Callbacks handed to an entry point by name (`Trainer(callbacks=[Report()])`,
`trainer.add_callback(Report)`), judged once every class of the project is known: a callback
the framework ships leaves its keys alone (frameworks.yaml `shipped_by`); so does a class of
the project none of whose hooks may change a key (sources/python/hooks.py), through all its
bases of the project, when every other base is the framework's own. Anything else (another
package's callback, a base metriclint cannot place, a name that is no class of the project)
may rewrite the logs, so the entry point's facts do not hold in the file that hands it over:
neither those of its calls there nor those of its classes there and below."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from metriclint.evidence.dotted import Dotted
from metriclint.evidence.inherited import Hierarchy
from metriclint.knowledge.frameworks import EntryPoint
from metriclint.model import FRAMEWORKS, CallbackList, CodeFact, FunctionFlow, PassedCallback, ProjectClass


def silenced_files(
    passed: Iterable[PassedCallback], classes: list[ProjectClass], lists: Iterable[CallbackList], entries: dict[str, EntryPoint]
) -> dict[str, frozenset[str]]:
    """Per file, the entry points (first path) a callback it hands over may rewrite; `lists`
    are what the project's functions that make callbacks return."""
    judge = _Judge(Hierarchy(classes, entries), Dotted({listed.function: listed for listed in lists}))
    found: dict[str, set[str]] = {}
    for callback in passed:
        entry = entries.get(callback.entry[0])
        if entry is not None and judge.may_rewrite(entry, callback.callback, set()):
            found.setdefault(callback.span.path, set()).add(entry.paths[0])
    return {path: frozenset(silenced) for path, silenced in found.items()}


class _Judge:
    def __init__(self, hierarchy: Hierarchy, lists: Dotted[CallbackList]) -> None:
        self.hierarchy = hierarchy
        self.lists = lists

    def may_rewrite(self, entry: EntryPoint, name: str, seen: set[str]) -> bool:
        """Whether the callback `name` (a class, or "f()": what a call of f returns; the
        framework's own function returns its own callbacks) may change one of the entry
        point's keys."""
        if entry.shipped(name.removesuffix("()")):
            return False
        if name.endswith("()"):
            listed = self.lists.resolve(name[:-2])
            return listed is None or any(self.may_rewrite(entry, callback, seen) for callback in listed.callbacks)
        shape = self.hierarchy.base(name)
        if shape is None or shape.name in seen:
            return shape is None  # a cycle adds nothing
        seen.add(shape.name)
        return entry.paths[0] in shape.rewrites or any(self.may_rewrite(entry, base, seen) for base, _ in shape.bases)


def silence(
    functions: list[FunctionFlow], classes: list[ProjectClass], silenced: dict[str, frozenset[str]], entries: dict[str, EntryPoint]
) -> tuple[list[FunctionFlow], list[ProjectClass]]:
    """The flows and classes, less the facts of the entry points each file silences."""
    if not silenced:
        return functions, classes
    classes = [replace(c, silenced=c.silenced | silenced[c.span.path]) if c.span.path in silenced else c for c in classes]
    return [_heard(flow, silenced, entries) if flow.name.endswith("." + FRAMEWORKS) else flow for flow in functions], classes


def _heard(flow: FunctionFlow, silenced: dict[str, frozenset[str]], entries: dict[str, EntryPoint]) -> FunctionFlow:
    """A file's flow of framework calls, less the sinks whose facts an entry point silenced there."""

    def kept(atom: object) -> bool:
        if not isinstance(atom, CodeFact) or atom.span.path not in silenced:
            return True
        entry = entries.get(atom.origin)
        return entry is None or entry.paths[0] not in silenced[atom.span.path]

    return replace(flow, sinks=tuple((key, atoms) for key, atoms in flow.sinks if all(kept(a) for a in atoms)))
