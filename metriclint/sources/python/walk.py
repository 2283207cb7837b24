"""The one walk over a Python file's `ast`: docstrings, comments, logged keys, tooltip texts
and code facts, in source order.

Besides the texts, the walk follows values inside each function (flow.py), so a parameter
documented as "norm after clipping" and logged as `{"train/grad_norm": total}` is known to
describe `train/grad_norm`. The same walk records code facts (what known calls compute,
code_reader.py) and, for the project-wide step (evidence/code_claims.py), where each function's
parameters and results go and what its calls pass.

A test file's walk (`_TestCollector`) stops only at its texts and the keys it writes out.

Positions, literals and comments come from text.py. libcst read every file before; its
position metadata cost ten times CPython's parse (issue 8), and nothing read here needs its
concrete tree.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from dataclasses import replace

from metriclint.base import keys
from metriclint.base.identifiers import class_like
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.logged_returns import LoggedReturn
from metriclint.knowledge.sinks import Sink
from metriclint.model import Atom, Bag, CodeFact, Held, KeyUse, Related, Span
from metriclint.sources import Extraction, Unreadable, unread
from metriclint.sources.python import dataclass_fields, flags
from metriclint.sources.python.annotated import annotated, family_table
from metriclint.sources.python.attribute_strings import is_property, property_value
from metriclint.sources.python.binding_shapes import assigned_name, ends_window, read_names
from metriclint.sources.python.flatteners import flattened_param
from metriclint.sources.python.flow import Scope, flow_rules
from metriclint.sources.python.frameworks import EntryUses
from metriclint.sources.python.held import class_writes, held_objects, methods_of, stepped_callees
from metriclint.sources.python.kept_values import KeptValues
from metriclint.sources.python.logged_returns import Hooked, hooked_methods, overridden, returned_part
from metriclint.sources.python.nested_calls import enclose
from metriclint.sources.python.reducers import comprehension_reducers, loop_reducers
from metriclint.sources.python.state import Logging
from metriclint.sources.python.test_files import may_hold_keys
from metriclint.sources.python.text import TOO_DEEP, Literal, PythonText


def extract(
    path: str,
    source: bytes,
    log_functions: frozenset[str] = frozenset(),
    code: tuple[Known, ...] = (),
    test: bool = False,
) -> Extraction:
    """`log_functions` adds the project's own logging helpers to rules/sinks.yaml's, `code`
    what its own helpers compute to rules/code/'s; `test`: the file is a test (`_TestCollector`)."""
    if test and not may_hold_keys(source, log_functions):
        return Extraction()
    text = PythonText(source)
    try:
        module = text.parse()
    except Unreadable as error:
        if error.message.startswith(TOO_DEEP):
            raise  # libcst's native parser would overflow the C stack and kill the process
        from metriclint.sources.python import cst

        return cst.extract(path, text.text, error)
    rules = flow_rules()
    collector = (_TestCollector if test else _Collector)(
        path, rules, text, module, prometheus=b"prometheus_client" in source, code=code, message_functions=log_functions
    )
    try:
        collector.read()
    except RecursionError:
        raise Unreadable(TOO_DEEP) from None
    prose = collector.prose
    return Extraction(
        () if test else unread(prose.mentions + prose.comment_mentions()),  # a test's texts are dropped (extract/runner.py)
        tuple({(use.key, use.span): use for use in reversed(collector.keys)}.values())[
            ::-1
        ],  # a dict's key, and again where the dict is logged
        suppressions=tuple(prose.suppressions()),
        tables=() if test else collector.tables.read(module),
        functions=tuple(collector.functions),
        calls=tuple(collector.calls),
        reads=tuple(collector.reads),
        rewrites=tuple(collector.rewrites),
        flags=tuple(collector.flags),
        classes=tuple(collector.project_classes),
        callbacks=tuple(collector.passed),
        callback_lists=tuple(collector.callback_lists),
        method_calls=tuple(collector.method_calls),
        constants=collector.constants(),
        constant_help=tuple(collector.tables.constant_help),
        name_lists=collector.name_lists.exported(),
        tentative=tuple(collector.tentative),
        dispatched=tuple(dict.fromkeys(collector.dispatched)),
        instances=tuple(
            (f"{collector.module}.{name}", held) for name, held in collector.scopes[0].instances.items() if not held.endswith("()")
        ),
    )


