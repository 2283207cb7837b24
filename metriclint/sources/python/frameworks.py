"""Keys a framework logs itself, for the walk: a class that subclasses an entry point of
rules/code/frameworks.yaml (transformers' Trainer), or a call of one (`LearningRateMonitor()`),
logs the entry point's keys without a logging call in the project. They join the inventory at
the use. A call's facts reach ML006 as a function flow of the file's own; a class's wait for
the project-wide step (evidence/inherited.py), since a class of another file may extend it and
change what it logs, so each class is recorded with its bases and the methods that matter.

A name alone is no use: the class or call must resolve, through the file's imports, to the
entry point's full path. A use whose subclass overrides how the keys are made, or that a
callback of the project's own may rewrite, gives nothing (frameworks.yaml says which). A hook
such as `on_log` counts only if it may change one of the keys (hooks.py); a callback handed to
the entry point by a name is judged by the project-wide step, where its class is known."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from metriclint.knowledge.frameworks import Called, EntryPoint, FrameworkKey, facts_at
from metriclint.model import (
    FRAMEWORKS,
    CallbackList,
    CodeFact,
    FunctionFlow,
    KeyUse,
    MethodCall,
    PassedCallback,
    ProjectClass,
    Rewrite,
    Span,
)
from metriclint.sources.python import strings
from metriclint.sources.python.bindings import Bindings
from metriclint.sources.python.callback_lists import module_tables, returned_callbacks
from metriclint.sources.python.flow import Scope
from metriclint.sources.python.hooks import keys_written
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
        self.passed: list[PassedCallback] = []
        self.callback_lists: list[CallbackList] = []
        self.method_calls: list[MethodCall] = []
        self.dispatched: list[str] = []  # classes whose methods run elsewhere (`ray.remote(Worker)`), dotted as imported
        self._dispatch_names = frozenset(path.rsplit(".", 1)[-1] for path in self.rules.dispatchers)
        self._tables: dict[str, ast.Dict] | None = None  # the module's dicts written out, once a function needs them
        self._classes: list[tuple[str, Span, tuple[tuple[str, Span], ...], frozenset[str]]] = []
        self._class_rewrites: list[frozenset[str]] = []
        index = self.code.knowledge.entry_index  # the same for every file: worked out once
        self._entries, self._entry_names, self._rewritable = index.entries, index.names, index.rewritable
        self._overridable, self._hooks, self._wanted = index.overridable, index.hooks, index.wanted
        self._called_methods = index.called  # methods of `called`: a call of one logs keys
        self._constructors = index.constructors
        self._api_calls: set[str] = set()  # methods of `when_called` the file calls
        self._rewriting: set[str] = set()  # entry points (first path) a hook the file defines, or a callback it adds, may rewrite
        self._judged: dict[int, frozenset[str]] = {}

    def defined_here(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """The walk meets a function or method definition."""
        if node.name in self._hooks[0]:
            self._rewriting |= self._changed_by(node)
        if "callback" in node.name.lower():
            self._tables = module_tables(self.tree) if self._tables is None else self._tables
            listed = returned_callbacks(node, self._tables, self._callback_path)
            if listed is not None:
                self.callback_lists.append(CallbackList(".".join((self.module, *self.classes, node.name)), listed))

    def _changed_by(self, hook: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        """The entry points (first path) one of whose keys the hook may change."""
        if id(hook) not in self._judged:
            entries = (e for e in self._entries if hook.name in e.unless_defined)
            self._judged[id(hook)] = frozenset(e.paths[0] for e in entries if e.changed_by(keys_written(hook, e, self._resolve)))
        return self._judged[id(hook)]

    def _resolve(self, func: ast.expr) -> str | None:
        return self.code.chain(func, {})

    def _visit_Assign(self, node: ast.Assign) -> bool:
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                self._patched(target.value, target.attr, node)
        return super()._visit_Assign(node)

    def _patched(self, owner: ast.expr, method: str, node: ast.AST) -> None:
        """`Trainer._maybe_log_save_evaluate = patched` (or `setattr`) replaces how the
        framework's own class makes its keys, for every use in the project."""
        entry = self._entry(owner)
        if entry is not None and method in entry[0].overrides.union(*(k.overrides for k in entry[0].keys)):
            self.rewrites.append(Rewrite(entry[0].paths, self.span(node)))

    def _visit_Call(self, node: ast.Call) -> bool:
        if isinstance(node.func, ast.Attribute) and node.func.attr in self._hooks[1]:
            self._added(node, node.func.attr)
        if isinstance(node.func, ast.Attribute) and node.func.attr in self._wanted:
            self._api_calls.add(node.func.attr)
        if isinstance(node.func, ast.Attribute) and node.func.attr in self._called_methods:
            self._method_called(node, node.func.value, node.func.attr)
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3 and isinstance(node.args[1], ast.Constant):
            self._patched(node.args[0], str(node.args[1].value), node)
        entry = self._entry(node.func)
        if entry is None and isinstance(node.func, ast.Attribute) and node.func.attr in self._constructors:
            entry = self._entry(node.func.value)  # `Runner.from_cfg(cfg)`: a class method that makes an instance
            entry = entry if entry is not None and node.func.attr in entry[0].constructors else None
        if entry is not None:
            self.entry_uses.append(_Use(*entry, self.span(node.func), None, self._changes_logs(entry[0], node)))
        if node.args and self._dispatches(node.func):
            path = self._callback_path(node.args[0])
            self.dispatched += [path] if path is not None else []
        return super()._visit_Call(node)

    def _method_called(self, node: ast.Call, receiver: ast.expr, method: str) -> None:
        """`trainer.evaluate()` on a name that holds what a class made (`trainer = Tuned(...)`),
        `Tuned(...).evaluate()`, or `self.evaluate()` in a class: whether the class is an entry
        point's, and so logs the method's keys, is the project-wide step's to say
        (evidence/called_keys.py)."""
        name = receiver.id if isinstance(receiver, ast.Name) else ""
        scope = self.scopes[-1] if name in self.scopes[-1].instances else self.scopes[0]
        if isinstance(receiver, ast.Call):
            owner, made = self.code.instance(receiver), receiver
        elif name == "self":
            owner, made = ".".join((self.module, *self.classes)) if self.classes else None, None
        else:
            owner, made = scope.instances.get(name), scope.results.get(name)
        if not owner or owner.endswith("()") or made is not None and self._made_silent(made):
            return
        for entry in self._entries:
            called = entry.called
            prefixes = self._call_prefixes(called, node, method) if called is not None else None
            if called is not None and prefixes:
                returned = self._handed_callables(called.returned_by, made, scope) if made is not None else ()
                self.method_calls.append(MethodCall(entry.paths[0], owner, method, prefixes, returned, self.span(node)))

    def _made_silent(self, made: ast.Call) -> bool:
        """The object was made by a call of the entry point itself that leaves it silent (a
        callback it cannot name, keywords it cannot read)."""
        span = self.span(made.func)
        return any(use.span == span and use.silent for use in self.entry_uses)

    def _call_prefixes(self, called: Called, node: ast.Call, method: str) -> tuple[str, ...] | None:
        """The prefixes the call passes (by keyword or at its place), else the method's default;
        None when it passes one metriclint cannot read."""
        given = next((k.value for k in node.keywords if k.arg == called.prefix), None)
        starred = any(isinstance(a, ast.Starred) for a in node.args[: called.position + 1])
        if given is None and not starred and len(node.args) > called.position:
            given = node.args[called.position]
        if given is not None:
            return strings.values(given, self.string)
        if starred or any(k.arg is None for k in node.keywords):
            return None  # `**settings` may hold the prefix
        return (called.default(method),)

    def _handed_callables(self, keyword: str, made: ast.Call, scope: Scope) -> tuple[str, ...]:
        """The functions that make the dict a callable the object was made with returns: by
        `keyword` (`compute_metrics=Scores(tok)`: its class's `__call__`; `compute_metrics=
        score`: that function), or under that key of a dict handed over with `**`."""
        values = [k.value for k in made.keywords if k.arg == keyword]
        for splat in (k.value for k in made.keywords if k.arg is None):
            if isinstance(splat, ast.Name):
                values += _put_under(scope.definition or self.tree, splat.id, keyword)
        found = (self._handed_callable(value) for value in values)
        return tuple(dict.fromkeys(f for f in found if f))

    def _handed_callable(self, value: ast.expr) -> str | None:
        made = self.code.instance(value) if isinstance(value, ast.Call) else None
        if isinstance(value, ast.Name):
            made = self.instance(value.id)
        if made is not None:
            return None if made.endswith("()") else f"{made}.__call__"
        return self.code.callee(value, self.classes) if isinstance(value, (ast.Name, ast.Attribute)) else None

    def _dispatches(self, node: ast.expr) -> bool:
        """`ray.remote` (rules/dataflow.yaml `dispatch`), as a call or a decorator, bare or called."""
        node = node.func if isinstance(node, ast.Call) else node
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        return name in self._dispatch_names and self.code.chain(node, {}) in self.rules.dispatchers

    def entry_class(self, node: ast.ClassDef) -> None:
        """A class that names an entry point among its bases, or that extends another class of
        the framework with a method that may rewrite the entry point's logs (`on_log`)."""
        methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        defined = frozenset(s.name for s in methods)
        rewrites = frozenset().union(*(self._changed_by(s) for s in methods if s.name in self._hooks[0]))
        bases = []
        for written in node.bases:
            # `PassResponse(Response[bool])`: a generic class's base is the class
            base = written.value if isinstance(written, ast.Subscript) else written
            entry = self._entry(base)
            if entry is not None:
                self.entry_uses.append(_Use(*entry, self.span(base), defined, bool(entry[0].overrides & defined)))
            rewritten = [e for e in self._rewritable if e.paths[0] in rewrites]
            path = self.code.chain(base, {}) if rewritten else None
            self.rewrites += [Rewrite(e.paths, self.span(node)) for e in rewritten if path is not None and e.shipped(path)]
            name = self.code.callee(base, [])
            if name is not None:
                bases.append((name, self.span(base)))
        name = ".".join((self.module, *self.classes, node.name))  # every class: one the project cannot place is another package's
        self.dispatched += [name] if any(self._dispatches(d) for d in node.decorator_list) else []
        self._classes.append((name, self.span(node), tuple(bases), defined & self._overridable))
        self._class_rewrites.append(rewrites)

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
            if keyword.arg == entry.callbacks and entry.callbacks and not self._listed(entry, keyword.value):
                return True
        return False

    def _listed(self, entry: EntryPoint, value: ast.expr) -> bool:
        """A callbacks argument whose every callback is named (or none is given)."""
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        if isinstance(value, ast.Call):  # callbacks=get_callbacks(args): what the function returns
            path = self._callback_path(value.func)
            if path is not None:
                self.passed.append(PassedCallback(entry.paths, path + "()", self.span(value)))
            return path is not None
        return isinstance(value, (ast.List, ast.Tuple)) and all([self._named(entry, item) for item in value.elts])

    def _added(self, node: ast.Call, method: str) -> None:
        """`trainer.add_callback(X)`: the file's uses of each entry point that takes callbacks so
        keep their facts only if X is named, and the project-wide step finds it harmless."""
        for entry in self._entries:
            if method in entry.unless_called and (node.keywords or not all([self._named(entry, arg) for arg in node.args])):
                self._rewriting.add(entry.paths[0])

    def _named(self, entry: EntryPoint, item: ast.expr) -> bool:
        """A callback (`Report(path)`, or the class itself) the framework ships, or one named for
        the project-wide step to judge; False for one metriclint cannot name."""
        path = self._callback_path(item.func if isinstance(item, ast.Call) else item)
        if path is None:
            return False
        if not entry.shipped(path):
            self.passed.append(PassedCallback(entry.paths, path, self.span(item)))
        return True

    def _callback_path(self, node: ast.expr) -> str | None:
        """A class or function as the file's imports (or its own definitions) name it."""
        path = self.code.chain(node, {}) or self.code.callee(node, [])
        return None if path is None or "(" in path else path

    def _attribute_classes(self, name: str) -> tuple[tuple[str, str], ...]:
        """What class each attribute holds: as its methods set it to an instance of a class, else
        as an annotation declares it (`controller: Controller`, set from what the module cannot
        place, `cfg.build(pg)`, or from a getter only the project-wide step may place, `make()`)."""
        held = dict(self.attribute_types.get(name, {}))
        for attribute, made in self.declared_types.get(name, {}).items():
            if "(" in held.get(attribute, "("):
                held[attribute] = made
        return tuple(held.items())

    def framework_keys(self) -> None:
        """The keys of the file's uses and the facts of its calls, less those a definition or
        a call elsewhere in the file may change; and the file's classes, with the entry points
        whose logs it may change."""
        silenced = frozenset(e.paths[0] for e in self._entries if self._silenced(e))
        self.method_calls = [call for call in self.method_calls if call.entry not in silenced]
        self.project_classes = [
            ProjectClass(
                *shape, silenced, rewrites, self._attribute_classes(shape[0]), tuple(self.attribute_texts.get(shape[0], {}).items())
            )
            for shape, rewrites in zip(self._classes, self._class_rewrites)
        ]
        sinks: list[tuple[str, frozenset[CodeFact]]] = []
        for use in self.entry_uses:
            if use.silent or use.entry.paths[0] in silenced:
                continue
            for logged in use.entry.keys:
                if use.defined is None or not logged.overrides & use.defined:
                    self._logged(use, logged, sinks)
        if sinks:
            self.functions.append(FunctionFlow(f"{self.module}.{FRAMEWORKS}", (), False, tuple(sinks), ()))

    def _silenced(self, entry: EntryPoint) -> bool:
        """The file defines a hook that may change one of the entry point's keys, adds a
        callback metriclint cannot name, or calls none of the methods of the API that logs them
        (`when_called`: trl's PPOTrainer logs its step's keys only where `log_stats` is called)."""
        unused_api = bool(entry.when_called) and not entry.when_called & self._api_calls
        return entry.paths[0] in self._rewriting or unused_api

    def _logged(self, use: _Use, logged: FrameworkKey, sinks: list[tuple[str, frozenset[CodeFact]]]) -> None:
        """A class's facts are the project-wide step's: only a call's are known here."""
        facts = facts_at(use.entry, logged, use.span, use.path) if use.defined is None else frozenset()
        for key in logged.keys:
            self.keys.append(KeyUse(key, use.span, measured=False, sink=f"{use.entry.says}, from its own loop", framework=True))
            if facts:
                sinks.append((key, facts))


def _put_under(block: ast.AST, name: str, key: str) -> list[ast.expr]:
    """What `block` puts under `key` in the dict `name` holds: `name[key] = value`, `name =
    {key: value}` or `name = dict(key=value)`."""
    found: list[ast.expr] = []
    for node in ast.walk(block):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
            found += [value] if isinstance(target.slice, ast.Constant) and target.slice.value == key else []
        elif isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Dict):
            found += [v for k, v in zip(value.keys, value.values) if isinstance(k, ast.Constant) and k.value == key]
        elif isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            found += [k.value for k in value.keywords if value.func.id == "dict" and k.arg == key]
    return found
