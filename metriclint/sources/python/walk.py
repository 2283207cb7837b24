"""The one walk over a Python file's `ast`: docstrings, comments, logged keys, tooltip texts
and code facts, in source order.

Besides the texts, the walk follows values inside each function (flow.py), so a parameter
documented as "norm after clipping" and logged as `{"train/grad_norm": total}` is known to
describe `train/grad_norm`. The same walk records code facts (what known calls compute,
code.py) and, for the project-wide step (evidence/code_claims.py), where each function's
parameters and results go and what its calls pass.

Positions, literals and comments come from text.py. libcst read every file before; its
position metadata cost ten times CPython's parse (issue 8), and nothing read here needs its
concrete tree.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable

from metriclint.base import keys
from metriclint.knowledge.code import knowledge
from metriclint.model import Atom, CallFlow, CodeFact, FunctionFlow, KeyUse, ResultOf, Span
from metriclint.sources import Extraction, Unreadable, unread
from metriclint.sources.python import strings
from metriclint.sources.python.code import CodeReader, arguments
from metriclint.sources.python.flow import FlowRules, Scope, flow_rules
from metriclint.sources.python.prose import Prose
from metriclint.sources.python.tables import Tables
from metriclint.sources.python.text import TOO_DEEP, Literal, PythonText
from metriclint.sources.python.values import is_measurement

PROMETHEUS_TYPES = frozenset({"Counter", "Gauge", "Histogram", "Summary"})


def extract(path: str, source: bytes, log_functions: frozenset[str] = frozenset()) -> Extraction:
    """`log_functions` adds the project's own logging helpers to rules/dataflow.yaml's."""
    text = PythonText(source)
    try:
        module = text.parse()
    except Unreadable as error:
        if error.message.startswith(TOO_DEEP):
            raise  # libcst's native parser would overflow the C stack and kill the process
        from metriclint.sources.python import cst

        return cst.extract(path, text.text, error)
    rules = flow_rules()
    if log_functions:
        rules = replace(rules, log_functions=rules.log_functions | log_functions)
    collector = _Collector(path, rules, text, module, prometheus=b"prometheus_client" in source)
    try:
        collector.read()
    except RecursionError:
        raise Unreadable(TOO_DEEP) from None
    prose = collector.prose
    return Extraction(
        unread(prose.mentions + prose.comment_mentions()),
        tuple(collector.keys),
        suppressions=tuple(prose.suppressions()),
        tables=collector.tables.read(module),
        functions=tuple(collector.functions),
        calls=tuple(collector.calls),
    )


class _Collector:
    """One walk over the tree, in source order, each statement before what it holds (as a
    reader meets it): docstrings, keys, values, code facts, tooltip texts; comments after."""

    def __init__(self, path: str, rules: FlowRules, text: PythonText, module: ast.Module, prometheus: bool = False) -> None:
        self.path, self.rules, self.text, self.tree, self.prometheus = path, rules, text, module, prometheus
        self.tables = Tables(path, text)
        self.code = CodeReader(path, module, text, knowledge())
        self.module = self.code.module
        self.prose = Prose(path)
        self.keys: list[KeyUse] = []
        self.scopes: list[Scope] = [Scope(f"{self.module}.<module>", body=())]
        self.classes: list[str] = []
        self.blocks: list[int] = []
        self.tests: list[set[str]] = []  # the names the tests of the `if` statements the walk is in read
        self.functions: list[FunctionFlow] = []
        self.calls: list[CallFlow] = []
        self.sites: dict[int, ResultOf] = {}  # call node id -> its site, read where the call is met
        self.literals: list[ast.AST] = []  # every string literal, for finding the comments
        self.owners: list[tuple[ast.AST, Literal]] = []  # definitions with a docstring

    def read(self) -> None:
        self._docstring(self.tree.body)
        self._attribute_docstrings(self.tree.body)
        for statement in self.tree.body:
            self._visit(statement)
        self._summarize(self.scopes[0])
        found = self.text.comments(self.literals)
        for comment in found:
            self.prose.comment(comment)
        own_lines = {c.line for c in found if not c.trailing}
        for owner, string in self.owners:
            self.prose.anchor(self._header_lines(owner, own_lines), string)

    # -- the walk ---------------------------------------------------------------------------

    def _visit(self, node: ast.AST) -> None:
        visit = _VISITS.get(type(node))
        if visit is None or visit(self, node):
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        """The node's children, less the names: a third of all nodes, with nothing below them."""
        for name in _fields(type(node)):
            value = getattr(node, name)
            if type(value) is list:
                if value and isinstance(value[0], ast.stmt):
                    self._block(value)
                    continue
                for item in value:
                    if item is not None and type(item) is not ast.Name:  # `{**rest}` has a None key
                        self._visit(item)
            elif value is not None and type(value) is not ast.Name:
                self._visit(value)

    def _block(self, body: list[ast.stmt]) -> None:
        """An indented body: where a value is assigned decides whether it replaces the old one."""
        self.blocks.append(id(body))
        if self.scopes[-1].body is None:
            self.scopes[-1].body = tuple(self.blocks)
        for statement in body:
            self._visit(statement)
        self.blocks.pop()

    # -- docstrings -------------------------------------------------------------------------

    def _visit_ClassDef(self, node: ast.ClassDef) -> bool:
        self._docstring(node.body)
        self._attribute_docstrings(node.body)
        self.classes.append(node.name)
        self._children(node)
        self.classes.pop()
        self._owner(node)
        return False

    def _visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        args = node.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None))
        in_class = len(self.scopes) == 1 and bool(self.classes)
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        name = ".".join((self.module, *self.classes, *(s.name.rsplit(".", 1)[-1] for s in self.scopes[1:]), node.name))
        self.scopes.append(Scope(name, tuple(a.arg for a in every), in_class and not static))
        self._children(node)
        scope = self.scopes.pop()
        self._summarize(scope)
        self._docstring(node.body, node.name, scope)
        self._owner(node)
        return False

    _visit_AsyncFunctionDef = _visit_FunctionDef

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
            self.prose.docstring(string, function, flows)

    def _attribute_docstrings(self, body: list[ast.stmt]) -> None:
        for before, after in zip(body, body[1:]):
            target = _assigned_name(before)
            string = self._leading_string([after]) if target else None
            if target and string is not None:
                self.prose.attribute_docstring(target, string)

    def _leading_string(self, body: list[ast.stmt]) -> Literal | None:
        first = body[0] if body else None
        return self.text.literal(first.value) if isinstance(first, ast.Expr) else None

    # -- values and keys --------------------------------------------------------------------

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
        returns = self.scopes[-1].returns
        value = node.value
        parts = list(enumerate(value.elts)) if isinstance(value, ast.Tuple) else [(None, value)]
        for element, part in parts:
            if part is not None:
                returns[element] = returns.get(element, frozenset()) | self._roots(part)
        return True

    def _visit_For(self, node: ast.For | ast.AsyncFor) -> bool:
        self._unbind(node.target)
        self._loop_strings(node.target, node.iter)
        self._loop(node)
        self._last(node)
        return False

    _visit_AsyncFor = _visit_For

    def _visit_While(self, node: ast.While) -> bool:
        self._loop(node)
        return False

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        scope = self.scopes[-1]
        scope.loops.append(id(node.body))
        self._children(node)
        scope.loops.pop()

    def _last(self, node: ast.For | ast.AsyncFor) -> None:
        """A name assigned in every iteration from the loop's item holds, after the loop, the
        last iteration's value only: `for mb in batches: loss = step(mb)`."""
        scope = self.scopes[-1]
        varying = _read_names(node.target)
        accumulated = {s.target.id for s in node.body if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)}
        for statement in node.body:
            target = _assigned_name(statement)
            value = getattr(statement, "value", None)
            if target is None or value is None or not varying & _read_names(value):
                continue
            varying.add(target)
            held = scope.carries.get(target)
            if target not in accumulated and held is not None and id(node.body) in held[1]:
                scope.carries[target] = (held[0] | self.code.derived("last", statement, held[0]), held[1])

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> bool:
        """Its loop variables hold the strings their iterables yield, inside it only; a dict
        comprehension's key is logged like a dict literal's."""
        scope = self.scopes[-1]
        saved = (dict(scope.strings), dict(scope.carries))
        for generator in node.generators:
            self._unbind(generator.target)
            self._loop_strings(generator.target, generator.iter)
        if isinstance(node, ast.DictComp):
            self._sink(node.key, node.value, require_key_shape=True)
        self._children(node)
        scope.strings, scope.carries = saved
        return False

    _visit_ListComp = _visit_SetComp = _visit_GeneratorExp = _visit_DictComp = _comprehension

    def _loop_strings(self, target: ast.expr, iterated: ast.expr) -> None:
        """`for k in ["a", "b"]`, `for k in NAMES`, `for k, v in table.items()`: k is one of them."""
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "items":
            if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
                return
            target = target.elts[0]
        found = strings.loop_values(iterated, self._collection) if isinstance(target, ast.Name) else None
        if isinstance(target, ast.Name) and found:
            self.scopes[-1].strings[target.id] = found

    def _visit_withitem(self, node: ast.withitem) -> bool:
        if node.optional_vars is not None:
            self._unbind(node.optional_vars)
        return True

    def _unbind(self, target: ast.expr) -> None:
        """A loop or `with` target is a new value, whatever the name held before."""
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for name in names:
            if isinstance(name, ast.Name):
                self.scopes[-1].bind(name.id, frozenset(), tuple(self.blocks))
                self.scopes[-1].strings.pop(name.id, None)

    def _visit_AugAssign(self, node: ast.AugAssign) -> bool:
        if isinstance(node.target, ast.Name):
            scope, name = self.scopes[-1], node.target.id
            left = scope.roots(name)
            atoms = self.code.arithmetic(node, node.op, left, self._roots(node.value), node.value, self._counted(node.value))
            held = scope.carries.get(name)
            if isinstance(node.op, ast.Add) and scope.loops and held is not None and scope.loops[-1] not in held[1]:
                atoms |= self.code.derived("accumulation", node, atoms)  # a total kept across the iterations
                if isinstance(node.value, ast.Constant) and node.value.value == 1:
                    scope.counters.add(name)
            scope.bind(name, atoms, tuple(self.blocks))
        return True

    def _counted(self, divisor: ast.expr) -> bool:
        """Whether a divisor is a number of items: `len(...)`, or a name counted up in a loop."""
        if isinstance(divisor, ast.Name):
            return divisor.id in self.scopes[-1].counters
        return isinstance(divisor, ast.Call) and isinstance(divisor.func, ast.Name) and divisor.func.id == "len"

    def _visit_Assign(self, node: ast.Assign) -> bool:
        for target in node.targets:
            self._assign(target, node.value)
        return True

    def _visit_AnnAssign(self, node: ast.AnnAssign) -> bool:
        if node.value is not None:
            self._assign(node.target, node.value)
        return True

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        scope, path = self.scopes[-1], tuple(self.blocks)
        if isinstance(target, ast.Name) and isinstance(value, ast.Dict) and len(self.scopes) == 1 and not self.classes:
            self.tables.dict_table(target.id, value)
        if isinstance(target, ast.Name):
            if not (len(self.scopes) == 1 and self.classes):  # a class attribute is no module name
                scope.bind_strings(target.id, strings.values(value, self._string), path)
                self._bind_collection(scope, target.id, strings.literal_collection(value))
            came = self._names(value) if scope.replaces(target.id, path) else ()  # in a branch: not the only way
            scope.named[target.id] = ((target.id, self._span(target)), *came)
            scope.bind(target.id, self._selected(target.id, self._roots(value)), path)
            chain = self.code.chain(value, scope.objects)
            if chain in self.code.knowledge.prefixes:
                scope.objects[target.id] = chain
            else:
                scope.objects.pop(target.id, None)
            self.prose.names_on_line.setdefault(target.lineno, []).append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            for t, v in zip(target.elts, value.elts):
                self._assign(t, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            count = len(target.elts)
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    scope.bind(element.id, self._roots(value, (i, count)), path)
        elif isinstance(target, ast.Subscript) and not isinstance(target.slice, (ast.Slice, ast.Tuple)):
            self._sink(target.slice, value, require_key_shape=True)

    def _bind_collection(self, scope: Scope, name: str, found: tuple[str, ...] | None) -> None:
        if found:
            scope.collections[name] = found
        else:
            scope.collections.pop(name, None)

    def _string(self, name: str) -> tuple[str, ...] | None:
        """The strings `name` may be here: bound in this function, else at module level."""
        return self._visible(name, lambda scope: scope.strings)

    def _collection(self, name: str) -> tuple[str, ...] | None:
        return self._visible(name, lambda scope: scope.collections)

    def _visible(self, name: str, table: Callable[[Scope], dict[str, tuple[str, ...]]]) -> tuple[str, ...] | None:
        scope = self.scopes[-1]
        if name in table(scope):
            return table(scope)[name]
        if name in scope.carries or name in scope.params:  # a local of another kind hides the module's
            return None
        return table(self.scopes[0]).get(name)

    def _selected(self, name: str, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """Under a test that reads the name itself (`if best is None or x > best: best = x`)
        the name keeps the item a comparison selects: what reduced `x` says nothing about it."""
        if not any(name in test for test in self.tests):
            return atoms
        return frozenset(a for a in atoms if not (isinstance(a, CodeFact) and a.facet == "reduction"))

    def _visit_If(self, node: ast.If) -> bool:
        self._visit(node.test)
        self.tests.append(_read_names(node.test))
        self._block(node.body)
        if node.orelse:
            self._block(node.orelse)
        self.tests.pop()
        return False

    def _visit_Dict(self, node: ast.Dict) -> bool:
        if not self.tables.holds(node):
            for key, value in zip(node.keys, node.values):
                if key is not None:
                    self._sink(key, value, require_key_shape=True)
        return True

    def _visit_Call(self, node: ast.Call) -> bool:
        self._call_flow(node)
        self._log_call(node)
        return True

    def _visit_Expr(self, node: ast.Expr) -> bool:
        if isinstance(node.value, ast.Call):  # a call made for what it does, not for its result
            self._in_place(node.value)
        return True

    def _in_place(self, node: ast.Call) -> None:
        """A call that changes what a name holds: a collective writing into its tensor, a
        scheduler stepping (the learning rate read after it is the next step's)."""
        scope = self.scopes[-1]
        written = self.code.writes(node, scope.objects)
        if written is not None:
            name, facts = written
            changed = {f.facet for f in facts}
            old = frozenset(a for a in scope.roots(name) if not (isinstance(a, CodeFact) and a.facet in changed))
            scope.bind(name, old | facts, tuple(self.blocks))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == self.code.knowledge.schedulers.step:
            scope.stepped.add(self.text.segment(func.value))

    def _call_flow(self, node: ast.Call) -> None:
        """A call of what may be a project function, with what its arguments carry."""
        site = self._site(node)
        texts = self._argument_strings(node) if site.callee else ()
        if site.callee and (site.args or texts):
            self.calls.append(CallFlow(site.callee, site.caller, self._span(node), site.args, site.bound, texts))

    def _argument_strings(self, node: ast.Call) -> tuple[tuple[int | str, tuple[str, ...]], ...]:
        """The strings each argument is, where known whole: they fill the callee's key templates."""
        found: list[tuple[int | str, tuple[str, ...]]] = []
        positional = True
        for position, arg in enumerate(arguments(node)):
            positional = positional and not arg.star
            if arg.star or not (arg.keyword or positional):
                continue
            texts = strings.values(arg.value, self._string)
            if texts and not any(keys.is_template(t) for t in texts):
                found.append((arg.keyword or position, texts))
        return tuple(found)

    def _site(self, node: ast.Call) -> ResultOf:
        """The call as evidence/code_claims.py resolves it: callee ("" if unknown) and what each argument carries.

        Read once, where the walk first meets the call: in `x = f(x)` that is before `x` is
        rebound, as Python evaluates it."""
        site = self.sites.get(id(node))
        if site is None:
            site = self.sites[id(node)] = self._read_site(node)
        return site

    def _read_site(self, node: ast.Call) -> ResultOf:
        scope = self.scopes[-1]
        callee = self.code.callee(node.func, self.classes)
        if callee is None:
            return ResultOf("", None, scope.name)  # nothing to follow: what it is passed does not matter
        args: list[tuple[int | str, frozenset[Atom]]] = []
        positional = True
        for position, arg in enumerate(arguments(node)):
            positional = positional and not arg.star
            atoms = scope.kept(self._roots(arg.value)) if arg.keyword or positional else frozenset()
            if atoms:
                args.append((arg.keyword or position, atoms))
        func = node.func
        bound = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        return ResultOf(callee, None, scope.name, tuple(args), bound)

    def _log_call(self, node: ast.Call) -> None:
        """`log("k", v)`, `log({"k": v})` and `log(k=v)`: every argument names a metric."""
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if self.prometheus and name in PROMETHEUS_TYPES:
            help_key = self.tables.help_string(node)
            if help_key is not None:
                self.keys.append(help_key)
        if name not in self.rules.log_functions:
            return
        given = arguments(node)
        positional = [arg.value for arg in given if arg.keyword is None and not arg.star]
        if len(positional) >= 2 and self._keys(positional[0]):
            self._sink(positional[0], positional[1], require_key_shape=False)
        for value in positional:
            if isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values):
                    if key is not None:
                        self._sink(key, item, require_key_shape=False, only_unshaped=True)
        for arg in given:
            if arg.keyword is not None and arg.where is not None and arg.keyword not in self.rules.log_options:
                line, column = self.text.start(arg.where)
                span = Span(self.path, line, column + 1, line, column + 1 + len(arg.keyword))
                self._record_key(arg.keyword, span, arg.value, from_keyword=True)

    def _sink(self, key_node: ast.expr, value: ast.expr, require_key_shape: bool, only_unshaped: bool = False) -> None:
        for key in self._keys(key_node):
            if keys.too_generic(key):
                continue
            shaped = keys.looks_like_key(key)
            if (require_key_shape and not shaped) or (only_unshaped and shaped):
                continue
            self._record_key(key, self._span(key_node), value, from_keyword=False)

    def _keys(self, node: ast.expr) -> tuple[str, ...]:
        """The keys a key expression may be (strings.py); an unknown part is a `{name}` placeholder."""
        return strings.values(node, self._string) or ()

    def _names(self, value: ast.expr) -> tuple[tuple[str, Span], ...]:
        """The names a value goes by: the variable or attribute it is read from, and the ones
        that variable was assigned from, through value-preserving steps only (float(x), x.item())."""
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Name) and func.id in self.rules.preserving_functions and len(value.args) == 1 and not value.keywords:
                return self._names(value.args[0])
            if isinstance(func, ast.Attribute) and func.attr in self.rules.preserving_methods and not value.args:
                return self._names(func.value)
            return ()
        if isinstance(value, ast.Name):
            return self.scopes[-1].named.get(value.id, ((value.id, self._span(value)),))
        if isinstance(value, ast.Attribute):
            end = self.text.span(self.path, value)  # the attribute's name ends the expression
            return ((value.attr, Span(self.path, end.end_line, end.end_column - len(value.attr), end.end_line, end.end_column)),)
        return ()

    def _record_key(self, key: str, span: Span, value: ast.expr, from_keyword: bool) -> None:
        self.keys.append(KeyUse(key, span, from_keyword, is_measurement(value), self._names(value)))
        self.prose.keys_on_line.setdefault(span.line, []).append(key)
        self.scopes[-1].sinks.append((key, self._roots(value)))

    def _roots(self, value: ast.expr, element: tuple[int, int] | None = None) -> frozenset[Atom]:
        """What `value` is: the names it holds unchanged, the code facts known about it, the
        project calls it comes from; `element` = (index, tuple size) takes one element of it.
        Empty when it computes something new."""
        scope = self.scopes[-1]
        if isinstance(value, ast.Name):
            return self.code.element(scope.roots(value.id), element)
        if isinstance(value, ast.IfExp):
            return self._roots(value.body, element) | self._roots(value.orelse, element)
        if isinstance(value, (ast.Tuple, ast.List)) and element is not None and element[0] < len(value.elts):
            part = value.elts[element[0]]
            return self._roots(part.value if isinstance(part, ast.Starred) else part)
        if isinstance(value, ast.Subscript) and element is None and _reads_param_group_lr(value):
            return self._learning_rate(value)
        if isinstance(value, ast.Subscript) and element is None:
            index = self.code.constant_index(value)
            return self._roots(value.value, (index, -1)) if index is not None else frozenset()
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Name) and func.id in self.rules.preserving_functions and len(value.args) + len(value.keywords) == 1:
                only = arguments(value)[0]
                return self._roots(only.value, element)
            if isinstance(func, ast.Attribute) and func.attr in self.rules.preserving_methods:
                return self._roots(func.value, element)
            return self.code.call(value, element, scope.objects, self._site(value), self._roots) | self._learning_rate(value)
        if isinstance(value, ast.Attribute) and element is None:
            return self.code.expression(value, scope.objects)
        if isinstance(value, ast.BinOp) and element is None:
            left, right = self._roots(value.left), self._roots(value.right)
            return self.code.arithmetic(value, value.op, left, right, value.right, self._counted(value.right))
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and element is None:
            return self.code.negation(value, self._roots(value.operand))
        return frozenset()

    def _learning_rate(self, value: ast.Call | ast.Subscript) -> frozenset[Atom]:
        """A learning rate read after the scheduler stepped in this function: the next step's.
        `sched.get_last_lr()` after `sched.step()`; `opt.param_groups[i]["lr"]` after the step
        of a receiver named as a scheduler."""
        stepped, rules = self.scopes[-1].stepped, self.code.knowledge.schedulers
        if isinstance(value, ast.Call):
            func = value.func
            after = isinstance(func, ast.Attribute) and func.attr in rules.reads and self.text.segment(func.value) in stepped
        else:
            after = any(word in receiver.lower() for receiver in stepped for word in rules.names)
        return self.code.derived("after-scheduler-step", value, ()) if after else frozenset()

    def _span(self, node: ast.AST) -> Span:
        return self.text.span(self.path, node)


# Fields that never hold a node worth visiting: names, operators, contexts, flags.
_SCALAR_FIELDS = frozenset({"ctx", "op", "ops", "attr", "id", "arg", "name", "names", "module", "level", "type_comment", "kind", "conversion", "is_async", "simple"})


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that the walk descends into, worked out once per type."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SCALAR_FIELDS)
    return found

# `_visit_X` handles node type X; it returns whether the walk goes on into the node's children.
_VISITS = {getattr(ast, name.removeprefix("_visit_")): method for name, method in vars(_Collector).items() if name.startswith("_visit_")}


def _assigned_name(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    return None


def _read_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _reads_param_group_lr(node: ast.Subscript) -> bool:
    """`optimizer.param_groups[i]["lr"]`."""
    inner = node.value
    return (
        isinstance(node.slice, ast.Constant) and node.slice.value == "lr" and isinstance(inner, ast.Subscript)
        and isinstance(inner.value, ast.Attribute) and inner.value.attr == "param_groups"
    )