class _Collector(EntryUses):
    """One walk over the tree, in source order, each statement before what it holds (as a
    reader meets it): docstrings, keys, values, code facts, tooltip texts; comments after."""

    def read(self) -> None:
        self._docstring(self.tree.body)
        self._attribute_docstrings(self.tree.body)
        for statement in self.tree.body:
            self.visit(statement)
        self._summarize(self.scopes[0])
        self.framework_keys()
        self.said()
        self._reduced_names()
        found = self.text.comments(self.literals)
        for comment in found:
            self.prose.comment(comment)
        own_lines = {c.line for c in found if not c.trailing}
        for owner, string in self.owners:
            self.prose.anchor(self._header_lines(owner, own_lines), string)

    def _reduced_names(self) -> None:
        """A trailing comment on `seq_lens = mask.sum(-1)  # summed over the sequence` describes
        that line's value. Where the file logs the key the name stands for (its last segment) as
        something computed from it (`seq_lens.float().mean()`), not the value itself, the comment
        does not speak for the key through the name: it would hold the sum against the mean."""
        logged: dict[str, list[KeyUse]] = {}
        for use in self.keys:
            logged.setdefault(keys.literal(keys.last_segment(use.key)), []).append(use)
        for line, names in self.prose.names_on_line.items():
            names[:] = [n for n in names if not any(all((n, line) != (t, s.line) for t, s in use.through) for use in logged.get(n, ()))]

    # -- docstrings -------------------------------------------------------------------------

    def _visit_ClassDef(self, node: ast.ClassDef) -> bool:
        self._docstring(node.body)
        self._attribute_docstrings(node.body)
        self.entry_class(node)
        self.classes.append(node.name)
        self.bases.append(
            frozenset(b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, (ast.Name, ast.Attribute)))
        )
        if len(self.classes) == 1:
            self.module_classes[node.name] = node
            if record := dataclass_fields.record_fields(node, self.code.import_path, not self.reads_records):
                self.record_classes[node.name] = record
            if (fields := self._typed_dict_fields(node)) is not None:
                self.typed_dicts[node.name] = fields
                bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in self.typed_dicts]
                if family_table(node) and all(b in self.typed_families for b in bases):
                    self.typed_families.add(node.name)
        self.base_paths.append(frozenset(path for b in node.bases if (path := self.code.chain(b, {})) is not None))
        held, stepped, hooked, kept = self.class_facts(node)
        self.held.append(held)
        self.kept.append(kept)
        self.class_held[node.name] = held
        self.stepped_calls.append(stepped)
        self.hooked.append(hooked)
        self.class_nodes.append(node)
        self.children(node)
        self.class_nodes.pop()
        self.stepped_calls.pop()
        self.held.pop()
        self.kept.pop()
        self.classes.pop()
        self.bases.pop()
        self.base_paths.pop()
        self.hooked.pop()
        self._owner(node)
        return False

    def class_facts(self, node: ast.ClassDef) -> tuple[dict[str, str], dict[str, tuple[str, ast.Call, str]], Hooked, KeptValues]:
        """What a class's methods share: the objects it keeps on `self`, the methods it calls
        only after a scheduler step, the methods whose return a framework logs, and what its
        methods put in its attributes (kept_values.py, filled as the walk goes)."""
        inherited = {k: v for b in node.bases if isinstance(b, ast.Name) for k, v in self.class_held.get(b.id, {}).items()}
        methods = methods_of(node)
        writes = class_writes(methods)
        held = held_objects(writes, self.code.import_path, self.code.knowledge.prefixes, inherited)
        schedulers = self.code.knowledge.schedulers
        stepped = stepped_callees(methods, schedulers.step, schedulers.names)
        return held, stepped, hooked_methods(node, self.base_paths[-1], self._logged_returns), KeptValues.of(writes, self.rules.binds)

    def _visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        args = node.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None))
        in_class = len(self.scopes) == 1 and bool(self.classes)
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        self.defined_here(node)
        name = ".".join((self.module, *self.classes, *(s.name.rsplit(".", 1)[-1] for s in self.scopes[1:]), node.name))
        if node.decorator_list:
            self.decorated(node, name)
        params = tuple(a.arg for a in every)
        outer = self.scopes[-1].objects
        self.scopes.append(Scope(name, params, in_class and not static, definition=node))
        self.scopes[-1].objects.update((k, v) for k, v in outer.items() if k not in params)  # the module's, a closure's
        if in_class and not static:
            self.scopes[-1].objects.update((f"self.{attribute}", made) for attribute, made in self.held[-1].items())
            if node.name in self.stepped_calls[-1]:
                receiver, step, caller = self.stepped_calls[-1][node.name]
                self.scopes[-1].stepped[receiver] = Related(self.span(step), f"{node.name}, which {caller} calls after {receiver}.step()")
        if in_class and self.code.knowledge.schedulers.stepped_before_hook(node.name, self.base_paths[-1]):
            self.scopes[-1].framework_stepped = Related(
                self.span(node), f"{node.name}, which the framework calls after its loop stepped the scheduler"
            )
        self.scopes[-1].known = ChainMap(self.scopes[-1].instances, self.scopes[0].instances)
        for arg in every:
            if arg.annotation is not None:
                annotated(self.scopes[-1], arg.arg, arg.annotation, self.code.instance, self.typed_dicts, self.typed_families)
        self.children(node)
        self.implemented_sink(node)
        self._reducers(node, self.scopes[-1])
        if self.scopes[-1].recursive:
            self._flattens(node, self.scopes[-1])
        scope = self.scopes.pop()
        if node.returns is not None and (not scope.makes or scope.makes.endswith("()")):
            # `-> BaseModel`, returning what `cfg.build()` makes: the declared class is what its
            # callers may rely on, where the call it returns may not be told; a class it makes
            # itself (`return MoEModel()`) says more and stays
            scope.makes = self.code.instance(node.returns) or scope.makes
        if len(self.scopes) == 1 and self.classes and is_property(node):
            self._property_type(node.name, scope.makes)
            self._attribute_text(node.name, property_value(node))
        if len(self.scopes) > 1:
            enclose(scope, self.scopes[-1], self.string)
            self.scopes[-1].defs[node.name] = name  # `run(step_fn=forward)` after `def forward(...)` in the same body
        self._summarize(scope)
        self._docstring(node.body, node.name, scope)
        self._owner(node)
        return False

    _visit_AsyncFunctionDef = _visit_FunctionDef

    def _property_type(self, name: str, made: str | None) -> None:
        """A property of the class that returns an instance of a class (`def accelerator(self) ->
        Accelerator`, or `return Accelerator()`) holds one, as an attribute so declared does
        (`_declared`): `trainer.accelerator.device_stats()` runs that class's method, or one of
        its subclasses' (evidence/callees.py)."""
        if made and "(" not in made and class_like(made.rsplit(".", 1)[-1]):
            self.declared_types.setdefault(".".join((self.module, *self.classes)), {}).setdefault(name, made)

    def _typed_dict_fields(self, node: ast.ClassDef) -> tuple[str, ...] | None:
        """The keys of a TypedDict the class is, its bases' of the module first; None for another
        class. Besides one that names `TypedDict` among its bases, a class that only declares
        fields, with no value, decorator or method, and extends other classes is taken for one
        (`class StepInfo(DataInfo, ForwardInfo): loss: float`, its bases imported): a class that
        declares fields it neither sets nor lets a decorator set is a TypedDict, a NamedTuple or
        a model whose base sets them, and a call of each holds what its keywords pass."""
        own = tuple(s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
        if "TypedDict" not in self.bases[-1] and not (
            own and node.bases and not node.decorator_list and not node.keywords and all(_declares(s) for s in node.body)
        ):
            return None
        inherited = (field for b in node.bases if isinstance(b, ast.Name) for field in self.typed_dicts.get(b.id, ()))
        return tuple(dict.fromkeys((*inherited, *own)))

    def _reducers(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        """What the function does to every value of a dict parameter (reducers.py), before what
        the walk found it hands on. Its statements are searched for a loop, and its expressions
        for a comprehension, only when the walk met a `for` or a gather call in it: most
        functions have neither, and searching each function's body was most of reducers.py's cost."""
        found = loop_reducers(node, scope.params, self.rules, self._per_key) if scope.looped else []
        if scope.gathering:
            found += comprehension_reducers(node, scope.params, self.rules, self._per_key)
        scope.reducers[:0] = found

    def _per_key(self, construct: str, node: ast.expr) -> frozenset[CodeFact]:
        """The facts of a helper's reduction of each key's values over the ranks, named by the helper."""
        function = self.scopes[-1].name.rsplit(".", 1)[-1]
        return frozenset(replace(a, origin=function) for a in self.code.derived(construct, node, ()) if isinstance(a, CodeFact))

    def _flattens(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        """A function that flattens the nested dict a parameter is returns that dict's entries,
        its nested dicts' under their joined keys (flatteners.py), not what its own loop over
        the parameter's items makes of them."""
        found = flattened_param(node, scope.params)
        if found is not None:
            param, joiner = found
            scope.gives = Bag(held=(Held("param", param).with_options(flattens=joiner),))

    def _owner(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        string = self._leading_string(node.body)
        if string is not None:
            self.owners.append((node, string))

    def _header_lines(self, node: ast.AST, own_comment_lines: set[int]) -> set[int]:
        """The `def`/`class` line, and the line its header's colon ends, anchor its docstring.

        The colon ends the last line of code before the body (blank and comment-only lines
        are skipped); `def f(): "..."` has no header line of its own.
        """
        lines = {node.lineno}  # type: ignore[attr-defined]
        first = node.body[0]  # type: ignore[attr-defined]
        if not self.text.lines[first.lineno - 1][: self.text.column(first.lineno, first.col_offset)].strip():
            colon = first.lineno - 1
            while colon > node.lineno and (colon in own_comment_lines or not self.text.lines[colon - 1].strip()):  # type: ignore[attr-defined]
                colon -= 1
            lines.add(colon)
        return lines

    def _docstring(self, body: list[ast.stmt], function: str = "", scope: Scope | None = None) -> None:
        string = self._leading_string(body)
        if string is not None:  # where each parameter is logged: asked only of a documented function
            flows = {param: scope.keys_of(param) for param in scope.params} if scope is not None else None
            written = self._written_in(body) if scope is not None else frozenset()
            self.prose.docstring(string, function, flows, written, scope.keys_of_returned() if scope is not None else ())

    def _written_in(self, body: list[ast.stmt]) -> frozenset[str]:
        """The keys a function's body writes (dict entries, subscripts, logging calls)."""
        first, last = body[0].lineno, body[-1].end_lineno or body[-1].lineno
        written: set[str] = set()
        for found in (self.prose.keys_on_line, self.prose.entries_on_line):
            if len(found) < last - first:  # the file's few lines with keys, rather than the body's every line
                written.update(key for line, keys in found.items() if first <= line <= last for key in keys)
            else:
                written.update(key for line in range(first, last + 1) for key in found.get(line, ()))
        return frozenset(written)

    def _attribute_docstrings(self, body: list[ast.stmt]) -> None:
        for before, after in zip(body, body[1:]):
            target = assigned_name(before)
            string = self._leading_string([after]) if target else None
            if target and string is not None:
                self.prose.attribute_docstring(target, string)

    def _leading_string(self, body: list[ast.stmt]) -> Literal | None:
        first = body[0] if body else None
        return self.text.literal(first.value) if isinstance(first, ast.Expr) else None

    # -- the rest ---------------------------------------------------------------------------

    def _summarize(self, scope: Scope) -> None:
        flow = scope.flow()
        if flow is not None:
            self.functions.append(flow)

    def _visit_Constant(self, node: ast.Constant) -> bool:
        if isinstance(node.value, (str, bytes)):
            self.literals.append(node)
        return False

    def _visit_JoinedStr(self, node: ast.JoinedStr) -> bool:
        self.literals.append(node)
        return False  # an f-string formats; what it holds is never logged from inside it

    def _visit_Import(self, node: ast.Import) -> bool:
        self.code.imported(node)
        return False

    def _visit_ImportFrom(self, node: ast.ImportFrom) -> bool:
        self.code.imported_from(node)
        return False

    def _visit_Return(self, node: ast.Return) -> bool:
        self.returned_message(node)
        scope = self.scopes[-1]
        returns = scope.returns
        value = node.value
        if value is not None and len(self.scopes) > 1:
            given = self.bag(value)
            if type(value) is ast.Name:
                given |= self.returned_object(value.id)
            elif isinstance(value, ast.Tuple):
                given |= self.elements(value)
            flag = self._returned_if(scope)
            if flag:
                scope.gives_when[flag] = scope.gives_when.get(flag, Bag()) | given
            else:
                scope.gives |= given
            self._makes(scope, value)
            self._hook_returned(scope, value, node)
        parts = list(enumerate(value.elts)) if isinstance(value, ast.Tuple) else [(None, value)]
        for element, part in parts:
            if part is not None:
                returns[element] = returns.get(element, frozenset()) | self.roots(part)
        return True

    def _returned_if(self, scope: Scope) -> str:
        """The parameter, off unless a call passes it, that an `if flag:` of this function
        around the return tests (`if raw: return samples`): what it returns, only such a call
        gets. "" for a return on the default path."""
        body, node = scope.body, scope.definition
        for blocks, flag in reversed(self.guards):
            if body is not None and node is not None and blocks[: len(body)] == body and flag in scope.params:
                return flag if flags.off_by_default(node, flag) else ""
        return ""

    def _logged_returns(self, base: str) -> tuple[LoggedReturn, ...]:
        return self.code.knowledge.logged_returns.get(base, ())

    def _hook_returned(self, scope: Scope, value: ast.expr, node: ast.Return) -> None:
        """A method whose return its framework logs (logged_returns.py): the dict it returns is
        logged here, less the keys the class's own logging method consumes."""
        found = self.hook_here()
        part = returned_part(value, found[0].element) if found is not None else None
        if found is None or part is None or found[2] is not None and id(node) not in found[2]:
            return
        hook, consumed, _ = found
        bag = self.bag(part)
        kept = Bag(tuple(e for e in bag.entries if e.key not in consumed), overridden(bag.held, scope.name.rsplit(".", 1)[0], hook.method))
        self.log_bag(kept, Sink(hook.says, hook.source, ()), node, Logging(sink=hook.says, at=self.span(node)), fresh=False)

    def _makes(self, scope: Scope, value: ast.expr) -> None:
        """What instance the function returns: a class's (`return Timers()`), what another call
        returns (`pkg.make()`), or a module's name (`return _TIMERS`, set by a `global` statement
        anywhere in the module: evidence/callees.py reads it); "" once two returns disagree."""
        if isinstance(value, ast.Constant) and value.value is None:
            return
        made = self.instance_of(value)
        if made is None and isinstance(value, ast.Name) and value.id not in scope.carries and value.id not in scope.params:
            made = f"{self.module}.{value.id}"
        scope.makes = (made or "") if scope.makes is None else scope.makes if scope.makes == made else ""

    def _visit_If(self, node: ast.If) -> bool:
        self.visit(node.test)
        self.tests.append(read_names(node.test))
        flag = flags.flag_test(node.test) if not node.orelse else ""
        if flag:
            self.guards.append(((*self.blocks, id(node.body)), flag))
        boundary = int(ends_window(node.test, self.code.knowledge.boundaries))
        scope, keyed = self.scopes[-1], self.branch_keys(node.test) if self.scopes[-1].keyvars else None
        scope.at_boundary += boundary
        if keyed:  # `if key in NAMES:` the loop's key is one of them in the branch, none of them in the other
            scope.keyvars[keyed[0]] = keyed[2]
        rebound = self._branch(node.body)
        scope.at_boundary -= boundary
        if flag:
            self.guards.pop()
        if keyed:
            scope.keyvars[keyed[0]] = keyed[3]
        if node.orelse:
            self._runs_instead(node.orelse, rebound)
        if keyed:
            scope.keyvars[keyed[0]] = keyed[1]
        self.tests.pop()
        return False

    def _branch(self, body: list[ast.stmt]) -> dict[str, tuple[Bag, Bag]]:
        """One branch of an `if`. One that ends by leaving the function (`log(stats); return`)
        hands what its calls put in the function's dicts to no code after it. Returns what the
        names it rebound held before it and at its end (`branch_ends`)."""
        scope = self.scopes[-1]
        leaves = type(body[-1]) is ast.Return or type(body[-1]) is ast.Raise
        before = dict(scope.bags) if leaves and scope.bags else None
        self.branch_starts(body)
        self.block(body)
        rebound = self.branch_ends()
        if before is not None:
            scope.bags = before
            return {}
        return rebound

    def _runs_instead(self, orelse: list[ast.stmt], rebound: dict[str, tuple[Bag, Bag]]) -> None:
        """The `else` of an `if`, which runs where the `if` branch does not: there a name that
        branch rebound holds what it held before the `if`; after both, what either left."""
        scope = self.scopes[-1]
        for name, (old, _) in rebound.items():
            scope.bags[name] = old
        self._branch(orelse)
        for name, (_, new) in rebound.items():
            joined = scope.bags[name] | new if name in scope.bags else new
            if joined:
                scope.bags[name] = joined


# Where a test file's walk stops: the definitions (their docstrings), the literals (where the
# comments are not) and the places a key is written (`KeyRecorder`).
_IN_TESTS = frozenset(
    {
        ast.ClassDef,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Constant,
        ast.JoinedStr,
        ast.Call,
        ast.Dict,
        ast.Subscript,
        ast.Compare,
        ast.Assign,
        ast.AnnAssign,
    }
)


class _TestCollector(_Collector, only=_IN_TESTS):
    """A test file's walk: its texts, and the keys it writes out where the project's code would
    log or read them (`log({"eval/win_rate": rate})`, `logs["eval/win_rate"] = rate`), which
    keep a registry entry alive (ML005). A test's code computes nothing the project logs (its
    arithmetic shows what it expects: evidence/products.py), so the walk follows no value, call
    or class; that was half of a test file's time (miles). It binds no names either, so a key
    with a part held in a variable (`f"{prefix}/loss"`) is left out rather than made a template."""

    _suppressing = False  # the file has a suppression comment, which its docstrings may anchor (prose.py)

    def read(self) -> None:
        """A test's texts are dropped: its docstrings, messages and comments are read only for
        its suppression comments, where it writes any."""
        self._suppressing = "metriclint" in self.text.text
        if self._suppressing:
            super().read()
            return
        for statement in self.tree.body:
            self.visit(statement)
        self._summarize(self.scopes[0])
        self.framework_keys()

    def _docstring(self, body: list[ast.stmt], function: str = "", scope: Scope | None = None) -> None:
        if self._suppressing:
            super()._docstring(body, function, scope)

    def _visit_Call(self, node: ast.Call) -> bool:
        self.call_keys(node)
        return True

    def _visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> bool:
        if node.value is None:  # `total: float`
            return True
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            self.module_binding(target, node.value)
            if isinstance(target, ast.Subscript):
                self.item_stored(target, node.value)
        return True

    _visit_AnnAssign = _visit_Assign

    def key_texts(self, node: ast.expr) -> tuple[str, ...]:
        return tuple(key for key in super().key_texts(node) if not keys.is_template(key))

    def value_logged(
        self, key: str, value: ast.expr, logging: Logging, atoms: frozenset[Atom] | None = None, site: Span | None = None
    ) -> None:
        """A test's values are none of the project's."""

    def entry_class(self, node: ast.ClassDef) -> None:
        """A test's subclass of a trainer is no trainer of the project's."""

    def class_facts(self, node: ast.ClassDef) -> tuple[dict[str, str], dict[str, tuple[str, ast.Call, str]], Hooked, KeptValues]:
        """Nor do its methods share values the project logs (three walks of each test class: miles)."""
        return {}, {}, {}, KeptValues({})

    def defined_here(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """Nor does a test's function list the project's callbacks or rewrite its logs."""

    def _summarize(self, scope: Scope) -> None:
        """A test's functions are no code the project's values come from."""


def _declares(statement: ast.stmt) -> bool:
    """A field declared without a value, a docstring, `pass` or `...`."""
    if isinstance(statement, ast.AnnAssign):
        return statement.value is None and isinstance(statement.target, ast.Name)
    return isinstance(statement, ast.Pass) or isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
