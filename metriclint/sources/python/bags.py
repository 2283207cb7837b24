"""Dicts of metrics, for the walk: what a dict (or a list of records) holds on its way to a
sink, so that a key is logged wherever the dict it was put in is.

Most projects do not write their keys into the tracker call: they fill a dict
(`metrics["loss"] = loss`, `{**stats, "lr": lr}`, `stats[key].append(v)`), prefix its keys
(`{f"train/{k}": v for k, v in stats.items()}`), keep it in an attribute until another method
logs it, return it, or hand it to their own logger. A dict is followed as a `Bag`: the entries
put in it in this function, and what it holds of a parameter, of a project call's result or of
a class's attribute (model.Held), which the project-wide step resolves
(evidence/logged_bags.py). A key whose part is a loop's key over another dict (`{k}` in
`for k, v in stats.items()`) re-keys that dict's entries instead of being a template.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from functools import partial
from typing import Any, Iterator, Sequence

from metriclint.base import keys
from metriclint.base.identifiers import class_like
from metriclint.model import (
    FUNCTION,
    INVOKED,
    KEYWORDS,
    REMOTE_CALL,
    UNKNOWN_OBJECT,
    Atom,
    Bag,
    CodeFact,
    Held,
    HeldOptions,
    MetricsEntry,
    Span,
    reduced_again,
    rekeyed,
    rewritten,
)
from metriclint.sources.python import dataclass_fields, strings
from metriclint.sources.python.bag_items import (
    DICT_MAKERS,
    EMPTY,
    ITEM_READS,
    LIST_ITEMS,
    LISTED,
    RECORD,
    ListReader,
    element,
    indexes,
    item_key,
    nested,
    packed,
    remote_method,
    selected,
    under,
    unseen,
    unwrapped,
)
from metriclint.sources.python.binding_shapes import read_names
from metriclint.sources.python.call_names import Argument, arguments, binding, called_name, looked_up, passed_keywords
from metriclint.sources.python.name_lists import NameLists
from metriclint.sources.python.values import is_measurement, stands_alone

# Calls that return the dict they are given, or one with the same items.
# the names of the calls that turn a record into a dict of its fields (`_as_dict`)
_AS_DICT_NAMES = dataclass_fields.AS_DICT_METHODS | {"asdict"}
COPIES = frozenset({"dict", "OrderedDict", "defaultdict", "copy", "deepcopy", "sorted", "list", "reversed", "tuple", "set", "frozenset"})

# `cast(T, value)` returns `value` unchanged (Python docs, typing.cast): the type it names is for a checker.
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})


# The expressions a dict of metrics may be written as: what `bag` reads.
# The elements of a tuple spread over a call's parameters (`f(*step)`) that are read: a tuple of
# results is short, and an element that none of the callee's parameters takes is read for none.
_SPREAD = 8

_BAGGED = (*LIST_ITEMS, ast.Attribute, ast.List, ast.ListComp, ast.Tuple, ast.BinOp, ast.IfExp, ast.BoolOp)


def _shared(left: Bag, right: Bag) -> Bag:
    """The keys two dicts both have (`set(a) & set(b)`): those of the one whose every key is
    written out here, each of which may be one; none, when neither is (either may hold keys
    the other lacks)."""
    for side in (left, right):
        if side.entries and not side.held:  # its items are dicts under keys it has as entries
            return Bag(side.entries)
    return EMPTY


def local_attribute(node: ast.expr) -> str | None:
    """`result.metrics`, a dict an object of the function holds, as the walk keeps what is put
    in it (beside its names: a dotted name is no name); None for `self.x` and deeper paths."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id != "self":
        return f"{node.value.id}.{node.attr}"
    return None


