"""Where values are logged, for the walk: logging calls, dict literals and subscript
assignments with metric-shaped keys, Prometheus help texts, and the calls of project functions
with what their arguments carry."""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from functools import lru_cache
from typing import Any, Iterator

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.knowledge.sinks import ArgumentPlace as Passed
from metriclint.knowledge.sinks import Shape, Sink
from metriclint.model import (
    FUNCTION,
    UNKNOWN_OBJECT,
    Atom,
    Bag,
    CallFlow,
    CodeFact,
    HandOver,
    Held,
    KeyUse,
    LoggedBag,
    Span,
    logged_by,
    rekeyed,
)
from metriclint.sources.python import flags, key_tables, ranks, strings
from metriclint.sources.python.bag_puts import BagWriter
from metriclint.sources.python.call_names import Argument, arguments, called_name
from metriclint.sources.python.line_records import (
    dumped_lines,
    may_be_line,
    nested_keys,
    printed_record,
    reads_loop_items,
    written_record,
)
from metriclint.sources.python.roots import returned_by
from metriclint.sources.python.state import NOT_LOGGED, Logging
from metriclint.sources.python.values import is_measurement, stands_alone

_FITS = "<fits>"  # what a shape that takes no keyword name still gives, so that an empty answer means "does not fit"


def passed(given: list[Argument], argument: Passed) -> ast.expr | None:
    """The call's argument at `argument`'s position or under one of its keyword names."""
    for arg in given:
        if arg.keyword is not None and arg.keyword in argument.keywords:
            return arg.value
    positional = [arg for arg in given if arg.keyword is None]
    if (
        argument.position is not None
        and argument.position < len(positional)
        and not any(a.star for a in positional[: argument.position + 1])
    ):
        return positional[argument.position].value
    return None


def _taken(arguments: tuple[Passed, ...], value: Passed | None) -> frozenset[str]:
    return frozenset(k for a in (*arguments, *([value] if value is not None else [])) for k in a.keywords)


@lru_cache(maxsize=1)
def _prometheus_metrics() -> frozenset[str]:
    return frozenset(word_lists("tooltips.yaml").get("prometheus_metrics", ()))


