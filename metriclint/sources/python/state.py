"""What the walk over a Python file's `ast` holds while it goes, and how it goes.

The walk is a stack of layers, each a module: this one (the state and the dispatch from a
node type to its `_visit_X` method), roots.py (what a value is), sinks.py (where values are
logged), said.py (what log messages say of them), bindings.py (what names hold), frameworks.py
(the keys an entry point such as transformers' Trainer logs itself) and walk.py (definitions, docstrings, the rest). A
layer's `_visit_X` methods join the dispatch simply by being defined.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.knowledge.code_sections import Unreduced
from metriclint.knowledge.sinks import sinks
from metriclint.model import NAMED_OBJECT, CallFlow, CodeFact, FlagDefault, FunctionFlow, KeyUse, ResultOf, Span
from metriclint.sources.python.attribute_strings import attribute_strings
from metriclint.sources.python.code_reader import CodeReader
from metriclint.sources.python.dataclass_fields import AS_DICT_CALLS
from metriclint.sources.python.flow import FlowRules, Scope
from metriclint.sources.python.kept_values import KeptValues
from metriclint.sources.python.logged_returns import Hook, Hooked
from metriclint.sources.python.messages import Field
from metriclint.sources.python.prose import Prose
from metriclint.sources.python.strings import CLASS_NAMES
from metriclint.sources.python.tables import Tables
from metriclint.sources.python.text import Literal, PythonText


@dataclass(frozen=True, slots=True)
class Logging:
    """What the logging call a value is passed to does with it: `done`, facts that replace the
    value's own for their facets (Lightning's sync_dist=True); `unreduced`, the entry of
    rules/code/ranks.yaml when the call logs each process's value as given (at `call`)."""

    done: frozenset[CodeFact] = frozenset()
    unreduced: Unreduced | None = None
    call: ast.Call | None = None
    sink: str = ""  # what the call is, as rules/sinks.yaml says it
    at: Span | None = None  # where the call is
    forks: tuple[str, ...] = ()  # the suffixes each key gets, once each, in place of none (rules/sinks.yaml `forks`)
    # where the call is, on an object nothing names, when a method of the project's own may run
    # instead (WalkState.via): for the keys of a dict written in the call, recorded where the walk
    # visits it, after the call. Through an attribute, such a key stands as written: the class an
    # attribute is told to hold is its last assignment's, and another branch may set a tracker.
    via: Span | None = None


NOT_LOGGED = Logging()