class BagReader(ListReader):
    """What a dict-valued expression holds (bag_puts.py: where the walk puts what it adds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.valued: dict[Span, ast.expr] = {}  # where an entry's key is written -> the value put under it
        self.call_bags: dict[int, tuple[tuple[int | str, Bag], ...]] = {}  # call node id -> its arguments' bags
        self._held_bags: dict[tuple[str, str], Bag] = {}
        self._result_bags: dict[int, Bag] = {}  # call node id -> what it returns, as a bag
        self._module_dicts: frozenset[str] | None = None  # the dicts the module binds at its top level, once asked
        self._fetch_names = frozenset(path.rsplit(".", 1)[-1] for path in self.rules.fetches)
        # the text's span, not the walk's bound one: held here, that made every file's tree a
        # reference cycle, freed only by a collection (tests/test_speed.py)
        self.name_lists = NameLists(self.module, self.code.imports, partial(self.text.span, self.path))

    def bag(self, node: ast.expr) -> Bag:
        """What `node` holds as a dict of metrics (or a list of (key, value, ...) records); the
        kinds tested most frequent first (names, attributes, calls: most arguments)."""
        if type(node) is ast.Name:
            scope = self.scopes[-1]
            name = node.id
            if name in scope.bags:
                return scope.bags[name]
            if name in scope.results:
                return self._result(scope.results[name])
            if self.is_param(name):
                return self._one("param", name)
            hidden = len(self.scopes) > 1 and name in scope.carries  # a local hides the module's
            if hidden:
                return EMPTY
            shared = self.module_dict(name)
            if shared is not None:
                return self._one("attribute", shared)
            found = (self._enclosing(name) if len(self.scopes) > 2 else EMPTY) or self.name_lists.named(name)
            return found or self._function_value(node)
        if type(node) is ast.Attribute:
            attribute = self._attribute(node)
            if attribute is not None:
                return self._one("attribute", attribute)
            held = local_attribute(node)
            return self.scopes[-1].bags.get(held, EMPTY) if held is not None else EMPTY
        if type(node) is ast.Call:
            return self._called(node)
        if type(node) is ast.Subscript:
            item = item_key(node.slice)
            if item is None and indexes(node.slice):  # `rows[0]`, `rows[i]`: one of a list's dicts
                item = LISTED
            return self._item(node.value, (item,)) if item is not None else EMPTY
        if type(node) is ast.Dict:
            found = EMPTY
            table = self.tables.holds(node)
            for key, value in zip(node.keys, node.values):
                found |= (
                    self.read_as_dict(value) if key is None else self.entry(key, value, recorded=not table) | nested(key, value, self.bag)
                )
            return found
        if type(node) is ast.DictComp:
            return self._comprehended(node)
        if type(node) is ast.List or type(node) is ast.Tuple:
            return self._records(node.elts)
        if type(node) is ast.ListComp:
            return self.list_of(node)
        if type(node) is ast.BinOp and isinstance(node.op, (ast.BitOr, ast.Add)):
            return self.bag(node.left) | self.bag(node.right)
        if type(node) is ast.BinOp and isinstance(node.op, ast.BitAnd):  # `set(a) & set(b)`: keys both have
            return _shared(self.bag(node.left), self.bag(node.right))
        if type(node) is ast.IfExp:
            return self.bag(node.body) | self.bag(node.orelse)
        if type(node) is ast.Await:  # `await self.evaluate(batch)`: what the coroutine returns
            return self.bag(node.value)
        if type(node) is ast.BoolOp:  # `extra or {}`
            found = EMPTY
            for value in node.values:
                found |= self.bag(value)
            return found
        return EMPTY

    def field(self, node: ast.Attribute) -> str | None:
        """`sample.status`, `samples[0].status`: the attribute of an object whose class the
        function knows (a constructor's result, an annotation, an element of a list annotated
        with it), as module.Class.attr: what any method or function puts in that attribute of an
        object of that class (`sample.status = stats`, elsewhere), as `self.status` is."""
        owner = node.value
        if type(owner) is ast.Name:
            made = self.instance(owner.id)
        elif type(owner) is ast.Subscript and type(owner.value) is ast.Name and indexes(owner.slice):
            made = self.scopes[-1].elements.get(owner.value.id)
        else:
            return None
        return f"{made}.{node.attr}" if made is not None and not made.endswith(")") else None

    def read_as_dict(self, node: ast.expr) -> Bag:
        """What `node` holds where it is read as a dict (its `.items()` iterated, unpacked with
        `**`, handed to `update`): its bag, or, for an attribute of an object nothing here put a
        dict in, what every object of its class holds there (`field_bag`), or that item of what
        the object holds: of what a caller passes or a call returns (`batch.meta.items()`, where
        `return out` followed `out.meta = stats`: `returned_object`). Not where it is bound to a
        name or iterated as a list (`for name in run.names`): that loop's variable would stand
        for a dict's keys."""
        found = self.field_bag(node)
        if found or type(node) is not ast.Attribute or local_attribute(node) is None:
            return found
        return self._item(node.value, (node.attr,))

    def field_bag(self, node: ast.expr) -> Bag:
        """`bag`, or for an attribute nothing here put a dict in, what every object of its class
        holds there (`field`): `status = samples[0].status`."""
        found = self.bag(node)
        field = self.field(node) if not found and type(node) is ast.Attribute else None
        return self._one("attribute", field) if field is not None else found

    def returned_object(self, name: str) -> Bag:
        """The dicts this function put in the attributes of the object `name` (`out.meta =
        stats`, `out.meta.update(stats)`), each as the item named by its attribute, for a caller
        that reads it back from what the function returns (`read_as_dict`)."""
        found, prefix = EMPTY, name + "."
        for held, bag in self.scopes[-1].bags.items():
            if held.startswith(prefix) and bag:
                found |= under(held[len(prefix) :], bag)
        return found

    def entry(
        self, key: ast.expr, value: ast.expr, recorded: bool = False, atoms: frozenset[Atom] | None = None, again: tuple[CodeFact, ...] = ()
    ) -> Bag:
        """What putting `value` under `key` adds: an entry per string the key may be, or, when
        the key is a loop's key over another dict, that dict's entries re-keyed (each reduced
        again by `again`: `_reducing`). `recorded`: a key shaped like one is logged where it is
        written (a dict literal's, `d[k] = v`); `atoms`: what the value is there, if not what it
        is alone (bindings.py `overwritten`)."""
        scope = self.scopes[-1]
        looped = key.id if isinstance(key, ast.Name) else self._record_field(key)
        if looped is not None and looped in scope.keyvars:
            return self._valued(scope.keyvars[looped], value, again=again)
        found = self._entry_keys(key)  # `record(name, value)`: what its callers pass, evidence/logged_bags.py
        if not found:
            return EMPTY
        made = EMPTY
        for text in found:
            if self.rebound_part(text):
                continue
            over = self._loop_over(text)
            if over is not None and not _cut(key, over):  # the other dict's keys, or, where they cannot be known, the template
                made |= self._valued(self._loop_rekeyed(key, text, over), value, unvalued_only=True)
            kept = over is not None and (
                keys.looks_like_key(text.replace(f"{{{over}}}", "x"))
                or unseen(scope.keyvars[over])
                or self._inherited_elsewhere(scope.keyvars[over])
            )
            declared = over in scope.family_keys and any(c.isalpha() for c in keys.literal(text))
            if over is None or kept and (declared or not keys.too_generic(text)):
                span = self.span(key)
                self.valued[span] = value
                shaped = recorded and stands_alone(text, value, len(self.scopes) == 1) and not keys.too_generic(text)
                held = self.logged(value) if atoms is None else atoms
                family = declared or over is None and self.names_family(text, key)
                made |= Bag((MetricsEntry(text, span, held, is_measurement(value), self.names(value), shaped, family),))
        return made

    def names_family(self, text: str, node: ast.expr) -> bool:
        """Whether a key whose last segment is only placeholders (keys.too_generic) names a family
        of keys all the same: a word of its own says what is measured, and each placeholder
        stands for what the code names without listing it (an attribute, `{self.label}`), not for
        a caller's choice (a parameter) or what a loop of the function runs over (another dict's
        keys, which the project-wide step fills or re-keys where it can): a method's
        `f"eval/downstream/{self.label}_{self.metric}"`, not `train/{name}` in `def log(name,
        value)` nor `loss/{k}` in a loop over `losses.items()`. `node`: the key as written, whose
        names count as its placeholders' (`f"x/{k.replace(' ', '_')}"` reads the loop's `k`)."""
        if self.scopes[-1].definition is None or not keys.too_generic(text) or not any(c.isalpha() for c in keys.literal(text)):
            return False
        names = {found[1:-1] for found in keys.placeholders(text)} | {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        open_names = {*self.scopes[-1].params, *self._looping(node)} - {"self", "cls"}
        return "value" not in names and not names & open_names

    def _looping(self, node: ast.expr) -> set[str]:
        """The names the function's loops and comprehensions around `node` bind (a key written in
        another branch's loop is not built from its variable), asked only of a key that may name a
        family (`names_family`), seldom: the function's loops are listed once, when first asked."""
        scope = self.scopes[-1]
        if scope.loop_spans is None:
            scope.loop_spans = _loops(scope.definition) if scope.definition is not None else ()
        return {name for start, end, names in scope.loop_spans if start <= node.lineno <= end for name in names}

    def _loop_over(self, text: str) -> str | None:
        """The innermost loop's key a key's text is built from: `for name, stats in
        by_name.items()`, then `f"{name}/{k}"` over `stats.items()` puts each of stats' keys under
        a name not known here."""
        return next((name for name in reversed(self.scopes[-1].keyvars) if f"{{{name}}}" in text), None)

    def looped_bag(self, key: ast.expr) -> Bag:
        """The dict a loop runs over, re-keyed as `key` builds a key from the loop's key
        (`f"train/{k}"`, `k` itself, a record's field): what a call handed `key` names, one key per
        entry (`log_scalar(f"train/{k}", v)` in a loop over a dict); EMPTY for another argument."""
        scope = self.scopes[-1]
        looped = key.id if isinstance(key, ast.Name) else self._record_field(key)
        if looped is not None and looped in scope.keyvars:
            return scope.keyvars[looped]
        found = EMPTY
        for text in self._entry_keys(key) if scope.keyvars else ():
            over = self._loop_over(text)
            if over is not None and not _cut(key, over):
                found |= self._loop_rekeyed(key, text, over)
        return found

    def _loop_rekeyed(self, key: ast.expr, text: str, over: str) -> Bag:
        """The dict a loop over the keys `over` takes runs over, each key as `key` (written as
        `text`) puts it: in place of `{over}`, rewritten by the str methods `key` calls on the
        loop's key, if any (`f"train/{k.replace(' ', '_')}"`)."""
        bag, rewriting = self.scopes[-1].keyvars[over], _rewrites_of(key, over)
        return rekeyed(rewritten(bag, rewriting) if rewriting else bag, text.replace(f"{{{over}}}", "{}"), self._kept_prefix(key))

    def _kept_prefix(self, key: ast.expr) -> str:
        """The prefix a key is given unless it has it already (strings.prefix_kept), written
        here or bound to the name the key is; "" for any other key."""
        if type(key) is ast.Name:
            return self.scopes[-1].kept_prefixes.get(key.id, "")
        kept = strings.prefix_kept(key, self._key_part) if type(key) is ast.IfExp else None
        return kept[1] if kept is not None else ""

    def _inherited_elsewhere(self, bag: Bag) -> bool:
        """Only what a method of this class's own object returns that the class neither defines
        nor inherits from the project, its bases all imported from elsewhere
        (`self.named_parameters()` of a torch module): data the framework yields at run time, so
        a key built over it stays a template, as one over `unseen` data does."""
        if not self.class_nodes or bag.entries or bag.items or not bag.held:
            return False
        node, bases = self.class_nodes[-1], self.base_paths[-1]
        if not node.bases or len(bases) != len(node.bases) or any(b.split(".", 1)[0] == self.code.package_head for b in bases):
            return False
        own = f"{self.code.module}.{node.name}."
        defined = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return all(
            h.kind == "result" and h.name.startswith(own) and "." not in h.name[len(own) :] and h.name[len(own) :] not in defined
            for h in bag.held
        )

    def key_texts(self, node: ast.expr) -> tuple[str, ...]:
        """The keys a key expression may be (strings.py); an unknown part is a `{name}` placeholder."""
        return strings.values(node, self.string) or ()

    def _entry_keys(self, node: ast.expr) -> tuple[str, ...]:
        """`key_texts`, where a parameter or a loop's key over a dict is a part whose name stays
        (`prefix + key` is `{prefix}{key}`): the project-wide step fills the one, `entry` re-keys
        by the other."""
        return strings.values(node, self._key_part) or ()

    def _key_part(self, name: str) -> tuple[str, ...] | None:
        """The strings a name in a key may be (`_entry_keys`)."""
        scope = self.scopes[-1]
        if name in scope.keyvars and any(e.recorded for e in scope.keyvars[name].entries):
            return (f"{{{name}}}",)  # re-keys the dict's written keys where they are written: they stand for themselves no more
        found = self.string(name)
        return found if found is not None else (f"{{{name}}}",) if name in scope.keyvars or self.is_param(name) else None

    def over_loop_key(self, key: ast.expr) -> bool:
        """Whether a key is, or is built from, a loop's key over a dict (`f"train/{k}"`)."""
        keyvars = self.scopes[-1].keyvars
        if not keyvars:
            return False
        if isinstance(key, ast.Name):
            return key.id in keyvars
        return self._record_field(key) is not None or any(f"{{{name}}}" in text for text in self._entry_keys(key) for name in keyvars)

    def _record_field(self, key: ast.expr) -> str | None:
        """The loop's item whose field `key` reads, where the loop is over a list of records
        that carry their own keys (`item.tag` in `for item in scalars`, each made as
        `Scalar("train/loss", loss)`; `item[0]` of a list of tuples): the field a key is read from
        holds each record's key. None for any other key, and for an item of a list of dicts or
        of unknown things."""
        if isinstance(key, ast.Attribute):
            owner = key.value
        elif isinstance(key, ast.Subscript) and isinstance(key.slice, ast.Constant) and key.slice.value == 0:
            owner = key.value
        else:
            return None
        over = self.scopes[-1].keyvars.get(owner.id) if isinstance(owner, ast.Name) else None
        return owner.id if over is not None and isinstance(owner, ast.Name) and any(entry.value for entry in over.entries) else None

    def _records(self, items: list[ast.expr], calls: bool = False) -> Bag:
        """A list of (key, value, ...) records, as DeepSpeed's monitors take them (or objects
        made so, `Scalar("train/loss", loss)`: `_record_made`), of names
        (`["forward-compute", "backward-compute"]`), whose values a dict built from it holds, or
        of dicts of metrics; `calls`: what a call returns may be one (`refs.append(w.run.remote())`),
        asked only of a list the function made or keeps in an attribute."""
        found = EMPTY
        for item in items:
            if isinstance(item, ast.Tuple) and len(item.elts) >= 2:
                found |= self.entry(item.elts[0], item.elts[1])
            elif (fields := _record_made(item)) is not None:
                found |= self.entry(*fields)
            elif isinstance(item, (ast.Constant, ast.JoinedStr)) and (texts := self._entry_keys(item)):
                if not any(self.open_template(text) for text in texts):  # a name, or names built
                    found |= Bag(tuple(MetricsEntry(text, self.span(item), frozenset()) for text in texts))
            elif isinstance(item, LIST_ITEMS) and (calls or type(item) is not ast.Call):
                found |= self.list_element(item)
        return found

    def open_template(self, key: str) -> bool:
        """A template that names no metric on its own, that opens with what is not known (which
        may hold sections: `f"{prefix}.norm"`), or whose placeholder stands for another dict's
        keys, which the project-wide step fills, or a caller's choice (a loop's key over a dict,
        a parameter); not one over what is only known at run time (`unseen`: a model's
        parameter names)."""
        if not keys.is_template(key):
            return False
        keyvars = self.scopes[-1].keyvars
        named = {found[1:-1] for found in keys.placeholders(key)}
        return (
            keys.too_generic(key)
            or key.startswith("{")
            or any(name in keyvars and not unseen(keyvars[name]) or self.is_param(name) for name in named)
        )

    def named_keys(self, names: ast.expr) -> Bag:
        """What a list of names zipped with values holds (`zip(NAMES, values)`): its bag, or the
        strings of a list of names the module binds (`LOSS_NAMES = ["loss/policy", ...]`), each
        written where the list is used."""
        found = self.bag(names)
        texts = None if found else strings.loop_values(names, self.collection)
        if not texts:
            return found
        span = self.span(names)
        return Bag(tuple(MetricsEntry(text, span, frozenset()) for text in texts))

    def _valued(self, names: Bag, value: ast.expr, unvalued_only: bool = False, again: tuple[CodeFact, ...] = ()) -> Bag:
        """A bag of names (`_records`, `named_keys`, a table's keys a loop puts under), each now
        holding `value`: what is put under it, or the values zipped with it. Its values' facts
        are not known one by one: none is given, so a fact of the whole (a stack of several
        reductions) is held against no key. A name with no value of its own (a table's key whose
        value is text, `{"kl1": "kl1_sum"}`, looped over to put `sums[total] / count` under
        each) holds the new one, and is a measurement where that is; with `unvalued_only`, only
        a name no value was put under anywhere (`for name, v in zip(names, values)` re-keyed as
        `f"loss/{name}"`), not a dict's entry a loop re-keys, whose value stays its own, unless
        the loop reduces it again (`again`: `_reducing`)."""
        measured = is_measurement(value)
        valued = []
        for entry in names.entries:
            if entry.value or unvalued_only and entry.span in self.valued:
                valued.append(entry)
                continue
            self.valued[entry.span] = value
            valued.append(entry if entry.measured or not measured else replace(entry, measured=True))
        found = names if valued == list(names.entries) else Bag(tuple(valued), names.held, names.items)
        return _measured(found, value, again)

    def _reducing(self, node: ast.DictComp) -> tuple[CodeFact, ...]:
        """The reductions a comprehension over a dict's items takes of each entry's value
        (`{k: sum(v) / len(v) for k, v in stats.items()}`, `np.mean(v)`); none where its value
        is the entry's own, reads none of it, or is chosen by a test (`a if c else b`)."""
        if len(node.generators) != 1 or type(node.value) in (ast.Name, ast.IfExp):
            return ()
        loop = node.generators[0]
        target, over = loop.target, loop.iter
        if not (type(target) is ast.Tuple and len(target.elts) == 2 and type(target.elts[1]) is ast.Name):
            return ()
        if not (type(over) is ast.Call and type(over.func) is ast.Attribute and over.func.attr == "items" and not over.args):
            return ()
        if target.elts[1].id not in read_names(node.value):
            return ()
        found = (a for a in self.roots(node.value) if type(a) is CodeFact and a.facet == "reduction")
        return tuple(sorted(found, key=lambda f: (f.value, f.span, f.origin)))  # one order for every run: Held options are compared

    def _comprehended(self, node: ast.DictComp) -> Bag:
        """`{f"train/{k}": v for k, v in stats.items()}`: `stats` re-keyed."""
        scope = self.scopes[-1]
        saved = (dict(scope.keyvars), dict(scope.strings))
        for generator in node.generators:
            self.loop_strings(generator.target, generator.iter, generator.ifs)
            self.iterated(generator.target, generator.iter)
            self.filtered(generator)
        found = self.entry(node.key, node.value, recorded=True, again=self._reducing(node))
        scope.keyvars, scope.strings = saved
        return found

    def loop_strings(self, target: ast.expr, iterated: ast.expr, guards: Sequence[ast.AST] = ()) -> None:
        """`for k in ["a", "b"]`, `for k in NAMES`, `for k, v in table.items()`, `for k in (1, 2, 4)`:
        k is one of them, as a key formats it; so is a record's field name (`_field_names`), where
        no test in the loop (`guards`: a comprehension's `if`s, a `for` loop's body) reads it."""
        if self._field_names(target, iterated, guards):
            return
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "items":
            if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
                return
            target = target.elts[0]
        elif isinstance(target, ast.Tuple):  # `for name, key in (("sglang_reqs", "reqs"), ...)`: each its column
            columns = strings.literal_columns(iterated, len(target.elts))
            for part, column in zip(target.elts, columns or ()):
                if isinstance(part, ast.Name):
                    self.scopes[-1].strings[part.id] = column
            return
        found = (
            strings.loop_values(iterated, self.collection) or strings.literal_numbers(iterated) or self._built_names(iterated)
            if isinstance(target, ast.Name)
            else None
        )
        if isinstance(target, ast.Name) and found:
            self.scopes[-1].strings[target.id] = found

    def _built_names(self, iterated: ast.expr) -> tuple[str, ...] | None:
        """`for prefix in (f"grad/{name}", f"param/{name}")`: the texts of a literal tuple or
        list of f-strings, each with its placeholders; None unless every item is one."""
        if not isinstance(iterated, (ast.Tuple, ast.List)) or not iterated.elts or not all(type(e) is ast.JoinedStr for e in iterated.elts):
            return None
        found = [text for item in iterated.elts for text in self._entry_keys(item)]
        return tuple(dict.fromkeys(found)) if found and len(found) <= keys.MAX_VALUES else None

    def _field_names(self, target: ast.expr, iterated: ast.expr, guards: Sequence[ast.AST]) -> bool:
        """A loop over the fields a record's class declares, a dataclass or a pydantic model of
        the module: `for f in fields(Stats)` (then `f.name`), `for name in [f.name for f in
        fields(self)]`, `for name in Stats.model_fields` (or its `.keys()`, `.items()`). The
        names are what the loop variable holds; whether the loop was one."""
        if type(iterated) is ast.Call and type(iterated.func) is ast.Attribute and iterated.func.attr in ("keys", "items"):
            iterated = iterated.func.value
            target = target.elts[0] if type(target) is ast.Tuple and target.elts else target
        if type(target) is not ast.Name:
            return False
        if isinstance(iterated, (ast.ListComp, ast.GeneratorExp)) and len(iterated.generators) == 1:
            found, name = self._listed_field_names(iterated), target.id
        elif type(iterated) is ast.Attribute and iterated.attr in dataclass_fields.FIELD_TABLES:
            found, name = self._record_fields(iterated.value), target.id
        else:
            found, name = self._record_fields(iterated, fields_call=True), f"{target.id}.name"
        if not found or any(target.id in read_names(test) for test in _tests(guards)):
            return False  # `if f.name in SKIPPED: continue`: which fields are left is not followed
        self.scopes[-1].strings[name] = found
        return True

    def _listed_field_names(self, node: ast.ListComp | ast.GeneratorExp) -> tuple[str, ...] | None:
        """`[f.name for f in fields(Stats)]`: the field names; None for another comprehension."""
        loop, listed = node.generators[0], node.elt
        if loop.ifs or not isinstance(loop.target, ast.Name):
            return None
        if not (isinstance(listed, ast.Attribute) and listed.attr == "name" and isinstance(listed.value, ast.Name)):
            return None
        return self._record_fields(loop.iter, fields_call=True) if listed.value.id == loop.target.id else None

    def _record_fields(self, node: ast.expr, fields_call: bool = False) -> tuple[str, ...] | None:
        """The field names of the record `node` is (`fields_call`: `node` is `fields(record)`):
        a class of the module, `self` or `type(self)` in its method, an object of such a class."""
        if fields_call:
            if not (
                type(node) is ast.Call
                and len(node.args) == 1
                and called_name(node.func) == "fields"
                and self.code.chain(node.func, {}) in dataclass_fields.FIELDS
            ):
                return None
            node = node.args[0]
        if type(node) is ast.Call and called_name(node.func) == "type" and len(node.args) == 1:
            node = node.args[0]
        if type(node) is not ast.Name:
            return None
        if node.id == "self" and self.class_nodes and len(self.scopes) == 2:
            found: ast.ClassDef | None = self.class_nodes[-1]
        else:
            made = self.instance(node.id)
            own = f"{self.code.module}."
            name = made[len(own) :] if made is not None and made.startswith(own) else node.id
            found = self.module_classes.get(name)
        return dataclass_fields.names(found, self.code.import_path) or None if found is not None else None

    def iterated(self, target: ast.expr, iterated: ast.expr) -> None:
        """`for k, v in stats.items()`, `for k in stats`, `for name, value, step in records`,
        `for i, name in enumerate(names)`, `for name, t in zip(names, times)`: `k` (`name`) is
        the key of each of that bag's entries, inside the loop."""
        over, key, zipped, keyed = unwrapped(iterated), target, False, False
        if isinstance(over, ast.Call) and called_name(over.func) == "enumerate" and over.args:
            over, key = unwrapped(over.args[0]), key.elts[1] if isinstance(key, ast.Tuple) and len(key.elts) == 2 else None  # type: ignore[assignment]
        elif isinstance(over, ast.Call) and called_name(over.func) == "zip" and over.args:
            over, zipped = unwrapped(over.args[0]), True
        elif isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute) and over.func.attr in ("items", "keys") and not over.args:
            over, keyed = over.func.value, True
        item: ast.Name | None = key if isinstance(key, ast.Name) and not (zipped or keyed) else None  # what the loop binds to each element
        if keyed and isinstance(key, ast.Tuple) and len(key.elts) == 2 and isinstance(key.elts[1], ast.Name):
            item = key.elts[1]  # `for name, stats in by_name.items()`: the value, were it one of the dict's dicts
        if isinstance(key, ast.Tuple):
            key = key.elts[0] if key.elts else None  # type: ignore[assignment]
        if not isinstance(key, ast.Name):
            return
        scope = self.scopes[-1]
        if scope.family_tables or scope.family_dicts or scope.family_keys:
            self._family_loop(over if keyed else None, item, key)
        listed = _union_of_keys(over)
        if listed is not None:  # `for k in set().union(*(s.keys() for s in rows))`: any key of one of the list's dicts
            found = selected(self.bag(listed), (LISTED,))
        else:
            found = self.named_keys(over) if zipped else self.read_as_dict(over) if keyed else self.bag(over)
        element = selected(found, (LISTED,)) if found and item is not None else EMPTY
        if element and item is not None:  # `for row in rows`: each of a list's dicts, were the loop's item one
            scope.bags[item.id] = element
        if found:
            scope.keyvars[key.id] = found
        else:
            scope.keyvars.pop(key.id, None)

    def _family_loop(self, over: ast.expr | None, item: ast.Name | None, key: ast.Name) -> None:
        """`for family, by_module in table.items()` over a TypedDict of families (annotated.py)
        binds each family's dict; `for module, v in by_module.items()` then binds the names made
        at run time under a declared family, which a key built from both is (`names_family`)."""
        scope = self.scopes[-1]
        over_name = over.id if isinstance(over, ast.Name) else None
        if item is not None:
            _kept(scope.family_dicts, item.id, over_name in scope.family_tables)
        _kept(scope.family_keys, key.id, over_name in scope.family_dicts)

    def copies(self, node: ast.Call) -> bool:
        """Whether a call returns a dict of what it is handed, read where it is called (`x =
        dict(x)` reads the old `x`): a copy, a cast, a leaf-by-leaf map, a TypedDict's call."""
        name = called_name(node.func)
        return name in COPIES or self.cast_value(node) is not None or self.mapped_collection(node) is not None or self.typed_dict(node)

    def mapped_collection(self, node: ast.Call) -> ast.expr | None:
        """The collection a call maps leaf by leaf and returns in the same shape (`tree_map(f,
        stats)`: `stats`, rules/dataflow.yaml `mapped`); None for any other call."""
        name = called_name(node.func)
        at = 0 if name in self.rules.mapped_first else 1 if name in self.rules.mapped_second else None
        if at is None or len(node.args) <= at or type(node.args[at]) is ast.Starred:
            return None
        return node.args[at]

    def cast_value(self, node: ast.Call) -> ast.expr | None:
        """The value `typing.cast(T, value)` hands back as it is; None for any other call."""
        if called_name(node.func) == "cast" and len(node.args) == 2 and self.code.chain(node.func, {}) in _CASTS:
            return node.args[1]
        return None

    def typed_dict(self, node: ast.Call) -> bool:
        """`Stats(loss=loss)` of a TypedDict of the module: a dict of its keywords."""
        return type(node.func) is ast.Name and node.func.id in self.typed_dicts

    def _called(self, node: ast.Call) -> Bag:
        """`dict(stats, lr=lr)`, `Stats(loss=loss)` of a TypedDict, `stats.copy()`,
        `deepcopy(stats)`, `cast(dict, stats)`, `out.get("metrics")`, `out.cpu()`, or what a project call returns, with the dicts it packs (`_packed`)."""
        func, name = node.func, called_name(node.func)
        if name == "zip" and len(node.args) == 2 and not node.keywords:
            return self._valued(self.named_keys(node.args[0]), node.args[1])  # `dict(zip(names, values))`
        cast = self.cast_value(node)
        if cast is None:
            cast = self.mapped_collection(node)
        if cast is not None:
            return self.bag(cast)
        record = self._as_dict(node) if name in _AS_DICT_NAMES else None
        if record is not None and (own := self._own_fields(record)):
            return own  # `asdict(self)` in a method of a dataclass
        if name in COPIES or self.typed_dict(node):
            given = arguments(node)
            found = self.bag(func.value) if isinstance(func, ast.Attribute) and name == "copy" and not given else self.given_bag(given)
            if found:
                return found | packed(node, self.bag, literal=name == "dict")  # `Info(logs=losses)`: `losses` as its item "logs"
        result = self._result_bags.get(id(node))
        if result is None:  # made once per call: a name bound to its result is read each time it is used
            self._result_bags[id(node)] = EMPTY  # `x = x.cpu()`: reading x reads this call again
            result = self._returned(node)
            if self.record_classes:
                result |= self._record(node)
            if record is not None:
                result |= self._record_read(record)
            self._result_bags[id(node)] = result
        return result

    def module_dict(self, name: str) -> str | None:
        """`module.NAME` for a dict the module binds at its top level (`REGISTRY = {}`), read or
        filled in one of its functions, not hidden by a local: what any function puts in it is
        there for every other, as a class's attribute is for its methods (model.Held "attribute")."""
        if len(self.scopes) < 2 or name in self.scopes[-1].carries or self.is_param(name):
            return None
        if self._module_dicts is None:
            self._module_dicts = module_dicts(self.tree.body)
        return f"{self.module}.{name}" if name in self._module_dicts else None

    def function_of(self, value: ast.expr) -> str | None:
        """The function of the project that a value is, not a call of it: its name (a function of
        the module, one it imports, one defined in the body the walk is in or one around it),
        bound with some arguments (`partial(f, k=v)`, rules/dataflow.yaml `binds`), or the one
        a choice names (`score_fn or default_scores`, `f if fast else g`: the first the code
        names; a parameter's is the caller's). Dotted as FunctionFlow names it."""
        if type(value) is ast.Name:
            name = value.id
            if not name[:1].islower() or name in self.scopes[-1].params:
                return None
            for scope in reversed(self.scopes[1:]):
                if name in scope.defs:
                    return scope.defs[name]
            return self.code.callee(value, []) if name in self.code.defined or name in self.code.imports else None
        if isinstance(value, ast.Call) and binding(value, self.rules.binds):
            return self.function_of(value.args[0])
        choices = value.values if type(value) is ast.BoolOp else (value.body, value.orelse) if type(value) is ast.IfExp else ()
        return next((found for choice in choices if (found := self.function_of(choice)) is not None), None)

    def _function_value(self, node: ast.Name) -> Bag:
        """A function named as a value (`run(step_fn=forward)`), for a callee that calls it: what
        it returns is what the call of it returns (model.FUNCTION)."""
        function = self.function_of(node)
        return self._one(FUNCTION, function) if function is not None else EMPTY

    def _invoked(self, node: ast.Call) -> Bag:
        """What calling a value returns, where the value is no function the file names but one
        handed in or kept: a parameter (`loss_fn(out)`), a name bound to what another call
        returned (`loss_fn = get_loss_fn(name)`, whose call roots.py `site` also names) or to
        part of it (`finish(out)` after `out, finish = step_fn(batch)`), or an attribute the
        class's methods may set to a function (`self.loss_fn(out)`, kept_values.py
        `callables`), not to an object; the project-wide step finds the functions
        (model.INVOKED), each read for this call (model.Held `call`)."""
        func, call = node.func, self.span(node)
        if type(func) is ast.Name:
            scope = self.scopes[-1]
            if func.id in scope.results:  # its call's: what it returns is read for that call (`_at_call`)
                return selected(self.bag(func), (INVOKED,))
            held = func.id in scope.bags or self.is_param(func.id)
            return _at_call(selected(self.bag(func), (INVOKED,)), call) if held else EMPTY
        attribute = self._attribute(func)
        if attribute is None:
            return EMPTY
        owner, name = attribute.rsplit(".", 1)
        if name not in self.kept[-1].callables or name in self.attribute_types.get(owner, ()):
            return EMPTY  # a method, or an attribute set to an object (`self.model(batch)`)
        return Bag(held=(Held("attribute", attribute, call=call, item=(INVOKED,)),))

    def _enclosing(self, name: str) -> Bag:
        """What a closure reads from the function it is defined in (`metrics = start()`, then
        `def finalize(): success(metrics)`): that function's dict, where the closure is defined.
        Not what a caller passes that function: the closure has no caller of its own to say."""
        for scope in reversed(self.scopes[1:-1]):
            if name in scope.bags or name in scope.results:
                found = scope.bags.get(name) or self._result(scope.results.get(name))
                return Bag(found.entries, tuple(h for h in found.held if h.kind != "param"), found.items)
            if name in scope.carries or name in scope.params:
                return EMPTY
        return EMPTY

    def _own_fields(self, given: ast.expr) -> Bag:
        """`asdict(self)` in a method of a dataclass: each of its fields under its own name."""
        if not (isinstance(given, ast.Name) and given.id == "self" and self.class_nodes and len(self.scopes) == 2):
            return EMPTY
        found = dataclass_fields.fields(self.class_nodes[-1], self.code.import_path)
        return Bag(tuple(MetricsEntry(target.id, self.span(target), frozenset(), measured) for target, measured in found))

    def _record(self, node: ast.Call) -> Bag:
        """`Stats(loss, lr=lr)` of a record class of the module: each field under its own name,
        holding what the call passes for it (by position in the order declared, or by keyword),
        kept as the object's RECORD item for what turns it into a dict (`asdict(stats)`). A
        field the call leaves to its default is a key all the same, written where the call is.
        EMPTY for any other call."""
        fields = self.record_classes.get(node.func.id) if type(node.func) is ast.Name else None
        if not fields:
            return EMPTY
        given: dict[str, ast.expr] = dict(zip(fields, itertools.takewhile(lambda a: type(a) is not ast.Starred, node.args)))
        given |= {k.arg: k.value for k in node.keywords if k.arg in fields}
        entries = []
        for field in fields:
            value = given.get(field)
            span = self.span(value if value is not None else node)
            if value is not None:
                self.valued[span] = value
            held = self.logged(value) if value is not None else frozenset()
            entries.append(
                MetricsEntry(field, span, held, value is not None and is_measurement(value), self.names(value) if value is not None else ())
            )
        return under(RECORD, Bag(tuple(entries)))

    def _as_dict(self, node: ast.Call) -> ast.expr | None:
        """The record a call turns into a dict of its fields: `asdict(stats)`, `stats._asdict()`,
        `stats.model_dump()`; None for any other call."""
        func = node.func
        if type(func) is ast.Attribute and func.attr in dataclass_fields.AS_DICT_METHODS and not node.args:
            return func.value
        if called_name(func) == "asdict" and len(node.args) == 1 and self.code.chain(func, {}) in dataclass_fields.AS_DICT:
            return node.args[0]
        return None

    def _record_read(self, record: ast.expr) -> Bag:
        """The fields of the record a call turns into a dict (`_as_dict`), made here or returned
        by a call (`_record`), besides what a method of that name of the project returns; not
        of one a caller passes, which this function does not make its own dict of metrics (a
        framework's `asdict(v)` of the hyperparameters it is handed)."""
        found = selected(self.bag(record), (RECORD,))
        return Bag(found.entries, tuple(h for h in found.held if h.kind != "param"), found.items) if found.held else found

    def _returned(self, node: ast.Call) -> Bag:
        if binding(node, self.rules.binds):  # `partial(loss_fn, cfg)`: the function, whichever it is
            return self.bag(node.args[0])  # read once, here: `f = partial(f, cfg)` reads `f` again
        func = node.func
        name = called_name(func)
        if node.args and name in self._fetch_names and self.code.chain(func, {}) in self.rules.fetches:
            return self.bag(node.args[0])  # `ray.get(ref)`: what the remote call returned
        gathers = self.rules.gathers
        if any(word in name for word in gathers) and any(word in name.split("_") for word in gathers):  # not `reduce_gathered`
            # and what the call returns, should it be the project's own (`self.model.gather(outputs)`)
            return self.gathered_list(node) | self._made(node)
        return self._made(node)

    def _made(self, node: ast.Call) -> Bag:
        """What a call returns, besides a fetch's or a gather's own reading (_returned): its
        object for a method that hands it back, an item it reads, or a remote or project call's
        result for the project-wide step, with the dicts it packs."""
        func = node.func
        if isinstance(func, ast.Attribute):
            awaited = self.bag(func.value) if not node.args and func.attr in self.rules.results else EMPTY
            if awaited:  # `out.get()`: what the call `out` stands for returns
                return awaited
            if node.args and func.attr in ITEM_READS:
                key = self._read_key(node.args[0])
                if key is not None:
                    return self._item(func.value, (key,))
            if func.attr in self.rules.preserving_methods or (
                func.attr == "keys" and not node.args and self._attribute(func.value) is None
            ):
                # `out.cpu()`: the same object; `names = stats.keys()`, iterated as it is. Not a
                # class's attribute's keys: its methods put entries in it under keys their
                # callers name (`self.stats[name] = ...`), which a list of them does not tell apart
                return self.bag(func.value)
            dispatched = remote_method(func, self.rules.remote_calls) or self._remote_by_name(func)
            if dispatched is not None:
                return Bag(held=(Held("result", dispatched, call=self.span(node)),))
        invoked = self._invoked(node)
        if invoked and type(func) is ast.Name and func.id not in self.scopes[-1].results:
            return invoked  # a parameter's name, a local's: no function of the module
        callee = self.site(node).callee or self._object_method(node)
        passed = passed_keywords(node)
        options = HeldOptions(passed=passed, positional=len(node.args)) if passed or node.args else None
        found = Bag(held=(Held("result", callee, call=self.span(node), options=options),)) if callee else EMPTY
        found |= invoked
        return found | packed(node, self.bag) if node.keywords else found

    def _remote_by_name(self, func: ast.Attribute) -> str | None:
        """`getattr(handle, name).remote(...)`, or `method.remote(...)` after `method =
        getattr(handle, name)`: the remote call of the method a string names, written out or a
        parameter (`def run_each(self, method_name, *args)`) whose callers' strings the
        project-wide step puts in its placeholder (evidence/logged_bags.py `_sources`)."""
        if func.attr not in self.rules.remote_calls:
            return None
        named: ast.expr | None = func.value
        if type(named) is ast.Name and not self.is_param(named.id):
            named = self.scopes[-1].results.get(named.id)
        if not looked_up(named):
            return None
        name = named.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return f"{REMOTE_CALL}{name.value}"
        return f"{REMOTE_CALL}{{{name.id}}}" if type(name) is ast.Name and self.is_param(name.id) else None

    def _read_key(self, key: ast.expr) -> str | None:
        """The item a dict's `get` or `pop` reads: a string written out, or a parameter of the
        function as a placeholder (`table.get(key)` in `def fetch(table, key)`), which the
        project-wide step fills with what a caller passes for it (`fetch(out, "metrics")`)."""
        if type(key) is ast.Name and self.is_param(key.id):
            return f"{{{key.id}}}"
        return item_key(key)

    def _object_method(self, node: ast.Call) -> str:
        """The method an object no file names is called for (`?.to_scalars`), where its result
        is read as a dict: the walk follows such a call only when it is handed a dict
        (roots.py `site`), but what it returns may be one (`rates = record.to_scalars()`), and
        the project-wide step finds the methods when a few classes define one (callees.py)."""
        if not isinstance(node.func, ast.Attribute):
            return ""
        callee = self.code.callee(node.func, self.classes, self.scopes[-1].known)
        return callee if callee is not None and callee.startswith(UNKNOWN_OBJECT) else ""

    def argument_bags(self, node: ast.Call, given: list[Argument] | None = None) -> tuple[tuple[int | str, Bag], ...]:
        """The dicts of metrics each argument holds, for a callee that logs them: read once,
        where the walk first meets the call (in `x = f(x)`, before `x` is rebound). `given`:
        the call's `arguments`, where the caller has them already."""
        found = self.call_bags.get(id(node))
        if found is None:
            found = self.call_bags[id(node)] = self._argument_bags(arguments(node) if given is None else given)
        return found

    def _argument_bags(self, given: list[Argument]) -> tuple[tuple[int | str, Bag], ...]:
        found: list[tuple[int | str, Bag]] = []
        positional = True
        for position, arg in enumerate(given):
            if arg.star and positional and arg.where is None:  # `*parts`
                found += self._spread(position, arg.value)
            elif arg.star and arg.where is not None and isinstance(arg.value, _BAGGED) and (held := self.bag(arg.value)):
                found.append((KEYWORDS, held))  # `log(step, **stats)`: each entry a keyword
            positional = positional and not arg.star
            if not arg.star and (arg.keyword or positional) and isinstance(arg.value, _BAGGED):
                held = self.bag(arg.value)
                if held:
                    found.append((arg.keyword or position, held))
        return tuple(found)

    def _spread(self, position: int, value: ast.expr) -> list[tuple[int | str, Bag]]:
        """`bookkeep(*last)`, where `last` holds a tuple a call returned: its elements, from the
        starred argument's position on, each as the dict its element holds (bag_items.element)."""
        held = self.bag(value) if isinstance(value, _BAGGED) else EMPTY
        if not held and isinstance(value, ast.Name):
            held = self._result(self.scopes[-1].results.get(value.id))  # `last = self.forward()`
        parts = ((position + i, selected(held, (element(i),))) for i in range(_SPREAD)) if held else ()
        return [(at, part) for at, part in parts if part]

    def given_bag(self, given: list[Argument], as_dict: bool = False) -> Bag:
        """What a call's arguments hold: its dicts, and each keyword as a key (`dict(a, lr=lr)`);
        `as_dict`: each positional one is read as a dict (`d.update(out.meta)`: `read_as_dict`),
        not maybe as a list (`set(run.names)`)."""
        found = EMPTY
        for arg in given:
            if arg.keyword is None:
                found |= self.read_as_dict(arg.value) if as_dict else self.bag(arg.value)
            elif not arg.star and arg.where is not None:
                line, column = self.text.start(arg.where)
                span = Span(self.path, line, column + 1, line, column + 1 + len(arg.keyword))
                self.valued[span] = arg.value
                found |= Bag((MetricsEntry(arg.keyword, span, self.roots(arg.value), is_measurement(arg.value), self.names(arg.value)),))
        return found

    def _result(self, call: ast.Call | None) -> Bag:
        return self._called(call) if call is not None else EMPTY

    def _one(self, kind: str, name: str) -> Bag:
        """The bag of one parameter's or attribute's dict, made once per file: every call that
        hands a parameter on asks for it."""
        found = self._held_bags.get((kind, name))
        if found is None:
            found = self._held_bags[(kind, name)] = Bag(held=(Held(kind, name),))
        return found

    def rebound_part(self, key: str) -> bool:
        """Whether a key names a parameter the function has bound again to what is not known
        (`prefix = f"{prefix}/{self.name}" if prefix else self.name`): its placeholder is no
        longer what a caller passes, and filling it so would make a key nothing logs."""
        scope = self.scopes[-1]
        if "{" not in key or not scope.rebound_params:
            return False
        return any(
            (name := found[1:-1]) in scope.rebound_params and name not in scope.strings and name not in scope.keyvars
            for found in keys.placeholders(key)
        )

    def is_param(self, name: str) -> bool:
        """Whether `name` still holds what the function's caller passed for it."""
        scope = self.scopes[-1]
        return name in scope.params and name not in scope.carries and name not in ("self", "cls")

    def _attribute(self, node: ast.expr) -> str | None:
        """`self.stats` in a method: the class's attribute, as module.Class.stats."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and self.classes:
            return ".".join((self.module, *self.classes, node.attr))
        return None


def _loops(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """Each loop and comprehension of the function: its first and last line, the names it binds."""
    found = []
    for loop in ast.walk(function):
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            targets = [loop.target]
        elif isinstance(loop, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            targets = [generator.target for generator in loop.generators]
        else:
            continue
        names = frozenset(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        found.append((loop.lineno, loop.end_lineno or loop.lineno, names))
    return tuple(found)


def _cut(key: ast.expr, name: str) -> bool:
    """Whether a key formats a part of the loop's key, not the key itself (`f"kl/{k[6:]}"`,
    `f"kl/{k.split('/')[-1]}"`): the other dict's keys are not what it writes. A str method
    that rewrites the whole key (`k.removeprefix("actor/")`, `k.lower()`) writes each of them
    rewritten (`_loop_rekeyed`)."""
    parts = key.values if type(key) is ast.JoinedStr else ()
    return any(
        type(part) is ast.FormattedValue
        and not _is_name(part.value, name)
        and not _rewrites_name(part.value, name)
        and any(type(n) is ast.Name and n.id == name for n in ast.walk(part.value))
        for part in parts
    )


def _rewrites_name(node: ast.expr, name: str) -> bool:
    return bool(_rewrites_of(node, name, nested=False))


def _rewrites_of(key: ast.expr, name: str, nested: bool = True) -> tuple[keys.Rewrite, ...]:
    """The str methods `key` rewrites the name with (`k.replace(" ", "_")`), in the order they
    run: where `key` is that call, or with `nested` where it holds one; () where it holds none."""
    for node in ast.walk(key) if nested else (key,):
        found = strings.rewrites(node) if type(node) is ast.Call else None
        if found is not None and _is_name(found[0], name):
            return found[1]
    return ()


def module_dicts(body: list[ast.stmt]) -> frozenset[str]:
    """The names a module binds at its top level to a dict: `{}`, `dict()`, `defaultdict(...)`."""
    found: set[str] = set()
    for statement in body:
        value: ast.expr | None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        else:
            continue
        if isinstance(value, ast.Dict) or isinstance(value, ast.Call) and called_name(value.func) in DICT_MAKERS:
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(found)


def _at_call(bag: Bag, call: Span) -> Bag:
    """What calling a value returns (INVOKED), each Held of it read for the call that calls it
    (a parameter's, a local's part of what a call of a parameter returned); one that is a
    call's result already keeps that call."""
    held = tuple(h if h.call is not None else replace(h, call=call) for h in bag.held)
    return Bag(bag.entries, held, bag.items)


