"""Which function of the project a method call reaches, when the call names it through an
object: a method a class inherits (`self.log_stats()` defined in a base), a method of what an
attribute holds (`self.tracker.log_to(...)`, where some method of the class, or of a class it
extends, set `self.tracker = Tracker(...)`), or a method of an object nothing names
(`writer.record(...)`, or `self.strategy.all_reduce(...)` where the class was handed its
strategy): the method of that name when one class of the project alone defines it; for what the
call returns (`targets`), each of them when a few do (`MAX_CANDIDATES`), since whichever runs,
the keys of the dict it returns are what the caller logs.

The inventory follows dicts of metrics through these (evidence/logged_bags.py), so that a
project's own logger is a sink wherever it is called from. Code facts do not: a value's facts
follow only the calls the file itself resolves (code_claims.py), since a wrong callee would
lend a value facts it does not have, where a wrong callee here at most counts a key twice.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from metriclint.base.identifiers import class_like
from metriclint.evidence.dotted import Dotted, last_part
from metriclint.evidence.inherited import Hierarchy
from metriclint.model import FUNCTION, UNKNOWN_OBJECT, FunctionFlow, ProjectClass

_MAX_DEPTH = 8
# The most methods of one name a call on an object of no told class may run, all of them read.
# Measured on the tuning trees (bench/inventory.py and the `init` drafts): up to 3, no key read
# so is invented; Megatron-LM's `response.metrics()` is the one call with 4 (three evaluation
# responses and an unrelated MoE tracker's property), whose keys the draft then invents.
MAX_CANDIDATES = 3


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
        self.memo: dict[tuple[str, bool], tuple[FunctionFlow, ...]] = {}
        self.families: dict[str, tuple[FunctionFlow, ...]] = {}  # `family`'s, by method name
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

    def targets(self, name: str, overridden: bool = True) -> tuple[FunctionFlow, ...]:
        """The functions a call may run: the one `resolve` finds; else, for a method of an object
        no file tells the class of, each of the few methods of that name the project defines
        (`self.settings.method.loss(batch)`, where each of two settings classes has its own: the
        keys either returns are logged, whichever runs); else, for a method whose receiver's
        class neither defines nor inherits it (a group whose class runs the same-named method of
        its workers), or a handle's `.remote` call (model.REMOTE_CALL), the methods of that name
        of the classes whose methods run elsewhere. `overridden`: with, for a method of a class
        of the project, each override of it in the class's subclasses, since the instance may be
        of any of them (`self.model.summarize(out)` where `self.model: Model`, and a subclass's
        `summarize` adds its own keys to what `super().summarize(out)` returns)."""
        found = self._all(name, overridden)
        if found:
            return found
        return self.remote.get(last_part(name), ()) if "." in name else ()

    def backends(self, name: str, caller: str) -> tuple[FunctionFlow, ...]:
        """What a front's call of its backends runs: the call, made in a method, of the method of
        its own name of a class the code names, which the caller's class overrides as the
        class's other subclasses do (`for logger in self.loggers: logger.log_metrics(m, step,
        prefix)` in `Logger(LoggerInterface).log_metrics`): those other overrides, each of which
        may run. None for any other call: where the caller is not among them, which object's
        attributes such a method reads is not known (an actor's engine and a critic's)."""
        if name.startswith(UNKNOWN_OBJECT) or last_part(name) != last_part(caller):
            return ()
        found = self._all(name, True)
        others = tuple(flow for flow in found if flow.name != caller)
        return others if 0 < len(others) < len(found) else ()

    def fanned(self, name: str, caller: str) -> tuple[FunctionFlow, ...]:
        """The methods of the project's own a call may run, several of which may: a front's
        call of its backends, or a call on an object nothing names of a method one family of
        classes alone defines. Most calls: none, told by their names alone."""
        return self.backends(name, caller) or self.family(name, caller)

    def family(self, name: str, caller: str) -> tuple[FunctionFlow, ...]:
        """What a call on an object nothing names runs, where only one family of the project's
        classes defines the method (`_family`): each of its methods, none of which is the
        caller (`self.run.log_metrics(m)` in a backend's own `log_metrics` is the tracker's)."""
        if not name.startswith(UNKNOWN_OBJECT):
            return ()
        method = name[len(UNKNOWN_OBJECT) :]
        if method not in self.families:  # asked for every such call; most names, of many unrelated classes or none
            self.families[method] = self._family(self.methods.get(method, ()))
        found = self.families[method]
        return () if any(flow.name == caller for flow in found) else found

    def resolve(self, name: str) -> FunctionFlow | None:
        """The one function a call runs, where the project tells which: the method as the
        receiver's class has it, not its subclasses' overrides."""
        found = self._all(name, False)
        return found[0] if len(found) == 1 else None

    def _all(self, name: str, overridden: bool) -> tuple[FunctionFlow, ...]:
        key = (name, overridden)
        if key not in self.memo:
            self.memo[key] = ()  # a cycle reaches nothing
            self.memo[key] = self._resolved(name, 0, overridden)
        return self.memo[key]

    def direct(self, name: str) -> FunctionFlow | None:
        """The definition a name reaches, as imports spell it, or through a package above its
        module that re-exports it (`from pkg.utils import timer`, defined in pkg/utils/profile.py)."""
        return self.named.through_packages(name)

    def _resolved(self, name: str, depth: int, overridden: bool = False) -> tuple[FunctionFlow, ...]:
        """The definition a name reaches, and with `overridden` its overrides below the
        receiver's class; or, for a method of an object nothing tells the class of, the methods
        of that name of the project (`_defining`)."""
        if name.endswith("()"):
            return self._returned_functions(name[:-2], depth)
        found = self.direct(name)
        if found is not None and found.shell:
            return self._filled(found)
        if found is not None or depth > _MAX_DEPTH or "." not in name:
            return self._and_overrides(found, name.rpartition(".")[0], overridden) if found is not None else ()
        if name.startswith(UNKNOWN_OBJECT):
            return self._defining(name[len(UNKNOWN_OBJECT) :])
        made = self.hierarchy.base(name) if class_like(name) else None
        if made is not None:  # `Record(tokens, info)`: the class's `__init__`, its own or a base's, runs
            init = self._inherited(made, "__init__", depth)
            return (init,) if init is not None else ()
        owner, method = name.rsplit(".", 1)
        held = self.held(owner, depth)
        if held is not None:
            return self._resolved(f"{held}.{method}", depth + 1, overridden)
        project_class = self.hierarchy.base(owner)
        if project_class is not None:
            inherited = self._inherited(project_class, method, depth)
            if inherited is not None and not inherited.shell:
                return self._and_overrides(inherited, project_class.name, overridden)
            below = self._overriding(project_class, method)  # the class's own subclasses, not its base's others
            if below:
                return below
            return self._mixed(inherited) if inherited is not None else self._kept_function(project_class, method, depth)
        if "." not in owner:
            return ()
        holder, attribute = owner.rsplit(".", 1)  # `module.Class.tracker.log_to`
        project_class = self.hierarchy.base(holder)
        if project_class is None and self._of_a_class(holder):  # `module.Class.config.method.loss`: through each attribute
            held_class = self._held_class(holder, depth)
            project_class = self.hierarchy.base(held_class) if held_class is not None else None
            if project_class is None:
                return self._defining(method)
        held = self._attribute(project_class, attribute, depth) if project_class is not None else None
        if held is None:  # set from a parameter (`self.strategy = strategy`): the methods of its name
            return self._defining(method) if project_class is not None else ()
        return self._resolved(f"{held}.{method}", depth + 1, overridden)

    def _of_a_class(self, path: str) -> bool:
        """Whether `path` is an attribute of an attribute of a class of the project
        (`module.Class.config.method`), not a module's name (`pkg.mod.WRITER`)."""
        owner = path
        while "." in owner:
            owner = owner.rsplit(".", 1)[0]
            if class_like(owner) and self.hierarchy.base(owner) is not None:
                return True
        return False

    def _held_class(self, path: str, depth: int) -> str | None:
        """The class of what `path` (`module.Class.config`, `module.Class.config.method`) holds:
        the attribute of the class its owner's path holds, as that class or a base sets it."""
        holder, attribute = path.rsplit(".", 1)
        owner = self.hierarchy.base(holder)
        if owner is None and holder.count(".") > 1 and depth <= _MAX_DEPTH:
            outer = self._held_class(holder, depth + 1)
            owner = self.hierarchy.base(outer) if outer is not None else None
        return self._attribute(owner, attribute, depth) if owner is not None else None

    def _and_overrides(self, flow: FunctionFlow, receiver: str, overridden: bool) -> tuple[FunctionFlow, ...]:
        """The method, then (with `overridden`) its overrides in the subclasses of the
        receiver's class, when that is a class of the project."""
        project_class = self.hierarchy.base(receiver) if overridden else None
        if project_class is None:
            return (flow,)
        return (flow, *(f for f in self._overriding(project_class, last_part(flow.name)) if f is not flow))

    def _returned_functions(self, maker: str, depth: int) -> tuple[FunctionFlow, ...]:
        """What a call of what a call returned runs (`step = get_step_func(); step(batch)`,
        written `pkg.get_step_func()`): the project's functions the maker returns as values
        (model.FUNCTION), whichever it picks."""
        if depth > _MAX_DEPTH:
            return ()
        found = (
            target
            for flow in self._resolved(maker, depth + 1)
            for held in flow.gives.held
            if held.kind == FUNCTION and not held.item
            for target in self._resolved(held.name, depth + 1)
        )
        return tuple(dict.fromkeys(found))

    def _filled(self, shell: FunctionFlow) -> tuple[FunctionFlow, ...]:
        """What runs where a class declares a method it leaves empty (a docstring, `pass`, or
        `raise NotImplementedError`): its subclasses' definitions (`_overriding`); else, in a
        class made of mixins whose other parts define it, the project's other methods of that
        name that do something, when they are few (`_defining`); else the empty one."""
        owner, method = shell.name.rsplit(".", 1)
        project_class = self.hierarchy.base(owner)
        return (self._overriding(project_class, method) if project_class is not None else ()) or self._mixed(shell)

    def _mixed(self, shell: FunctionFlow) -> tuple[FunctionFlow, ...]:
        """Where no subclass defines a method its class leaves empty, a class made of mixins may:
        the project's other methods of that name that do something, when they are few; else the
        empty one."""
        return _few([flow for flow in self.methods.get(last_part(shell.name), ()) if not flow.shell]) or (shell,)

    def _overriding(self, project_class: ProjectClass, method: str) -> tuple[FunctionFlow, ...]:
        """The definitions of a method in the project's subclasses of a class that leaves it
        abstract (no body that does anything, or `raise NotImplementedError`): an instance that
        calls it on itself is of one of them, so each may run (a template method's steps)."""
        found = (self.direct(f"{shape.name}.{method}") for shape in self.hierarchy.descendants(project_class.name))
        return tuple(flow for flow in found if flow is not None and not flow.shell)

    def _defining(self, method: str) -> tuple[FunctionFlow, ...]:
        """The methods of this name the project's classes define, when they are few: which of
        them runs is not told, but the object is one of theirs. A name many classes define
        (`forward`, `update`) says nothing of which."""
        return _few(self.methods.get(method, ()))

    def _family(self, defined: Sequence[FunctionFlow]) -> tuple[FunctionFlow, ...]:
        """Where one class declares a method it leaves empty and every other class that defines
        it extends that one (an interface, its backends, and the front that hands each call on
        to them: `def train(logger)` then `logger.log_metrics(m, step, prefix="train")`), the
        object is of that family, as if the call were typed with the interface: its
        implementations, at least two. One class that happens to define a method of a tracker's
        name (`Timers.log`) says nothing of an object handed in (`wandb_writer.log(m)`)."""
        owners = {flow.name.rsplit(".", 1)[0]: flow for flow in defined}
        for owner, flow in owners.items():
            if flow.shell and owners.keys() - {owner} <= {shape.name for shape in self.hierarchy.descendants(owner)}:
                found = self._filled(flow)
                return found if len(found) > 1 else ()
        return ()

    def held(self, owner: str, depth: int) -> str | None:
        """The class `owner` is an instance of, when it is a call's result (`pkg.get_timers()`,
        through what that function returns; `pkg.Trainer()`, the class it makes) or a module's
        name (`pkg.mod.tracker`)."""
        if owner.endswith("()"):
            project_class = self.hierarchy.base(owner[:-2])
            if project_class is not None:
                return project_class.name
            makers = self._resolved(owner[:-2], depth + 1)
            made = makers[0].makes if len(makers) == 1 else ""
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

    def _kept_function(self, project_class: ProjectClass, attribute: str, depth: int) -> tuple[FunctionFlow, ...]:
        """A call of an attribute the class keeps a function of the project in (`self.score_fn =
        score_fn or default_scores`, then `self.score_fn(samples)`): that function, the one the
        code names; a function a caller hands over instead is not told."""
        held = self._attribute(project_class, attribute, depth)
        found = self.direct(held) if held is not None and not held.endswith("()") else None
        return (found,) if found is not None else ()

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


def _few(defined: Sequence[FunctionFlow]) -> tuple[FunctionFlow, ...]:
    """The definitions of a method, when there are few enough to read each (`MAX_CANDIDATES`)."""
    return tuple(defined) if len(defined) <= MAX_CANDIDATES else ()