class WalkState:
    """The walk's position (scopes, classes, blocks, the `if` tests it is in) and what it has
    found so far (keys, function flows, calls, literals, documented definitions)."""

    # node type -> its `_visit_X` method, which returns whether the walk goes on into the node's children
    visits: ClassVar[dict[type, Callable[[Any, Any], bool]]] = {}

    def __init_subclass__(cls, only: frozenset[type] | None = None) -> None:
        """`only`: the node types the subclass's walk stops at; the others it passes through."""
        super().__init_subclass__()
        found = {
            getattr(ast, name.removeprefix("_visit_")): method
            for layer in reversed(cls.__mro__)
            for name, method in vars(layer).items()
            if name.startswith("_visit_")
        }
        cls.visits = found if only is None else {kind: method for kind, method in found.items() if kind in only}

    def __init__(
        self,
        path: str,
        rules: FlowRules,
        text: PythonText,
        module: ast.Module,
        prometheus: bool = False,
        code: tuple[Known, ...] = (),
        message_functions: frozenset[str] = frozenset(),
    ) -> None:
        self.path, self.rules, self.text, self.tree, self.prometheus = path, rules, text, module, prometheus
        self.message_functions = message_functions  # the project's own logging helpers print messages too
        self.sinks = sinks(message_functions)
        self.tables = Tables(path, text)
        self.code = CodeReader(path, module, text, knowledge(code))
        self.module = self.code.module
        self.prose = Prose(path)
        self.keys: list[KeyUse] = []
        self.reads: list[KeyUse] = []  # keys read back from a dict (sinks.py)
        self.scopes: list[Scope] = [Scope(f"{self.module}.<module>", body=())]
        self.scopes[0].known = self.scopes[0].instances
        self.classes: list[str] = []
        self.bases: list[frozenset[str]] = []  # the last names of each class's bases, as the classes nest
        self.base_paths: list[frozenset[str]] = []  # each class's bases by import path, where the imports name them
        self.class_nodes: list[ast.ClassDef] = []  # the classes the walk is in
        self._class_strings: dict[int, dict[str, tuple[str, ...]]] = {}  # by class node id, read when a key asks
        self.hooked: list[Hooked] = []  # each class's methods whose return a framework logs (logged_returns.py)
        self.blocks: list[int] = []
        self.tests: list[set[str]] = []  # the names the tests of the `if` statements the walk is in read
        self.guards: list[tuple[tuple[int, ...], str]] = []  # (body's block path, flag) of each `if FLAG:` the walk is in
        self.flags: list[FlagDefault] = []  # flags defined here (flags.py)
        self.functions: list[FunctionFlow] = []
        self.calls: list[CallFlow] = []
        self.sites: dict[int, ResultOf] = {}  # call node id -> its site, read where the call is met
        self.unfollowed: dict[str, ResultOf] = {}  # function -> the site of its calls nothing follows (roots.py)
        self.logged_with: dict[int, Logging] = {}  # dict node id -> what the call logging it does to its values
        self.literals: list[ast.AST] = []  # every string literal, for finding the comments
        self.owners: list[tuple[ast.AST, Literal]] = []  # definitions with a docstring
        self.waiting: list[tuple[Field, tuple[Any, ...]]] = []  # message fields, by the handle of the value each formats (said.py)
        # (function, variable) -> the parts of a message put together in it, each with the handles of the values it formats (said.py)
        self.composing: dict[tuple[str, str], list[tuple[ast.expr, dict[int, tuple[Any, ...]]]]] = {}
        self.logged_as: dict[tuple[Any, ...], list[str]] = {}  # a value's handle -> the keys it is logged under
        self.printed_as: dict[int, str] = {}  # id of a waiting message field -> the key it is checked under if never logged (said.py)
        self.tentative: list[
            tuple[Span, str, str, tuple[str, ...]]
        ] = []  # sink calls by a method name that may be the project's own (sinks.py), with the function they are in and their keywords
        self.via: Span | None = None  # the tentative sink call whose keys are being recorded
        self.held: list[dict[str, str]] = []  # per class the walk is in: `self.X` -> the knowledge-base object it holds (held.py)
        self.class_held: dict[str, dict[str, str]] = {}  # the same, by the name of each class of the module
        self._accumulates: dict[int, bool] = {}  # class node id -> whether it reads how many micro-batches a step accumulates
        self.kept: list[KeptValues] = []  # per class the walk is in: what its methods put in its attributes (kept_values.py)
        self.stepped_calls: list[
            dict[str, tuple[str, ast.Call, str]]
        ] = []  # per class: methods it calls only after a scheduler step (held.py)
        self.attribute_types: dict[str, dict[str, str]] = {}  # module.Class -> attribute -> the class its methods set it to an instance of
        self.typed_dicts: dict[
            str, tuple[str, ...]
        ] = {}  # the module's classes that extend TypedDict (calling one makes a dict), with their fields
        self.record_classes: dict[str, tuple[str, ...]] = {}  # the module's record classes, with their fields (dataclass_fields.py)
        # whether the module turns a record into a dict itself (`asdict(stats)`): only then are its
        # dataclasses and models made records of (a module of configurations made and handed on,
        # Megatron-LM's, does not); a named tuple, a small record of values, anywhere
        self.reads_records = any(call in text.text for call in AS_DICT_CALLS)
        self.typed_families: set[str] = set()  # those of them whose fields are each a dict of numbers by name (annotated.family_table)
        self.module_classes: dict[str, ast.ClassDef] = {}  # the module's top-level classes met so far, by name
        self.declared_types: dict[str, dict[str, str]] = {}  # module.Class -> attribute -> the class an annotation says it holds
        self.declared_items: dict[
            str, dict[str, str]
        ] = {}  # module.Class -> attribute -> the class of the items of its list (`list[Backend]`)
        # module.Class -> attribute -> the strings its body and methods set it to (() once one is not a string written out)
        self.attribute_texts: dict[str, dict[str, tuple[str, ...]]] = {}
        self.declared_values: dict[
            str, dict[str, str]
        ] = {}  # module.Class -> attribute -> the class of the values of its dict (`dict[str, Meter]`)

    def hook_here(self) -> Hook | None:
        """What the method the walk is in is, when it is a hook of its class whose return a
        framework logs (logged_returns.py): the knowledge of it, the keys the class's own
        logging method reads by name, and the returns the framework's call reaches."""
        hooked = self.hooked[-1] if self.hooked and len(self.scopes) == 2 else None
        return hooked.get(self.scopes[-1].name.rsplit(".", 1)[-1]) if hooked else None

    def string(self, name: str) -> tuple[str, ...] | None:
        """The strings `name` may be here: bound in this function, else at module level; for
        `self.attr` in a method, what the class stores in it (attribute_strings.py); for
        `obj.attr`, none here (`_object_part` notes it for the project-wide step)."""
        if name.startswith("self."):
            return self._attribute_string(name[5:])
        if "." in name:
            found = self.scopes[-1].strings.get(name)  # `f.name` of a loop over a record's fields (bags.py `loop_strings`)
            if found is None:
                self._object_part(*name.split(".", 1))
            return found
        found = self._visible(name, lambda scope: scope.strings)
        reads = self.scopes[-1].attribute_reads
        if found is None and reads and name in reads:
            self.note_part(name, self.read_part(name, reads))
        return found

    def _object_part(self, held: str, attribute: str) -> None:
        """An attribute of another object (`meter.joiner`): not known here, as its class may be
        another module's; noted, so that the project-wide step fills the placeholder named after
        it with the class's strings (FunctionFlow.attribute_parts). Not where a parameter of
        that name would fill it too."""
        self.note_part(attribute, self.object_attribute(held, attribute))

    def note_part(self, name: str, part: str | None) -> None:
        """That the placeholder `name` stands for the object attribute `part` (`object_attribute`),
        or, where `part` is None, for none: "" once two places say different ones."""
        scope = self.scopes[-1]
        if name in scope.params:
            return
        if part is None:
            if name in scope.attribute_parts:
                scope.attribute_parts[name] = ""
            return
        scope.attribute_parts[name] = part if scope.attribute_parts.get(name, part) == part else ""

    def read_from(self, scope: Scope, name: str, held: str, attribute: str) -> None:
        """`sep = tracker.sep`: `sep` stands for that attribute (`object_attribute`), until
        bound again (Scope.attribute_reads); noted as a part only where a key or a call reads it."""
        if scope.attribute_reads is None:
            scope.attribute_reads = {}
        scope.attribute_reads[name] = (held, attribute)

    def read_part(self, name: str, reads: dict[str, tuple[str, str]]) -> str | None:
        """`object_attribute` of the attribute `name` is bound to (`reads[name]`)."""
        return self.object_attribute(*reads[name])

    def object_attribute(self, held: str, attribute: str) -> str | None:
        """`module.Class.attr` for `held.attr` where the file knows the class of the object
        `held` holds; else `~held.attr`, which the project-wide step reads as of the classes
        that `held`'s name names (evidence/inherited.py `named_strings`)."""
        made = self.instance(held)
        if made is None:
            return f"{NAMED_OBJECT}{held}.{attribute}" if held != "self" else None
        return f"{made}.{attribute}" if "(" not in made else None

    def _attribute_string(self, attribute: str) -> tuple[str, ...] | None:
        if not self.class_nodes or len(self.scopes) != 2 or "self" not in self.scopes[-1].params:
            return None
        if attribute in CLASS_NAMES:  # the class the method is defined in: what a subclass inheriting it logs is not known here
            return (".".join(self.classes) if attribute == "__qualname__" else self.classes[-1],)
        owner = self.class_nodes[-1]
        table = self._class_strings.get(id(owner))
        if table is None:
            table = self._class_strings[id(owner)] = attribute_strings(owner)
        return table.get(attribute)

    def collection(self, name: str) -> tuple[str, ...] | None:
        return self._visible(name, lambda scope: scope.collections)

    def _visible(self, name: str, table: Callable[[Scope], dict[str, tuple[str, ...]]]) -> tuple[str, ...] | None:
        scope = self.scopes[-1]
        if name in table(scope):
            return table(scope)[name]
        if name in scope.carries or name in scope.params:  # a local of another kind hides the module's
            return None
        return table(self.scopes[0]).get(name)

    def instance(self, name: str) -> str | None:
        """The class of the object `name` holds, here or at module level (the scope's `known`,
        without a ChainMap's cost)."""
        return self.scopes[-1].instances.get(name) or self.scopes[0].instances.get(name)

    def span(self, node: ast.AST) -> Span:
        return self.text.span(self.path, node)

    def visit(self, node: ast.AST) -> None:
        visit = self.visits.get(type(node))
        if visit is None or visit(self, node):
            self.children(node)

    def children(self, node: ast.AST) -> None:
        """The node's children, less the names: a third of all nodes, with nothing below them.
        Each child is visited here rather than through `visit`: one call less for each of the
        hundreds of thousands of nodes a tree has."""
        visits = self.visits
        kind = type(node)
        for name in _FIELDS.get(kind) or child_fields(kind):  # the table read here: a call less per node
            value = getattr(node, name)
            if type(value) is list:
                if value and isinstance(value[0], ast.stmt):
                    self.block(value)
                    continue
                for item in value:
                    if item is not None and type(item) is not ast.Name:  # `{**rest}` has a None key
                        visit = visits.get(type(item))
                        if visit is None or visit(self, item):
                            self.children(item)
            elif value is not None and type(value) is not ast.Name:
                visit = visits.get(type(value))
                if visit is None or visit(self, value):
                    self.children(value)

    def block(self, body: list[ast.stmt]) -> None:
        """An indented body: where a value is assigned decides whether it replaces the old one."""
        self.blocks.append(id(body))
        if self.scopes[-1].body is None:
            self.scopes[-1].body = tuple(self.blocks)
        visits = self.visits
        for statement in body:
            visit = visits.get(type(statement))
            if visit is None or visit(self, statement):
                self.children(statement)
        self.blocks.pop()


# Fields that never hold a node worth visiting: names, operators, contexts, flags.
_SCALAR_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "attr",
        "id",
        "arg",
        "name",
        "names",
        "module",
        "level",
        "type_comment",
        "kind",
        "conversion",
        "is_async",
        "simple",
    }
)


_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that the walk descends into, worked out once per type."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SCALAR_FIELDS)
    return found


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes right under `node` that the walk descends into: not its contexts or
    operators. The searches below a node that ask often keep a stack of these rather than go
    through `ast.walk`'s three generators per node."""
    found: list[ast.AST] = []
    kind = type(node)
    for field in _FIELDS.get(kind) or child_fields(kind):
        value = getattr(node, field)
        if type(value) is list:
            found += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def descendants(body: list[ast.stmt]) -> list[ast.AST]:
    """Every node under these statements that the walk descends into, in no set order (loops
    are searched this way once each)."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(body)
    while pending:
        current = pending.pop()
        found.append(current)
        pending += child_nodes(current)
    return found