def _measured(bag: Bag, value: ast.expr, over: tuple[CodeFact, ...]) -> Bag:
    """`bag` re-keyed or re-valued by a comprehension whose value is a measurement made of each
    entry's (`np.mean(v)`, `float(v)`; not `v` itself): its entries, and what it holds of
    elsewhere (model.Held `measured`), are logged as that measurement, whatever they were where
    they were put (a list per sample), reduced again by `over` (model.reduced_again)."""
    if type(value) is ast.Name or not is_measurement(value):
        return bag
    if not over and all(e.measured for e in bag.entries) and all(h.opts.measured for h in bag.held):
        return bag
    entries = tuple(replace(e, measured=True, value=reduced_again(e.value, over)) if over or not e.measured else e for e in bag.entries)
    held = tuple(h.with_options(measured=True, over=over) if over or not h.opts.measured else h for h in bag.held)
    return Bag(entries, held, bag.items)


def _union_of_keys(node: ast.expr) -> ast.expr | None:
    """The list in `set().union(*(s.keys() for s in rows))` (or `set.union(*[set(s) for s in
    rows])`): the keys of all its dicts; None for any other expression."""
    if not (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "union" and len(node.args) == 1):
        return None
    spread = node.args[0]
    each = spread.value if type(spread) is ast.Starred else None
    if not isinstance(each, (ast.GeneratorExp, ast.ListComp)) or len(each.generators) != 1:
        return None
    loop = each.generators[0]
    if type(loop.target) is not ast.Name or loop.ifs:
        return None
    element = each.elt
    while (
        type(element) is ast.Call
        and not element.keywords
        and (
            called_name(element.func) == "set"
            and len(element.args) == 1
            or type(element.func) is ast.Attribute
            and element.func.attr == "keys"
            and not element.args
        )
    ):
        element = element.args[0] if element.args else element.func.value  # type: ignore[attr-defined]
    return loop.iter if type(element) is ast.Name and element.id == loop.target.id else None


