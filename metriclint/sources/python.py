"""Python: docstrings, comments and logged keys, with libcst (it keeps comments and positions).

Tooltip texts too: `prometheus_client` help strings (always read, the name says which metric)
and module-level dicts mapping keys to texts (tables, selected by configuration or taken by
auto-detection later).

Besides the texts, this source follows values inside each function, so a parameter documented
as "norm after clipping" and logged as `{"train/grad_norm": total}` is known to describe
`train/grad_norm`. Only value-preserving steps (rules/dataflow.yaml) carry the link. The same
walk records code facts (what known calls compute, python_code.py) and, for the project-wide
step (codefacts.py), where each function's parameters and results go and what its calls pass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from functools import lru_cache

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from metriclint import docstrings, keys, suppress
from metriclint.knowledge import knowledge
from metriclint.model import Atom, CallFlow, FunctionFlow, KeyUse, Mention, ResultOf, Span, Suppression, TooltipEntry, TooltipTable
from metriclint.rules_data import word_lists
from metriclint.sources import Extraction, Unreadable, source_lines
from metriclint.sources.python_code import CodeReader

PROMETHEUS_TYPES = frozenset({"Counter", "Gauge", "Histogram", "Summary"})


@dataclass(frozen=True, slots=True)
class FlowRules:
    preserving_functions: frozenset[str]
    preserving_methods: frozenset[str]
    log_functions: frozenset[str]
    log_options: frozenset[str]


@lru_cache(maxsize=1)
def flow_rules() -> FlowRules:
    lists = word_lists("dataflow.yaml")
    return FlowRules(
        frozenset(lists.get("value_preserving.functions", ())),
        frozenset(lists.get("value_preserving.methods", ())),
        frozenset(lists.get("log_functions", ())),
        frozenset(lists.get("log_options", ())),
    )


def extract(path: str, source: bytes, log_functions: frozenset[str] = frozenset()) -> Extraction:
    """`log_functions` adds the project's own logging helpers to rules/dataflow.yaml's."""
    cpython = _cpython_verdict(source)
    if cpython is not None and cpython.message.startswith(TOO_DEEP):
        raise cpython  # libcst's native parser would overflow the C stack and kill the process
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise cpython or Unreadable(f"cannot parse Python: {error.message}", error.raw_line) from None
    except (UnicodeDecodeError, LookupError, SyntaxError, ValueError) as error:
        raise Unreadable(f"cannot decode Python source: {error}") from None
    except RecursionError:
        raise Unreadable(TOO_DEEP) from None
    rules = flow_rules()
    if log_functions:
        rules = replace(rules, log_functions=rules.log_functions | log_functions)
    collector = _Collector(path, rules, module, prometheus=b"prometheus_client" in source)
    try:
        MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    except RecursionError:
        raise Unreadable(TOO_DEEP) from None
    return Extraction(
        tuple(collector.mentions + collector.comment_mentions()),
        tuple(collector.keys),
        suppressions=tuple(collector.suppressions()),
        tables=collector.tables(),
        functions=tuple(collector.functions),
        calls=tuple(collector.calls),
    )


TOO_DEEP = "nested too deeply for the Python parser"
# CPython's own nesting limits: far below the depth at which libcst's parser crashes.
_CPYTHON_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too many statically nested blocks")


def _cpython_verdict(source: bytes) -> Unreadable | None:
    """What CPython's parser says of the source: None if it parses, else why not.

    CPython bounds nesting (and says so), while libcst's native parser recurses until the
    process dies, so a file CPython finds too deep is never handed to libcst. Other errors
    are kept for later: CPython's message and position point at the real mistake more often,
    but libcst may still accept syntax newer than the running interpreter's.
    """
    try:
        compile(source, "<source>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        if error.msg in _CPYTHON_TOO_DEEP:
            return Unreadable(f"{TOO_DEEP} ({error.msg})", error.lineno or 1, error.offset or 1)
        return Unreadable(f"cannot parse Python: {error.msg}", error.lineno or 1, error.offset or 1)
    except (RecursionError, MemoryError):
        return Unreadable(TOO_DEEP)
    except ValueError:  # NUL bytes: libcst gives the message
        return None
    return None


@dataclass
class _Scope:
    """What one function body does with its values, gathered while visiting it.

    A value is a set of atoms (model.Atom): the parameters it holds unchanged, the code facts
    known about it, the project calls it comes from. An assignment replaces what a name held
    when it is in the same block as the last one or encloses it; in another block (one branch
    of an `if`, a loop body) it may not run, so the name holds either.
    """

    name: str = ""
    params: tuple[str, ...] = ()
    bound: bool = False
    body: tuple[int, ...] | None = None  # block path of the function body
    carries: dict[str, tuple[frozenset[Atom], tuple[int, ...]]] = field(default_factory=dict)
    objects: dict[str, str] = field(default_factory=dict)  # local -> knowledge-base chain it holds
    sinks: list[tuple[str, frozenset[Atom]]] = field(default_factory=list)  # (key, value logged)
    returns: dict[int | None, frozenset[Atom]] = field(default_factory=dict)

    def roots(self, name: str) -> frozenset[Atom]:
        return self.carries[name][0] if name in self.carries else frozenset({name})

    def bind(self, name: str, atoms: frozenset[Atom], path: tuple[int, ...]) -> None:
        old_atoms, old_path = self.carries.get(name, (frozenset({name}) if name in self.params else frozenset(), self.body or ()))
        self.carries[name] = (atoms if old_path[: len(path)] == path else atoms | old_atoms, path)

    def keys_of(self, param: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(key for key, roots in self.sinks if param in roots))

    def kept(self, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """What the project-wide step can follow: parameters, facts and calls, not other names."""
        return frozenset(a for a in atoms if not isinstance(a, str) or a in self.params)

    def flow(self) -> FunctionFlow | None:
        """The function's summary for the project-wide step; None when nothing leaves it."""
        kept = self.kept
        sinks = tuple((key, kept(atoms)) for key, atoms in self.sinks if kept(atoms))
        returns = tuple((element, kept(atoms)) for element, atoms in self.returns.items() if kept(atoms))
        return FunctionFlow(self.name, self.params, self.bound, sinks, returns) if self.params or sinks or returns else None


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, path: str, rules: FlowRules, module: cst.Module, prometheus: bool = False) -> None:
        super().__init__()
        self.path, self.rules, self.prometheus = path, rules, prometheus
        self.dict_tables: list[TooltipTable] = []
        self.table_dicts: set[int] = set()  # dicts read as tooltip tables: their keys are not logged
        self.help_entries: list[TooltipEntry] = []
        self.code = CodeReader(path, module, knowledge(), self._span)
        self.module = self.code.module
        self.mentions: list[Mention] = []
        self.keys: list[KeyUse] = []
        self.scopes: list[_Scope] = [_Scope(f"{self.module}.<module>", body=())]
        self.classes: list[str] = []
        self.blocks: list[int] = []
        self.functions: list[FunctionFlow] = []
        self.calls: list[CallFlow] = []
        self.keys_on_line: dict[int, list[str]] = {}
        self.names_on_line: dict[int, list[str]] = {}
        self.comments: list[tuple[int, int, str, bool]] = []  # line, column, text, trailing
        self.directives: list[tuple[Span, suppress.Directive]] = []
        # A multi-line string's findings may be silenced on the line where it closes, or on
        # its def/class line: anchor line -> the lines of the strings it speaks for.
        self.anchors: dict[int, set[int]] = {}

    # -- docstrings -------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._docstring(node.body, subjects=())
        self._attribute_docstrings(node.body)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._summarize(self.scopes[0])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._docstring(node.body.body, subjects=())
        self._attribute_docstrings(node.body.body)
        self.classes.append(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        every = (*params.posonly_params, *params.params, *params.kwonly_params)
        extra = [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        in_class = len(self.scopes) == 1 and bool(self.classes)
        static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)
        name = ".".join((self.module, *self.classes, *(s.name.rsplit(".", 1)[-1] for s in self.scopes[1:]), node.name.value))
        self.scopes.append(_Scope(name, tuple(p.name.value for p in (*every, *extra)), in_class and not static))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        scope = self.scopes.pop()
        self._summarize(scope)
        self._docstring(original_node.body.body, subjects=(), function=original_node.name.value, scope=scope)
        self._anchor_owner(original_node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()
        self._anchor_owner(original_node)

    def _anchor_owner(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        """The `def`/`class` line, and the line its header's colon ends, anchor its docstring."""
        string = _leading_string(node.body.body)
        if string is not None:
            lines = self._lines_of(string)
            anchors = {self._line(node.name)}
            if isinstance(node.body, cst.IndentedBlock):  # `def f(): "..."` has no header line of its own
                anchors.add(self._line(node.body.header))
            for anchor in anchors:
                self.anchors.setdefault(anchor, set()).update(lines)

    def _docstring(
        self,
        body: object,
        subjects: tuple[str, ...],
        function: str = "",
        scope: _Scope | None = None,
    ) -> None:
        string = _leading_string(body)
        if string is None:
            return
        for block, mention in self._blocks(string):
            if block.kind == "param" and scope is not None and block.name in scope.params:
                self.mentions.append(_with(mention, (block.name,), scope.keys_of(block.name)))
            elif block.kind in ("param", "attribute"):
                self.mentions.append(_with(mention, (block.name,)))
            elif block.kind == "returns" and function:
                self.mentions.append(_with(mention, (block.name or function,)))
            else:
                self.mentions.append(_with(mention, subjects))

    def _attribute_docstrings(self, body: object) -> None:
        """A string right after `name = ...` documents `name` (the Sphinx attribute docstring)."""
        statements = list(body) if isinstance(body, (list, tuple)) else []
        for before, after in zip(statements, statements[1:]):
            target = _assigned_name(before)
            string = _leading_string([after]) if target else None
            if string is not None:
                for _, mention in self._blocks(string):
                    self.mentions.append(_with(mention, (target,)))  # type: ignore[arg-type]

    def _blocks(self, string: cst.SimpleString) -> list[tuple[docstrings.Block, Mention]]:
        raw = string.value
        prefix_length = len(raw) - len(raw.lstrip("rRuUbBfF"))
        if "b" in raw[:prefix_length].lower():
            return []
        quote = raw[prefix_length : prefix_length + 3] if raw[prefix_length : prefix_length + 3] in ('"""', "'''") else raw[prefix_length]
        content = raw[prefix_length + len(quote) : len(raw) - len(quote)]
        where = self.get_metadata(PositionProvider, string)
        start = where.start
        self.anchors.setdefault(where.end.line, set()).update(range(start.line, where.end.line + 1))
        first_column = start.column + prefix_length + len(quote) + 1
        lines = source_lines(content)
        result = []
        for block in docstrings.parse(lines):
            if not block.pieces:
                continue  # a NumPy entry that gives only a type says nothing
            text = "\n".join(lines[i][s:e] for i, s, e in block.pieces)
            origins = tuple((start.line + i, (first_column if i == 0 else 1) + s) for i, s, _ in block.pieces)
            result.append((block, Mention("docstring", self.path, text, origins)))
        return result

    # -- values and keys --------------------------------------------------------------------

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_block(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_block(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self.blocks.pop()

    def _enter_block(self, node: cst.CSTNode) -> None:
        self.blocks.append(id(node))
        if self.scopes[-1].body is None:
            self.scopes[-1].body = tuple(self.blocks)

    def _summarize(self, scope: _Scope) -> None:
        flow = scope.flow()
        if flow is not None:
            self.functions.append(flow)

    def visit_Import(self, node: cst.Import) -> None:
        self.code.imported(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.code.imported_from(node)

    def visit_Return(self, node: cst.Return) -> None:
        returns = self.scopes[-1].returns
        value = node.value
        parts = list(enumerate(e.value for e in value.elements)) if isinstance(value, cst.Tuple) else [(None, value)]
        for element, part in parts:
            if part is not None:
                returns[element] = returns.get(element, frozenset()) | self._roots(part)

    def visit_For(self, node: cst.For) -> None:
        self._unbind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._unbind(node.asname.name)

    def _unbind(self, target: cst.BaseExpression) -> None:
        """A loop or `with` target is a new value, whatever the name held before."""
        names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        for name in names:
            if isinstance(name, cst.Name):
                self.scopes[-1].bind(name.value, frozenset(), tuple(self.blocks))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            scope = self.scopes[-1]
            left = scope.roots(node.target.value)
            atoms = self.code.arithmetic(node, node.operator, left, self._roots(node.value), node.value)
            scope.bind(node.target.value, atoms, tuple(self.blocks))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assign(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(node.target, node.value)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        scope, path = self.scopes[-1], tuple(self.blocks)
        if isinstance(target, cst.Name) and isinstance(value, cst.Dict) and len(self.scopes) == 1 and not self.classes:
            self._dict_table(target.value, value)
        if isinstance(target, cst.Name):
            scope.bind(target.value, self._roots(value), path)
            chain = self.code.chain(value, scope.objects)
            if chain in self.code.knowledge.prefixes:
                scope.objects[target.value] = chain  # type: ignore[index]
            else:
                scope.objects.pop(target.value, None)
            self.names_on_line.setdefault(self._line(target), []).append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            for t, v in zip(target.elements, value.elements):
                self._assign(t.value, v.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            count = len(target.elements)
            for i, element in enumerate(target.elements):
                if isinstance(element.value, cst.Name):
                    scope.bind(element.value.value, self._roots(value, (i, count)), path)
        elif isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index):
                self._sink(index.value, value, require_key_shape=True)

    def visit_Dict(self, node: cst.Dict) -> None:
        if id(node) in self.table_dicts:
            return
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                self._sink(element.key, element.value, require_key_shape=True)

    def visit_Call(self, node: cst.Call) -> None:
        self._call_flow(node)
        self._log_call(node)

    def _call_flow(self, node: cst.Call) -> None:
        """A call of what may be a project function, with what its arguments carry."""
        site = self._site(node)
        if site.callee and site.args:
            self.calls.append(CallFlow(site.callee, site.caller, self._span(node), site.args, site.bound))

    def _site(self, node: cst.Call) -> ResultOf:
        """The call as codefacts.py resolves it: callee ("" if unknown) and what each argument carries."""
        scope = self.scopes[-1]
        args: list[tuple[int | str, frozenset[Atom]]] = []
        positional = True
        for position, arg in enumerate(node.args):
            positional = positional and not arg.star
            atoms = scope.kept(self._roots(arg.value)) if arg.keyword or positional else frozenset()
            if atoms:
                args.append((arg.keyword.value if arg.keyword else position, atoms))
        callee = self.code.callee(node.func, self.classes) or ""
        bound = isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self"
        return ResultOf(callee, None, scope.name, tuple(args), bound)

    def _log_call(self, node: cst.Call) -> None:
        """`log("k", v)`, `log({"k": v})` and `log(k=v)`: every argument names a metric."""
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if self.prometheus and name in PROMETHEUS_TYPES:
            self._help_string(node)
        if name not in self.rules.log_functions:
            return
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) >= 2 and _key_text(positional[0].value) is not None:
            self._sink(positional[0].value, positional[1].value, require_key_shape=False)
        for arg in positional:
            if isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        self._sink(element.key, element.value, require_key_shape=False, only_unshaped=True)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in self.rules.log_options:
                self._record_key(arg.keyword.value, arg.keyword, arg.value, from_keyword=True)

    def _sink(
        self,
        key_node: cst.BaseExpression,
        value: cst.BaseExpression,
        require_key_shape: bool,
        only_unshaped: bool = False,
    ) -> None:
        key = _key_text(key_node)
        if key is None or keys.too_generic(key):
            return
        shaped = keys.looks_like_key(key)
        if (require_key_shape and not shaped) or (only_unshaped and shaped):
            return
        self._record_key(key, key_node, value, from_keyword=False)

    def _record_key(self, key: str, node: cst.CSTNode, value: cst.BaseExpression, from_keyword: bool) -> None:
        span = self._span(node)
        self.keys.append(KeyUse(key, span, from_keyword))
        self.keys_on_line.setdefault(span.line, []).append(key)
        self.scopes[-1].sinks.append((key, self._roots(value)))

    def _roots(self, value: cst.BaseExpression, element: tuple[int, int] | None = None) -> frozenset[Atom]:
        """What `value` is: the names it holds unchanged, the code facts known about it, the
        project calls it comes from; `element` = (index, tuple size) takes one element of it.
        Empty when it computes something new."""
        scope = self.scopes[-1]
        if isinstance(value, cst.Name):
            return self.code.element(scope.roots(value.value), element)
        if isinstance(value, cst.IfExp):
            return self._roots(value.body, element) | self._roots(value.orelse, element)
        if isinstance(value, (cst.Tuple, cst.List)) and element is not None and element[0] < len(value.elements):
            return self._roots(value.elements[element[0]].value)
        if isinstance(value, cst.Subscript) and element is None:
            index = self.code.constant_index(value)
            return self._roots(value.value, (index, -1)) if index is not None else frozenset()
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name) and func.value in self.rules.preserving_functions and len(value.args) == 1:
                return self._roots(value.args[0].value, element)
            if isinstance(func, cst.Attribute) and func.attr.value in self.rules.preserving_methods:
                return self._roots(func.value, element)
            return self.code.call(value, element, scope.objects, self._site(value))
        if isinstance(value, cst.Attribute) and element is None:
            return self.code.expression(value, scope.objects)
        if isinstance(value, cst.BinaryOperation) and element is None:
            return self.code.arithmetic(value, value.operator, self._roots(value.left), self._roots(value.right), value.right)
        return frozenset()

    # -- tooltip texts ----------------------------------------------------------------------

    def _dict_table(self, name: str, value: cst.Dict) -> None:
        """`DESCRIPTIONS = {"train/loss": "..."}` at module level: a table, if every value is text."""
        entries = []
        for order, element in enumerate(value.elements):
            if not isinstance(element, cst.DictElement):
                return
            pattern = element.key.evaluated_value if isinstance(element.key, cst.SimpleString) else None
            text = self._string_mention(element.value)
            if not isinstance(pattern, str) or text is None:
                return
            entries.append(TooltipEntry(pattern, text, self._span(element.key), order))
        if entries:
            self.dict_tables.append(TooltipTable(self.path, "python", name, tuple(entries)))
            self.table_dicts.add(id(value))

    def _help_string(self, node: cst.Call) -> None:
        """`Counter("requests", "Requests served, per second")`: the help text of that metric."""
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        named = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        name_node = named.get("name", positional[0] if positional else None)
        text_node = named.get("documentation", positional[1] if len(positional) > 1 else None)
        name = name_node.evaluated_value if isinstance(name_node, cst.SimpleString) else None
        text = self._string_mention(text_node) if text_node is not None else None
        if not isinstance(name, str) or text is None or name_node is None:
            return
        prefix = [named[k].evaluated_value for k in ("namespace", "subsystem") if isinstance(named.get(k), cst.SimpleString)]
        full = "_".join([p for p in prefix if isinstance(p, str) and p] + [name])
        span = self._span(name_node)
        self.keys.append(KeyUse(full, span))
        self.help_entries.append(TooltipEntry(full, text, span, len(self.help_entries)))

    def _string_mention(self, node: cst.BaseExpression) -> Mention | None:
        """A plain string literal as a tooltip text; exact positions unless it has escapes."""
        if not isinstance(node, cst.SimpleString) or not isinstance(node.evaluated_value, str):
            return None
        raw = node.value
        opening = len(node.prefix) + len(node.quote)
        start = self.get_metadata(PositionProvider, node).start
        content = raw[opening : len(raw) - len(node.quote)]
        if "\\" in content:
            return Mention("tooltip", self.path, node.evaluated_value, ((start.line, start.column + 1 + opening),))
        lines = source_lines(content)
        origins = [(start.line, start.column + 1 + opening)] + [(start.line + i, 1) for i in range(1, len(lines))]
        return Mention("tooltip", self.path, "\n".join(lines), tuple(origins))

    def tables(self) -> tuple[TooltipTable, ...]:
        help_table = TooltipTable(self.path, "prometheus", "prometheus_client", tuple(self.help_entries), shape=True)
        return (*self.dict_tables, help_table) if self.help_entries else tuple(self.dict_tables)

    def _span(self, node: cst.CSTNode) -> Span:
        position = self.get_metadata(PositionProvider, node)
        return Span(self.path, position.start.line, position.start.column + 1, position.end.line, position.end.column + 1)

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _lines_of(self, node: cst.CSTNode) -> range:
        where = self.get_metadata(PositionProvider, node)
        return range(where.start.line, where.end.line + 1)

    # -- comments ---------------------------------------------------------------------------

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None:
            self._comment(node.comment, trailing=False)

    def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
        if node.comment is not None:
            self._comment(node.comment, trailing=True)

    def _comment(self, comment: cst.Comment, trailing: bool) -> None:
        start = self.get_metadata(PositionProvider, comment).start
        body = comment.value.lstrip("#")
        text = body.lstrip()
        column = start.column + 1 + len(comment.value) - len(text)
        found = suppress.directive(text)
        if found is not None:
            at = column + found.start
            self.directives.append((Span(self.path, start.line, at, start.line, start.column + 1 + len(comment.value)), found))
            text = text[: found.start].rstrip().rstrip("#")  # the remark before it is still read
        if text.strip():
            self.comments.append((start.line, column, text.rstrip(), trailing))

    def suppressions(self) -> list[Suppression]:
        """A directive covers its own line, and the strings it anchors (see `anchors`)."""
        return [
            suppress.suppression(found, span, {span.line} | self.anchors.get(span.line, set()))
            for span, found in self.directives
        ]

    def comment_mentions(self) -> list[Mention]:
        """Trailing comments speak for what their line logs or assigns; runs of own-line
        comments form one text whose sentences are attributed by the metrics they name."""
        mentions: list[Mention] = []
        block: list[tuple[int, int, str, bool]] = []

        def flush() -> None:
            if block:
                text = "\n".join(c[2] for c in block)
                mentions.append(Mention("comment", self.path, text, tuple((c[0], c[1]) for c in block)))
                block.clear()

        for comment in sorted(self.comments):
            line, column, text, trailing = comment
            if trailing:
                flush()
                subjects = tuple(self.names_on_line.get(line, ()))
                flows = tuple(dict.fromkeys(self.keys_on_line.get(line, ())))
                mentions.append(Mention("comment", self.path, text, ((line, column),), subjects, flows))
            elif block and (block[-1][0] != line - 1 or block[-1][1] != column):
                flush()
                block.append(comment)
            else:
                block.append(comment)
        flush()
        return mentions


def _with(mention: Mention, subjects: tuple[str, ...], flows_to: tuple[str, ...] = ()) -> Mention:
    return Mention(mention.source, mention.path, mention.text, mention.origins, subjects, flows_to)


def _leading_string(body: object) -> cst.SimpleString | None:
    statements = list(body) if isinstance(body, (list, tuple)) else []
    if not statements:
        return None
    first = statements[0]
    small = first.body[0] if isinstance(first, cst.SimpleStatementLine) and first.body else first
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
        return small.value
    return None


def _assigned_name(statement: object) -> str | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
        return small.target.value
    return None


def _key_text(node: cst.BaseExpression) -> str | None:
    """A string key as written; f-string fields become `{name}` placeholders."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            else:
                expression = part.expression
                parts.append("{" + (expression.value if isinstance(expression, cst.Name) else "") + "}")
        return "".join(parts)
    return None
