"""Keys a framework logs through the project's own classes: `class Weighted(ProjectTrainer)`,
where `ProjectTrainer` extends transformers' Trainer in another file, logs what the Trainer
logs, unless a class along the way (or a mixin beside it) overrides how the keys are made.

Only the classes no other class of the project extends are uses: a base such as
`ProjectTrainer` runs as its subclasses do, and they may override `log`; a mixin that extends
the Trainer only to reach its methods (`class SchedulerMixin(Trainer)`) is no trainer of its
own. A leaf's methods are those of every class of the project it inherits from, and the
`unless_defined`/`unless_called` of each of their files hold for it (frameworks.yaml). A class
that inherits from a class of another package besides the entry point (`ORPOTrainer` of
trl.experimental, `nn.Module`, an import metriclint cannot place) gives nothing: that class's
methods are not known, and it may override any of them.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from metriclint.evidence.dotted import Dotted
from metriclint.knowledge.frameworks import EntryPoint, facts_at
from metriclint.model import FRAMEWORKS, NAMED_OBJECT, CodeFact, FunctionFlow, ProjectClass, Span

# A shorter name (`x`, `obj`) says no class: it would end the names of too many.
_NAMED_LENGTH = 4


class _Ancestry:
    """What a class inherits from the project's classes: the methods that matter, the entry
    points its files silence, each entry point it reaches with the path that names it, and
    whether a class of another package is among them (whose methods are not known)."""

    def __init__(self) -> None:
        self.defines: set[str] = set()
        self.silenced: set[str] = set()
        self.reached: dict[EntryPoint, str] = {}
        self.foreign = False


class Hierarchy:
    def __init__(self, classes: Iterable[ProjectClass], entries: dict[str, EntryPoint]) -> None:
        self.classes = {c.name: c for c in classes}
        self.entries = entries
        self.names = Dotted(self.classes)
        self.memo: dict[str, _Ancestry] = {}
        self._below: dict[str, list[ProjectClass]] | None = None
        self._strings: dict[str, tuple[str, ...]] = {}  # `strings`' answers: asked once per key part a dict carries
        self._setters: dict[str, list[tuple[str, str]]] | None = None  # attribute -> (short name lowered, class) of each class that sets it

    def _children(self, name: str) -> list[ProjectClass]:
        """The project's classes that name the class `name` among their bases."""
        if self._below is None:
            self._below = {}
            for shape in self.classes.values():
                for base_name, _ in shape.bases:
                    base = self.base(base_name)
                    if base is not None and base is not shape:
                        self._below.setdefault(base.name, []).append(shape)
        return self._below.get(name, [])

    def descendants(self, name: str, stop: Callable[[ProjectClass], bool] = lambda shape: False) -> Iterator[ProjectClass]:
        """The project's classes below the class `name`, each once; none below a class `stop`
        holds for, nor that class."""
        seen: set[str] = set()
        pending = list(self._children(name))
        while pending:
            shape = pending.pop()
            if shape.name in seen or stop(shape):
                continue
            seen.add(shape.name)
            yield shape
            pending += self._children(shape.name)

    def strings(self, name: str) -> tuple[str, ...]:
        """The strings the attribute `name` (module.Class.attr) of an instance of the class may
        be: as the class sets it, or else the nearest base that does, and as each subclass of
        the project that sets it again does, since the instance may be one of theirs; none
        once one of them sets it to what is not known (model.ProjectClass.strings)."""
        if name not in self._strings:
            self._strings[name] = self._strings_of(*name.rsplit(".", 1))
        return self._strings[name]

    def _strings_of(self, owner: str, attribute: str) -> tuple[str, ...]:
        if owner.startswith(NAMED_OBJECT):
            return self._named_strings(owner[len(NAMED_OBJECT) :], attribute)
        start = self.base(owner)
        if start is None:
            return ()
        below = [dict(shape.strings).get(attribute) for shape in self.descendants(start.name)]
        found = [self._inherited_strings(start, attribute, 0), *(texts for texts in below if texts is not None)]
        if any(not texts for texts in found):
            return ()
        return tuple(dict.fromkeys(text for texts in found for text in texts or ()))

    def _named_strings(self, held: str, attribute: str) -> tuple[str, ...]:
        """The strings the attribute of an object the file knows only by its name may be: as
        each class of the project that the name names (`tracker`: `Tracker`, `CsvTracker`) and
        that sets the attribute itself sets it, and its subclasses; none when no such class
        sets it, or one of them sets it to what is not known."""
        named = held.replace("_", "").lower()
        if len(named) < _NAMED_LENGTH:
            return ()
        owners = [owner for short, owner in self._setting(attribute) if short.endswith(named)]
        found = [self.strings(f"{owner}.{attribute}") for owner in owners]
        if not found or any(not texts for texts in found):
            return ()
        return tuple(dict.fromkeys(text for texts in found for text in texts))

    def _setting(self, attribute: str) -> list[tuple[str, str]]:
        """The classes that set `attribute` themselves, each with its own name lowered: indexed
        once, since every attribute of an object known only by its name asks."""
        if self._setters is None:
            self._setters = {}
            for shape in self.classes.values():
                short = shape.name.rsplit(".", 1)[-1].lower()
                for set_attribute, _ in shape.strings:
                    self._setters.setdefault(set_attribute, []).append((short, shape.name))
        return self._setters.get(attribute, [])

    def _inherited_strings(self, shape: ProjectClass, attribute: str, depth: int) -> tuple[str, ...] | None:
        """The strings the class, or else its nearest base of the project, sets the attribute to;
        None where no class along the way sets it, () where one sets it to what is not known."""
        own = dict(shape.strings).get(attribute)
        if own is not None or depth > 8:
            return own
        for base_name, _ in shape.bases:
            parent = self.base(base_name)
            found = self._inherited_strings(parent, attribute, depth + 1) if parent is not None else None
            if found is not None:
                return found
        return None

    def base(self, name: str) -> ProjectClass | None:
        """The project class a base names: through its module, or re-exported by a package
        above it (`from pkg.trainers import Base`, defined in pkg/trainers/base.py)."""
        found = self.names.resolve(name)
        if found is not None or "." not in name:
            return found
        package = "." + name.rsplit(".", 1)[0] + "."
        above = [c for c in self.names.named_like(name) if package in "." + c.name]
        return above[0] if len(above) == 1 else None

    def extended(self) -> set[str]:
        """The classes some class of the project extends; a base that names no class for sure
        counts for every class of its last name, so that no base is taken for a leaf."""
        found: set[str] = set()
        for shape in self.classes.values():
            for name, _ in shape.bases:
                if name in self.entries:
                    continue
                base = self.base(name)
                found |= {base.name} if base is not None else {c.name for c in self.names.named_like(name)}
        return found

    def ancestry(self, shape: ProjectClass) -> _Ancestry:
        if shape.name in self.memo:
            return self.memo[shape.name]
        found = self.memo[shape.name] = _Ancestry()  # a cycle adds nothing
        found.defines |= shape.defines
        found.silenced |= shape.silenced
        for name, _ in shape.bases:
            entry = self.entries.get(name)
            if entry is not None:
                found.reached.setdefault(entry, name)
            base = self.base(name) if entry is None else None
            found.foreign |= entry is None and base is None
            if base is not None:
                inherited = self.ancestry(base)
                found.defines |= inherited.defines
                found.silenced |= inherited.silenced
                found.foreign |= inherited.foreign
                for reached, path in inherited.reached.items():
                    found.reached.setdefault(reached, path)
        return found

    def span_toward(self, shape: ProjectClass, entry: EntryPoint) -> Span:
        """Where the class names the base it reaches the entry point through."""
        for name, span in shape.bases:
            base = self.base(name) if name not in self.entries else None
            if self.entries.get(name) is entry or base is not None and entry in self.ancestry(base).reached:
                return span
        return shape.span


def inherited_flows(classes: Iterable[ProjectClass], entries: dict[str, EntryPoint]) -> list[FunctionFlow]:
    """One flow per leaf class that reaches an entry point: the keys it logs, with their facts
    at the leaf's base; the keys whose making a class along the way overrides are left out."""
    hierarchy = Hierarchy(classes, entries)
    extended = hierarchy.extended()
    flows = []
    for shape in hierarchy.classes.values():
        if shape.name in extended:
            continue
        ancestry = hierarchy.ancestry(shape)
        if ancestry.foreign:
            continue  # `class Tuned(StepMixin, ORPOTrainer)`: another package's trainer may override anything
        sinks: list[tuple[str, frozenset[CodeFact]]] = []
        for entry, path in ancestry.reached.items():
            if entry.overrides & ancestry.defines or entry.paths[0] in ancestry.silenced:
                continue
            span = hierarchy.span_toward(shape, entry)
            for logged in entry.keys:
                facts = facts_at(entry, logged, span, path) if not logged.overrides & ancestry.defines else frozenset()
                sinks += [(key, facts) for key in logged.keys if facts]
        if sinks:
            flows.append(FunctionFlow(f"{shape.name}.{FRAMEWORKS}", (), False, tuple(sinks), ()))
    return flows