class KeyRecorder(BagWriter):
    """Records each key with the value logged under it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line_dumps: set[int] = set()  # `json.dump(d, f)` calls a newline follows (line_records.py)
        self.json_lines = any(name in self.text.text for name in self.sinks.lines.names)  # no `json.dump(s)`, no line record: most files
        self.deferred_calls: list[ast.Call] = []
        self.key_tables = key_tables.ModuleTables(self.tree)  # a reduction by key a hand-over passes a table for

    def block(self, body: list[ast.stmt]) -> None:
        if self.json_lines and len(body) > 1:
            self.line_dumps.update(dumped_lines(body, self.code.import_path, self.sinks.lines))
        super().block(body)

    def _log_call(self, node: ast.Call) -> None:
        """A call of a sink (rules/sinks.yaml): what it logs, in the first of its shapes that fits."""
        if self.prometheus and self.code.chain(node.func, {}) in _prometheus_metrics():
            help_key = self.tables.help_string(node, self._one_string, self._constant)
            if help_key is not None:
                self.keys.append(help_key)
        sink, by_name = self._sink(node.func)
        if sink is None or sink.lines_only and not (self.json_lines and may_be_line(node, self.line_dumps)):
            return
        callee = self.site(node).callee if by_name else ""
        self.via = self.span(node) if callee else None
        unplaced = callee.startswith(UNKNOWN_OBJECT)  # an object nothing names: a family's method may run
        given = arguments(node)
        logging = Logging(
            self._logging(node, called_name(node.func), given),
            ranks.unreduced(self.code, node, self.scopes[-1].objects, self._bases()),
            node,
            sink.says,
            self.span(node),
            self._forks(sink, given),
            self.via if unplaced else None,
        )
        taken: frozenset[str] = frozenset()
        fitted: Shape | None = None
        for shape in sink.shapes:
            taken = self._logged_as(shape, given, sink, node, logging)
            if taken:
                fitted = shape
                break
        # a method of the project's own may run instead: the project-wide step decides. On an
        # object nothing names, only where the call passes a dict, which that step follows into a
        # family's methods; a list of records (DeepSpeed's events) is the tracker's to read.
        if self.via is not None and (not unplaced or fitted is not None and fitted.mapping is not None):
            self.tentative.append((self.via, callee, self.scopes[-1].name, tuple(k.arg for k in node.keywords if k.arg is not None)))
        options = self.sinks.options | taken
        for arg in given if sink.keywords else ():
            if arg.keyword is not None and arg.where is not None and arg.keyword not in options:
                line, column = self.text.start(arg.where)
                span = Span(self.path, line, column + 1, line, column + 1 + len(arg.keyword))
                self._record_key(arg.keyword, span, arg.value, from_keyword=True, logging=logging)
        self.via = None

    def _forks(self, sink: Sink, given: list[Argument]) -> tuple[str, ...]:
        """The suffixes each key the call logs gets (rules/sinks.yaml `forks`): Lightning's
        `self.log("loss", x, on_epoch=True)` in `training_step` logs `loss_step` and `loss_epoch`."""
        if sink.forks is None:
            return ()
        passed = {a.keyword: _flag(a.value) for a in given if a.keyword in sink.forks.options}
        method = self.scopes[-1].name.rsplit(".", 1)[-1] if self.class_nodes and len(self.scopes) == 2 else ""
        return sink.forks.suffixes_for(passed, method)

    def _handed_key(self, part: ast.expr | None) -> bool:
        """Whether a sink's key is a parameter the function is handed whole (`def log_scalar(key,
        value): writer.add_scalar(key, value)`, a sink that takes nothing but a key there): each
        caller names the key, as it does the key of a dict `{key: value}` the function logs
        (evidence/logged_bags.py)."""
        return isinstance(part, ast.Name) and self.is_param(part.id) and not self._keys(part)

    def implemented_sink(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A method of the project's own that implements a tracker's (a writer's
        `add_scalars(tag_scalar_dict, global_step)`, a logger's `log_metrics(metrics, step)`):
        the keys it writes itself into a dict made of what it is handed (`record =
        metrics.copy(); record["step"] = step`, `{tag: value, "step": step}`) are logged beside
        its callers' keys, wherever it sends the record."""
        sink = self.sinks.methods.get(node.name) if self.classes and len(self.scopes) == 2 else None
        if sink is None:
            return
        scope = self.scopes[-1]
        handed = frozenset(p for p in scope.params if p not in ("self", "cls"))
        placeholders = frozenset(f"{{{p}}}" for p in handed)
        for bag in scope.bags.values():
            if not (
                any(h.kind == "param" and h.name in handed and h.rekey == "{}" and not h.item for h in bag.held)
                or any(e.key in placeholders for e in bag.entries)
            ):
                continue
            for entry in bag.entries:
                if entry.measured and not keys.is_template(entry.key):
                    said = f"{sink.says}, as the project's {self.classes[-1]}.{node.name} writes it"
                    self.keys.append(KeyUse(entry.key, entry.span, False, True, entry.through, sink=said))

    def _sink(self, func: ast.expr) -> tuple[Sink | None, bool]:
        """The sink a call calls: a module's function by its import path, else a method (or an
        unknown name) by its own name (then True: it may be a method of the project's own, which
        the project-wide step follows instead), or a helper `log-functions` names, called by its
        name (`emit` imported from the project's module, or defined in the function) or as a
        method. `torch.log(x)` is `torch`'s, so no `log` sink, whatever the setting names."""
        name = called_name(func)
        if name not in self.sinks.names:
            return None, False  # most calls: no sink has their name
        path = self.code.chain(func, self.scopes[-1].objects)
        if path is not None and path in self.sinks.functions:
            return self.sinks.functions[path], False
        if path is None or "(" in path or path.startswith("builtins."):
            return self.sinks.methods.get(name), name not in self.sinks.own  # the setting's: said to log, not followed instead
        if name in self.sinks.own and type(func) is ast.Name:
            return self.sinks.methods[name], False
        return None, False

    def _logged_as(self, shape: Shape, given: list[Argument], sink: Sink, node: ast.Call, logging: Logging) -> frozenset[str]:
        """Logs what the call passes if it fits `shape`; the keyword names the shape took
        (`{"<fits>"}` when it took none), or nothing when it does not fit."""
        if shape.key:
            parts = [passed(given, argument) for argument in shape.key]
            # no value: the call makes an instrument the values are recorded with later (OpenTelemetry)
            value = passed(given, shape.value) if shape.value is not None else node
            handed = len(parts) == 1 and sink.keyed_only and self._handed_key(parts[0])
            if value is None or not handed and any(part is None or not (self._keys(part) or self.over_loop_key(part)) for part in parts):
                return frozenset()
            if shape.prefixes:
                self._unprefixed(parts[0], shape.prefixes, value, logging)  # type: ignore[arg-type]
            elif len(parts) == 1 and (handed or self.over_loop_key(parts[0])):  # type: ignore[arg-type]
                self.log_bag(self.entry(parts[0], value), sink, node, logging)  # type: ignore[arg-type]
            elif len(parts) == 1:
                self.sink(parts[0], value, require_key_shape=False, logging=logging)  # type: ignore[arg-type]
                if shape.description is not None:
                    self._described(parts[0], passed(given, shape.description))  # type: ignore[arg-type]
                if shape.unit is not None:
                    self._described(parts[0], passed(given, shape.unit), unit=True)  # type: ignore[arg-type]
            else:
                joined = ["/".join(texts) for texts in itertools.product(*(self._keys(p) for p in parts))]  # type: ignore[arg-type]
                for key in joined[: keys.MAX_VALUES]:
                    self._record_key(key, self.span(parts[0]), value, from_keyword=False, logging=logging)  # type: ignore[arg-type]
            described = [place for place in (shape.description, shape.unit) if place is not None]
            return _taken((*shape.key, *described), shape.value) | {_FITS}
        if shape.line_record is not None:
            written = passed(given, shape.line_record)
            record = self._line_record(node, written) if written is not None else None
            if record is None:
                return frozenset()
            if isinstance(record, ast.Dict):
                self.logged_with[id(record)] = logging
            bag, function = self.bag(record), self.scopes[-1].definition
            if bag.entries and function is not None:
                inner = {self.span(key) for key in nested_keys(function)}
                bag = Bag(tuple(e for e in bag.entries if e.span not in inner), bag.held)
            self.log_bag(bag, sink, node, logging, fresh=isinstance(record, (ast.Dict, ast.DictComp)))
            return _taken((shape.line_record,), None) | {_FITS}
        argument = shape.mapping or shape.records
        mapping = passed(given, argument) if argument is not None else None
        if mapping is None or strings.values(mapping, self.string) is not None or isinstance(mapping, ast.Constant):
            return frozenset()
        if isinstance(mapping, ast.Dict):
            self.logged_with[id(mapping)] = logging  # for its shaped keys, recorded where the dict is visited
        self.log_bag(self.bag(mapping), sink, node, logging, fresh=isinstance(mapping, (ast.Dict, ast.DictComp)))
        return _taken((argument,) if argument is not None else (), None) | {_FITS}

    def _unprefixed(self, key_node: ast.expr, prefixes: tuple[str, ...], value: ast.expr, logging: Logging) -> None:
        """A sink that logs a key only under one of `prefixes`, taken off (mmengine's message
        hub: "train/tflops" is logged as "tflops"); a key under none of them is not logged."""
        for key in self._keys(key_node)[: keys.MAX_VALUES]:
            prefix = next((p for p in prefixes if key.startswith(p) and len(key) > len(p)), None)
            if prefix is not None:
                self._record_key(key[len(prefix) :], self.span(key_node), value, from_keyword=False, logging=logging)

    def _described(self, key_node: ast.expr, text: ast.expr | None, unit: bool = False) -> None:
        """The description a sink call gives its key (an OpenTelemetry instrument's), or with
        `unit` the unit it gives it ("ms"): the key's tooltip, for each key the name may be that
        is known whole."""
        if text is None:
            return
        for key in self._keys(key_node):
            if not keys.is_template(key):
                self.tables.described(key, text, self.span(key_node), unit)

    def _line_record(self, node: ast.Call, written: ast.expr) -> ast.expr | None:
        """The dict a call writes as one JSON line (line_records.py), unless it is a row of data:
        written in a loop from the loop's items."""
        path = self.code.import_path(node.func)
        record: ast.expr | None
        if id(node) in self.line_dumps:
            record = written
        elif path in self.sinks.lines.printers:
            record = printed_record(node, self.code.import_path, self.sinks.lines)
        elif path in self.sinks.lines.dumpers:
            record = None  # a record dumped with no newline after it
        else:
            record = written_record(written, self.code.import_path, self.sinks.lines)
        loops = self.scopes[-1].iterating
        if record is None or not loops:
            return record
        values = [self.valued[e.span] for e in self.bag(record).entries if e.span in self.valued]
        return None if reads_loop_items(record, values, loops) else record

    def log_bag(self, bag: Bag, sink: Sink, node: ast.stmt | ast.expr, logging: Logging, fresh: bool = True) -> None:
        """A dict of metrics reaches a sink: each entry put in it here is logged here; what it
        holds of elsewhere, the project-wide step follows (evidence/logged_bags.py). Unless the
        dict is written in the call (`fresh`), a call it went through may have reduced its
        values across the ranks: this rank's own values (ranks.LocalFact) are not its own any more."""
        pending = []
        if logging.forks:
            self.prose.forked(node.lineno, (entry.key for entry in bag.entries), logging.forks)
            bag = forked_bag(bag, logging.forks)
        for entry in bag.entries:
            value = self.valued.get(entry.span)
            if keys.too_generic(entry.key) and not entry.family:
                pending.append(entry)  # `{name: value}` in `def log_to(name, value)`: its callers name it
            elif value is not None and not entry.recorded:
                atoms = entry.value if fresh else frozenset(a for a in entry.value if not isinstance(a, ranks.LocalFact))
                self._record_key(entry.key, entry.span, value, from_keyword=False, logging=logging, atoms=atoms)
        if bag.held or pending:
            self.scopes[-1].logged.append(LoggedBag(Bag(tuple(pending), bag.held), sink.says, self.span(node)))

    def _logging(self, node: ast.Call, name: str, given: list[Argument]) -> frozenset[CodeFact]:
        """What the logging call does to its values (rules/code/logging.yaml): Lightning's
        `self.log(..., sync_dist=True)` reduces them across devices."""
        flags = {a.keyword: a.value.value for a in given if a.keyword and isinstance(a.value, ast.Constant) and type(a.value.value) is bool}
        passed = {a.keyword: a.value for a in given if a.keyword}
        found: set[CodeFact] = set()
        for entry in self.code.knowledge.logging.get(name, ()):
            if any(flags.get(keyword) is not value for keyword, value in entry.when):
                continue
            facts = entry.facts
            if entry.keyword in passed:
                written = passed[entry.keyword]
                text = written.value if isinstance(written, ast.Constant) and isinstance(written.value, str) else self.text.segment(written)
                facts = dict(entry.values).get("".join(text.split()), ())
            found |= {self.code.fact(facet, value, node, entry.says) for facet, value in facts}
        return frozenset(found)

    def _one_string(self, node: ast.expr) -> str | None:
        """The one string `node` is, known whole here (a literal, a name bound to it), else None."""
        found = strings.values(node, self.string)
        return found[0] if found and len(found) == 1 and not keys.is_template(found[0]) else None

    def _constant(self, node: ast.expr) -> str | None:
        """The import path of the other module's name `node` reads, `pkg.series.LOSS` for
        `series.LOSS` or an imported `LOSS`; None for anything bound here or not imported."""
        if isinstance(node, ast.Name) and (node.id in self.scopes[-1].params or node.id in self.scopes[-1].carries):
            return None
        path = self.code.chain(node, {}) if isinstance(node, (ast.Name, ast.Attribute)) else None
        return path if path and "." in path and "(" not in path and not path.startswith("builtins.") else None

    def constants(self) -> tuple[tuple[str, str], ...]:
        """The module's top-level names bound to one string that can be a Prometheus metric's
        name, by import path: another module's `Gauge(series.LOSS, ...)` may read one
        (evidence/constants.py)."""
        module = self.scopes[0]
        return tuple(
            (f"{self.module}.{name}", found[0])
            for name, found in module.strings.items()
            if len(found) == 1 and keys.prometheus_shaped(found[0])
        )

    def _bases(self) -> frozenset[str]:
        """The bases of the class the walk is in (a method's `self.log` is the class's)."""
        return self.bases[-1] if self.bases else frozenset()

    def sink(
        self,
        key_node: ast.expr,
        value: ast.expr,
        require_key_shape: bool,
        only_unshaped: bool = False,
        logging: Logging = NOT_LOGGED,
        atoms: frozenset[Atom] | None = None,
    ) -> None:
        hook = self.hook_here() if require_key_shape else None
        written = self._keys(key_node)
        if logging.forks and logging.call is not None:
            self.prose.forked(logging.call.lineno, written, logging.forks)
        for key in forked(written, logging.forks):
            if self.rebound_part(key):
                continue
            shaped = keys.looks_like_key(key)
            # a key the class's logging method reads by name from a hook's return is turned into
            # others or dropped there (logged_returns.py): logged, if at all, as another key
            consumed = hook is not None and key in hook[1]
            if (require_key_shape and not stands_alone(key, value, len(self.scopes) == 1)) or (only_unshaped and shaped) or consumed:
                self.prose.entries_on_line.setdefault(key_node.lineno, []).append(key)  # logged, maybe, once its dict is
                continue
            if not keys.too_generic(key) or not require_key_shape and self.names_family(key, key_node):
                self._record_key(key, self.span(key_node), value, from_keyword=False, logging=logging, atoms=atoms)
            elif any(f"{{{param}}}" in key for param in self.scopes[-1].params):
                self.scopes[-1].generic.append(key)  # `{section}/{name}`: what a caller passes may pin its section

    def _keys(self, node: ast.expr) -> tuple[str, ...]:
        return self.key_texts(node)

    def _record_key(
        self,
        key: str,
        span: Span,
        value: ast.expr,
        from_keyword: bool,
        logging: Logging = NOT_LOGGED,
        atoms: frozenset[Atom] | None = None,
    ) -> None:
        """`logging`: what the logging call makes of the value; its `done` replaces what the value
        had for those facets, and it decides whether this rank's own value is logged as such.
        `atoms`: what the value was where it was put in a dict, if not what it is here."""
        said = logged_by(logging.sink, logging.at, span) if logging.at is not None else ""
        via = self.via if self.via is not None else logging.via
        self.keys.append(KeyUse(key, span, from_keyword, is_measurement(value), self.names(value), via, said))
        self.prose.keys_on_line.setdefault(span.line, []).append(key)
        if logging.call is not None:
            self.prose.calls_logging.setdefault(logging.call.lineno, []).append(key)
        line = logging.call.lineno if logging.call is not None else span.line
        site = span if line == span.line else Span(span.path, line, span.column, span.end_line, span.end_column)
        self.value_logged(key, value, logging, atoms, site)

    def value_logged(
        self, key: str, value: ast.expr, logging: Logging, atoms: frozenset[Atom] | None = None, site: Span | None = None
    ) -> None:
        """What the value logged under `key` is, for the function's flow (evidence/code_claims.py)."""
        done = logging.done
        replaced = {fact.facet for fact in done}
        atoms = self.logged(value, logging.call) if atoms is None else atoms
        if done and not isinstance(value, ast.Attribute):  # `self.accuracy`, a metric object that computes itself
            atoms = frozenset(a for a in atoms if not (isinstance(a, CodeFact) and a.facet in replaced)) | done
        guarded = {flag for _, flag in self.guards}  # logged only when the flag is set: never the placeholder
        atoms = frozenset(
            replace(a, placeholder=None) if isinstance(a, CodeFact) and a.placeholder and a.placeholder.flag in guarded else a
            for a in atoms
        )
        scope = self.scopes[-1]
        if site is not None:  # where a comment may speak for this one value (checks/ml006.py)
            scope.sites[len(scope.sinks)] = site
        scope.sinks.append((key, ranks.settled(self.code, atoms, logging.unreduced, logging.call or value)))

    def _call_flow(self, node: ast.Call) -> None:
        """A call of what may be a project function, with what its arguments carry."""
        site = self.site(node)
        if not site.callee:
            return
        given = arguments(node)
        texts = self._argument_strings(given)  # an object's method is followed only for a dict of metrics handed it (roots.py `site`)
        bags = self.argument_bags(node, given)
        keyed = self._argument_keyed(given) if texts and self.scopes[-1].keyvars else ()
        reads = self.scopes[-1].attribute_reads
        attributes = self._argument_attributes(given, texts, reads) if reads and not site.callee.startswith(UNKNOWN_OBJECT) else ()
        self.scopes[-1].handed_bags.extend(bag for _, bag in bags if bag.entries)
        if site.args or texts or bags or attributes:
            self.calls.append(CallFlow(site.callee, site.caller, self.span(node), site.args, site.bound, texts, bags, keyed, attributes))
        self.handed_to(site.callee, node, given)
        self._hand_over(node, given, site.callee, site.bound)

    def decorated(self, node: ast.FunctionDef | ast.AsyncFunctionDef, function: str) -> None:
        """`@register(settings)` over `def f`: `f = register(settings)(f)`, a call of what the
        decorator's call returns (`pkg.register()`) handed the function, as the project-wide
        step reads calls: a registry the decorator fills holds `f` (bags.py `module_dict`)."""
        handed = ((0, Bag(held=(Held(FUNCTION, function),))),)
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call):
                callee = returned_by(self.site(decorator).callee) or ""
            else:
                callee = self.code.callee(decorator, self.classes, self.scopes[-1].known) or ""
            if callee and not callee.startswith(UNKNOWN_OBJECT) and not self.code.standard(callee):
                self.calls.append(CallFlow(callee, self.scopes[-1].name, self.span(decorator), (), False, (), handed))

    def _hand_over(self, node: ast.Call, given: list[Argument], callee: str, bound: bool) -> None:
        """A dict passed by name to a project function: what that function does to every value
        of it (reducers.py) happens to the values put in it here (flow.Scope.hand_over). The
        hand-over is made only for a name the scope has something to hand on with: most
        arguments have nothing, and its span and text cost more than the rest of the call."""
        scope, positional = self.scopes[-1], True
        for position, arg in enumerate(given):
            positional = positional and not arg.star
            if isinstance(arg.value, ast.Name) and not arg.star and (arg.keyword or positional) and scope.hands_on(arg.value.id):
                where = arg.keyword or position
                tables = key_tables.passed(given, where, arg.value.id, scope, self.key_tables)
                over = HandOver(callee, where, bound, self.span(node), self.text.segment(node.func), tables)
                scope.hand_over(arg.value.id, over, self.rules.replaced_per_key)

    def _argument_strings(self, given: list[Argument]) -> tuple[tuple[int | str, tuple[str, ...]], ...]:
        """The strings each argument is: they fill the callee's key templates (evidence/built_keys.py)
        and the prefixes it puts on a dict's keys (evidence/logged_bags.py), a part that varies
        as a placeholder (`f"eval/{name}/"`); text with spaces in it is no key or prefix."""
        found: list[tuple[int | str, tuple[str, ...]]] = []
        for where, value in _placed(given):
            texts = strings.values(value, self.string)
            if texts and not any(keys.is_template(t) and " " in t for t in texts):
                found.append((where, texts))
        return tuple(found)

    def _argument_attributes(
        self, given: list[Argument], texts: tuple[tuple[int | str, tuple[str, ...]], ...], reads: dict[str, tuple[str, str]]
    ) -> tuple[tuple[int | str, str], ...]:
        """The object attribute each argument whose strings are not known stands for (`sep`
        bound to `tracker.sep`), for the project-wide step to fill the callee's keys with."""
        known = {where for where, _ in texts}
        named = (
            (where, value.id) for where, value in _placed(given) if where not in known and type(value) is ast.Name and value.id in reads
        )
        return tuple((where, part) for where, name in named if (part := self.read_part(name, reads)))

    def _argument_keyed(self, given: list[Argument]) -> tuple[tuple[int | str, Bag], ...]:
        """The dicts a loop runs over that an argument builds a key from (`f"train/{k}"` in a loop
        over `losses`), re-keyed so: a callee that logs under that parameter logs one key per
        entry (CallFlow.keyed)."""
        return tuple((where, bag) for where, value in _placed(given) if (bag := self.looped_bag(value)))

    def _visit_Dict(self, node: ast.Dict) -> bool:
        if not self.tables.holds(node):
            for key, value in zip(node.keys, node.values):
                if key is not None:
                    self.sink(key, value, require_key_shape=True, logging=self.logged_with.get(id(node), NOT_LOGGED))
        return True

    def _visit_Call(self, node: ast.Call) -> bool:
        scope = self.scopes[-1]
        if scope.looped and not scope.recursive and scope.definition is not None:
            func, own = node.func, scope.definition.name  # the names compared inline: asked of every call in a loop's function
            scope.recursive = (
                type(func) is ast.Name
                and func.id == own
                or type(func) is ast.Attribute
                and func.attr == own
                and type(func.value) is ast.Name
                and func.value.id in ("self", "cls")
            )
        if (defined := flags.option(node, self.span)) is not None:
            self.flags.append(defined)
        self._call_flow(node)
        if node.args and called_name(node.func) in self.rules.deferred and not isinstance(node.args[0], ast.Starred):
            self._deferred(node)
        self.call_keys(node)
        self._taken(node)
        return True

    def _deferred(self, node: ast.Call) -> None:
        """`pool.submit(self._write, path, logs)` calls `self._write(path, logs)` (dataflow.yaml
        `deferred`): the project-wide step follows it as that call, made where `submit` is."""
        called = ast.copy_location(ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords), node)
        self.deferred_calls.append(called)  # kept: the walk caches what it reads of a call by its id
        self._call_flow(called)

    def call_keys(self, node: ast.Call) -> None:
        """The keys a call logs (`log("k", v)`) or reads back (`d.get("k")`)."""
        self._log_call(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            self._read_back(node.args[0])

    def _taken(self, node: ast.Call) -> None:
        """A call that may change what it is passed (not known to leave it alone, not a
        value-preserving step, not a logging call of ranks.yaml) ends what this rank's own values
        among its arguments and its object are: `reduce_metrics(t)` may all-reduce `t` in place."""
        func, scope = node.func, self.scopes[-1]
        if not scope.owns:
            return  # most functions: no value of theirs is this rank's own
        passed = [a.value for a in arguments(node)] + ([func.value] if isinstance(func, ast.Attribute) else [])
        names = [v.id for v in passed if isinstance(v, ast.Name) and scope.local(v.id)]
        if (
            not names
            or ranks.leaves_alone(self.code, node, scope.objects)
            or ranks.unreduced(self.code, node, scope.objects, self._bases())
        ):
            return
        name = called_name(func)
        if name in self.rules.preserving_functions or name in self.rules.preserving_methods:
            return
        for held in names:
            scope.unshared(held)

    def _visit_Subscript(self, node: ast.Subscript) -> bool:
        if isinstance(node.ctx, ast.Load):
            self._read_back(node.slice)
        return True

    def _visit_Compare(self, node: ast.Compare) -> bool:
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            self._read_back(node.left)
        return True

    def _read_back(self, node: ast.expr) -> None:
        """`d["perf/log_probs_time"]`, `d.get(...)`, `"..." in d`: a key read back from a dict of
        metrics is one the code logs when a logged template covers it, such as the
        `perf/{name}_time` a timer's totals are logged under (evidence/built_keys.py)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and keys.looks_like_key(node.value):
            self.reads.append(KeyUse(node.value, self.span(node), measured=False))  # no value seen: counts, but no ML004


def _flag(node: ast.expr) -> bool | None:
    """A keyword's value written as `True` or `False`; None for anything else."""
    return node.value if type(node) is ast.Constant and type(node.value) is bool else None


def forked(found: tuple[str, ...], suffixes: tuple[str, ...]) -> tuple[str, ...]:
    """Each key once per suffix, where the call logging them forks them (Logging.forks); else
    the keys as they are."""
    return tuple(key + suffix for key in found for suffix in suffixes) if suffixes else found


def forked_bag(bag: Bag, suffixes: tuple[str, ...]) -> Bag:
    """A dict of metrics whose every key the call logging it forks: once per suffix."""
    made = Bag()
    for suffix in suffixes:
        made |= rekeyed(bag, "{}" + suffix)
    return made


def _placed(given: list[Argument]) -> Iterator[tuple[int | str, ast.expr]]:
    """Each argument a callee's parameter can be told for, by keyword or position, not one
    after a starred argument (`f(*xs, y)`: y's position is not known)."""
    positional = True
    for position, arg in enumerate(given):
        positional = positional and not arg.star
        if not arg.star and (arg.keyword or positional):
            yield arg.keyword or position, arg.value