def _tests(guards: Sequence[ast.AST]) -> Iterator[ast.expr]:
    """The tests among a loop's `guards`: a comprehension's `if`s themselves, the `if`s of a
    `for` loop's body at any depth."""
    for guard in guards:
        if isinstance(guard, ast.expr):
            yield guard
        else:
            yield from (node.test for node in ast.walk(guard) if isinstance(node, ast.If))


def _record_made(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """(key, value) of a record object made with its key first, as a tuple record is written:
    `Scalar("train/loss", loss)`, `Metric(f"timers/{name}", Mean(t))`. A class's call (its name
    in CapWords, PEP 8) with a string or a string built from parts first and a second argument;
    where a loop over a list of them reads a field as a key (`{s.tag: s.value for s in
    scalars}`), that field is the first (`_record_field`). None for any other item."""
    if type(node) is not ast.Call or len(node.args) < 2 or any(type(a) is ast.Starred for a in node.args[:2]):
        return None
    key = node.args[0]
    written = type(key) is ast.JoinedStr or (type(key) is ast.Constant and isinstance(key.value, str))
    return (key, node.args[1]) if class_like(called_name(node.func)) and written else None


def _kept(names: set[str], name: str, keep: bool) -> None:
    """`name` in `names` if `keep`, else not."""
    if keep:
        names.add(name)
    else:
        names.discard(name)


def _is_name(node: ast.expr, name: str) -> bool:
    return type(node) is ast.Name and node.id == name
