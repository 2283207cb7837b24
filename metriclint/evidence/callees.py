"""Which function of the project a method call reaches, when the call names it through an
object: a method a class inherits (`self.log_stats()` defined in a base), a method of what an
attribute holds (`self.tracker.log_to(...)`, where some method of the class, or of a class it
extends, set `self.tracker = Tracker(...)`), or a method of an object nothing names
(`writer.record(...)`, or `self.strategy.all_reduce(...)` where the class was handed its
strategy), when one class of the project alone defines a method of that name.

The inventory follows dicts of metrics through these (evidence/logged_bags.py), so that a
project's own logger is a sink wherever it is called from. Code facts do not: a value's facts
follow only the calls the file itself resolves (code_claims.py), since a wrong callee would
lend a value facts it does not have, where a wrong callee here at most counts a key twice.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from metriclint.evidence.dotted import Dotted, last_part
from metriclint.evidence.inherited import Hierarchy
from metriclint.model import UNKNOWN_OBJECT, FunctionFlow, ProjectClass

_MAX_DEPTH = 8


class Callees:
    """`instances`: module-level names that hold an instance of a class (`pkg.mod.tracker` ->
    `pkg.trackers.Tracker`); `dispatched`: classes whose methods run elsewhere, called by name
    through a handle or a group of handles (`ray.remote(Worker)`, rules/dataflow.yaml `dispatch`)."""

    def __init__(
        self,
        functions: Mapping[str, FunctionFlow],
        classes: Iterable[ProjectClass],
        instances: Mapping[str, str] = {},
        dispatched: Iterable[str] = (),
    ) -> None:
        self.named = Dotted(functions)
        self.instances = Dotted(instances).resolve
        self.hierarchy = Hierarchy(classes, {})
        self.methods: dict[str, list[FunctionFlow]] = {}
        for name, flow in functions.items():
            owner = name.rsplit(".", 1)[0]
            if owner in self.hierarchy.classes:
                self.methods.setdefault(last_part(name), []).append(flow)
        self.memo: dict[str, FunctionFlow | None] = {}
        self.remote = self._remote_methods(functions.values(), dispatched)

    def _remote_methods(self, functions: Iterable[FunctionFlow], dispatched: Iterable[str]) -> dict[str, tuple[FunctionFlow, ...]]:
        """The methods each dispatched class has, its own and then its bases' in order, by name."""
        classes = [c for c in (self.hierarchy.base(name) for name in dispatched) if c is not None]
        if not classes:
            return {}
        owned: dict[str, list[FunctionFlow]] = {}
        for flow in functions:
            owned.setdefault(flow.name.rsplit(".", 1)[0], []).append(flow)
        found: dict[str, dict[str, FunctionFlow]] = {}
        for project_class in classes:
            has: set[str] = set()
            for owner in self._lineage(project_class, 0):
                for flow in owned.get(owner, ()):
                    method = last_part(flow.name)
                    if method not in has:
                        has.add(method)
                        found.setdefault(method, {})[flow.name] = flow
        return {method: tuple(flows.values()) for method, flows in found.items()}

    def _lineage(self, project_class: ProjectClass, depth: int) -> list[str]:
        """The class and the project classes it extends, depth first, each once."""
        found = [project_class.name]
        for base, _ in project_class.bases if depth <= _MAX_DEPTH else ():
            parent = self.hierarchy.base(base)
            found += [name for name in self._lineage(parent, depth + 1) if name not in found] if parent is not None else []
        return found

    def targets(self, name: str) -> tuple[FunctionFlow, ...]:
        """The functions a call may run: the one `resolve` finds; else, for a method whose
        receiver's class neither defines nor inherits it (an object no file names, a group
        whose class runs the same-named method of its workers), or a handle's `.remote` call
        (model.REMOTE_CALL), the methods of that name of the classes whose methods run elsewhere."""
        found = self.resolve(name)
        if found is not None:
            return (found,)
        return self.remote.get(last_part(name), ()) if "." in name else ()

    def resolve(self, name: str) -> FunctionFlow | None:
        if name not in self.memo:
            self.memo[name] = None  # a cycle reaches nothing
            self.memo[name] = self._resolved(name, 0)
        return self.memo[name]

    def direct(self, name: str) -> FunctionFlow | None:
        """The definition a name reaches, as imports spell it, or through a package above its
        module that re-exports it (`from pkg.utils import timer`, defined in pkg/utils/profile.py)."""
        return self.named.through_packages(name)

    def _resolved(self, name: str, depth: int) -> FunctionFlow | None:
        found = self.direct(name)
        if found is not None or depth > _MAX_DEPTH or "." not in name:
            return found
        if name.startswith(UNKNOWN_OBJECT):
            return self._only(name[len(UNKNOWN_OBJECT) :])
        owner, method = name.rsplit(".", 1)
        held = self.held(owner, depth)
        if held is not None:
            return self._resolved(f"{held}.{method}", depth + 1)
        project_class = self.hierarchy.base(owner)
        if project_class is not None:
            return self._inherited(project_class, method, depth)
        if "." not in owner:
            return None
        holder, attribute = owner.rsplit(".", 1)  # `module.Class.tracker.log_to`
        project_class = self.hierarchy.base(holder)
        held = self._attribute(project_class, attribute, depth) if project_class is not None else None
        if held is None:  # set from a parameter (`self.strategy = strategy`): the one method of its name
            return self._only(method) if project_class is not None else None
        return self._resolved(f"{held}.{method}", depth + 1)

    def _only(self, method: str) -> FunctionFlow | None:
        """The method of this name, when one class of the project alone defines it."""
        defined = self.methods.get(method, [])
        return defined[0] if len(defined) == 1 else None

    def held(self, owner: str, depth: int) -> str | None:
        """The class `owner` is an instance of, when it is a call's result (`pkg.get_timers()`,
        through what that function returns; `pkg.Trainer()`, the class it makes) or a module's
        name (`pkg.mod.tracker`)."""
        if owner.endswith("()"):
            maker = self._resolved(owner[:-2], depth + 1)
            made = maker.makes if maker is not None else ""
            if maker is None and (project_class := self.hierarchy.base(owner[:-2])) is not None:
                return project_class.name
            return (self.held(made, depth + 1) or made) if made and depth <= _MAX_DEPTH else None
        return self.instances(owner)

    def _inherited(self, project_class: ProjectClass, method: str, depth: int) -> FunctionFlow | None:
        """The method as the class has it: its own, else the first of its bases' (in order)."""
        found = self.direct(f"{project_class.name}.{method}")
        if found is not None or depth > _MAX_DEPTH:
            return found
        for base, _ in project_class.bases:
            parent = self.hierarchy.base(base)
            inherited = self._inherited(parent, method, depth + 1) if parent is not None else None
            if inherited is not None:
                return inherited
        return None

    def _attribute(self, project_class: ProjectClass, attribute: str, depth: int) -> str | None:
        """The class an attribute holds an instance of, as the class or one of its bases sets it."""
        held = dict(project_class.attributes).get(attribute)
        if held is not None or depth > _MAX_DEPTH:
            return held
        for base, _ in project_class.bases:
            parent = self.hierarchy.base(base)
            found = self._attribute(parent, attribute, depth + 1) if parent is not None else None
            if found is not None:
                return found
        return None
