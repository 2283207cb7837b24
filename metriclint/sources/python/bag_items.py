"""Dicts of metrics inside other values, for the walk (sources/python/bags.py): a dict held
under a key of another (`{"metrics": stats}`), packed by a call under a keyword
(`Reply(meta={"metrics": stats})`), read back by its path (`out.meta["metrics"]`,
`out.get("metrics")`) from what a call returns, and a call through a handle's `.remote`, which
the project-wide step answers with the methods of the classes whose methods run elsewhere."""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.model import INVOKED, REMOTE_CALL, UNKNOWN_OBJECT, Bag, Held, Item
from metriclint.sources.python import strings
from metriclint.sources.python.call_names import arguments, binding, called_name
from metriclint.sources.python.roots import ValueReader

# Methods that read one item of a dict by its key (`out.get("metrics")`, `out.pop("metrics", {})`).
ITEM_READS = frozenset({"get", "pop"})
EMPTY = Bag()


def left_out(bag: Bag, names: tuple[str, ...]) -> Bag:
    """The bag less the entries under `names`, here and in what it holds of elsewhere."""
    entries = tuple(e for e in bag.entries if e.key not in names)
    return Bag(entries, tuple(h.with_options(without=h.opts.without + names) for h in bag.held), bag.items)


def popped(bag: Bag, names: tuple[str, ...]) -> Bag:
    """The bag less the entries under `names` as it holds them: in what it holds of elsewhere
    under a key made from the other's (`train/{}`), the key that one has for it (`loss` for
    `train/loss`); one re-keyed by a text only known where it runs (`{prefix}/{}`) is left whole."""
    held = []
    for h in bag.held:
        before, _, after = h.rekey.partition("{}")
        inner = (
            names
            if h.rekey == "{}"
            else tuple(
                n[len(before) : len(n) - len(after)]
                for n in names
                if n.startswith(before) and n.endswith(after) and len(n) > len(before) + len(after)
            )
        )
        held.append(h.with_options(without=h.opts.without + inner) if inner and "{" not in before + after else h)
    return Bag(tuple(e for e in bag.entries if e.key not in names), tuple(held), bag.items)


def kept_only(bag: Bag, names: tuple[str, ...]) -> Bag:
    """The bag's entries under `names`, here and in what it holds of elsewhere."""
    kept = [(h, tuple(n for n in names if not h.opts.only or n in h.opts.only)) for h in bag.held]
    return Bag(tuple(e for e in bag.entries if e.key in names), tuple(h.with_options(only=only) for h, only in kept if only), bag.items)


def starting(bag: Bag, prefixes: tuple[str, ...]) -> Bag:
    """The bag's entries whose keys start with one of `prefixes`, here and in what it holds of
    elsewhere (`if k.startswith(("train/", "eval/"))`)."""
    held = []
    for h in bag.held:
        starts = (
            prefixes
            if not h.opts.starts
            else tuple(p for p in prefixes if p.startswith(h.opts.starts)) + tuple(s for s in h.opts.starts if s.startswith(prefixes))
        )
        if starts:
            held.append(h.with_options(starts=starts))
    return Bag(tuple(e for e in bag.entries if e.key.startswith(prefixes)), tuple(held), bag.items)


def selected(bag: Bag, path: tuple[str, ...]) -> Bag:
    """The dicts `bag` holds at `path` (`out.meta["metrics"]`: ("meta", "metrics")): its items
    of that name, and the same item of what a call returns, which the project-wide step finds.
    Only what a call returns or a caller passes is followed so, and a class's attribute: one of
    its dicts indexed by a variable (`self.stats[mode]`, whose entries its methods put through
    the same kind of index: bag_puts.py `put`), or its item by key (`self.logs["train"]`, which
    `self.logs["train"]["kl"] = v` in another method puts in). What calling a value returns
    (INVOKED) is followed for any value, and so is any item of it."""
    found, size = EMPTY, len(path)
    for item in bag.items:
        if item.keys == path:
            found |= Bag(item.entries, item.held)
        elif item.keys[:size] == path:
            found |= Bag(items=(Item(item.keys[size:], item.entries, item.held),))
    held = tuple(
        h.at(path)
        for h in bag.held
        if h.rekey == "{}" and (h.kind in ("result", "param") or h.kind == "attribute" and not h.item or INVOKED in (path[0], *h.item[:1]))
    )
    return found | Bag(held=held) if held else found


def unseen(bag: Bag) -> bool:
    """Only items of dicts of elsewhere (`for key in out["losses"]`): mostly data filled at run
    time (a dict of datasets, of losses), so a key built over its keys stays a template too; so
    does one over what a method of an object no file names returns (`response.metrics()`),
    which the project-wide step finds only when a few classes define a method of its name. One
    of the dicts of a class's attribute (`self.stats[mode]`) is seen: its methods put its keys."""
    return not (bag.entries or bag.items) and all(
        (h.item and h.kind != "attribute") or (h.kind == "result" and h.name.startswith(UNKNOWN_OBJECT)) for h in bag.held
    )


def under(name: str, bag: Bag) -> Bag:
    """`bag` as the item `name` of a dict that holds it."""
    items = (Item((name,), bag.entries, bag.held),) if bag.entries or bag.held else ()
    return Bag(items=items + tuple(Item((name, *i.keys), i.entries, i.held) for i in bag.items))


def element(index: int) -> str:
    """The item a tuple's element is kept as (`return batches, stats`: "#1" is `stats`)."""
    return f"#{index}"


# The item a list of dicts keeps its dicts' entries as (`rows.append(stats)`), which a loop over
# it (`for row in rows`) or an index (`rows[0]`) selects: one item for every element, since a
# list's dicts are put in one at a time and read back one at a time.
LISTED = "[]"
# The item a record of the module keeps its fields as (`stats = Stats(loss=loss)`), which what
# turns the record into a dict (`asdict(stats)`, `stats._asdict()`) selects: an object is no dict
# of metrics until then. Its "(" keeps it from being read as a nested dict's key (code_flow `flattened`).
RECORD = "(fields)"


# What an element of a list may be written as to be a dict of metrics: a name, a dict, what a
# call returns (`rows.append(worker.report())`), an item of another dict.
LIST_ITEMS = (ast.Name, ast.Dict, ast.DictComp, ast.Call, ast.Subscript, ast.Await)


def indexes(node: ast.expr) -> bool:
    """Whether a subscript's index picks an element of a list: a number, from the end too
    (`rows[-1]`), or a name (`rows[i]`)."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        node = node.operand
    return (type(node) is ast.Constant and type(node.value) is int) or type(node) is ast.Name


def reads(node: ast.expr, name: str) -> bool:
    """Whether `node` is `name` or an item or attribute of it (`out`, `out["metrics"]`, `out.meta`)."""
    while type(node) is ast.Subscript or type(node) is ast.Attribute:
        node = node.value
    return type(node) is ast.Name and node.id == name


def item_key(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


# What a value in a dict literal may be written as to be a dict (or a list of dicts) of its own.
_NESTED = (ast.Name, ast.Dict, ast.DictComp, ast.Attribute, ast.Call, ast.ListComp)


def nested(key: ast.expr, value: ast.expr, bag: Callable[[ast.expr], Bag]) -> Bag:
    """`{"metrics": stats}`, `{"reports": ray.get(refs)}`: the dict (or list of dicts) as the
    item "metrics", for a reader that selects it (`selected`); nothing when the key is no
    string or the value no dict."""
    name = item_key(key)
    return nested_under(name, value, bag) if name is not None else EMPTY


def nested_under(name: str, value: ast.expr, bag: Callable[[ast.expr], Bag]) -> Bag:
    """`value` as the item `name` of the dict that holds it (`nested`). A dict written out whose
    keys are not known here (`{str(i): q for i, q in enumerate(qs)}`) is still an item, with
    none: a reader that flattens nested dicts (model.flattened) knows its key names no value."""
    if not isinstance(value, _NESTED):
        return EMPTY
    inner = bag(value)
    if inner:
        return under(name, inner)
    written = (
        isinstance(value, (ast.Dict, ast.DictComp)) or type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "dict"
    )
    return Bag(items=(Item((name,)),)) if written else EMPTY


def packed(node: ast.Call, bag: Callable[[ast.expr], Bag], literal: bool = False) -> Bag:
    """The dicts a call packs into what it makes, under their keywords (`Output(meta={"metrics":
    stats})`, `make(extra={"metrics": stats})`); a dict written as a keyword's value gives its
    items as the result's own too, whatever the keyword (`out["metrics"]` of `make(extra=
    {"metrics": stats})`), since a maker that takes several dicts keeps their items side by side.
    `literal`: the call is `dict(...)`, a dict literal written as a call, whose keywords hold
    what a literal's keys do (`dict(values=summarize(v))`, `nested_under`)."""
    found = EMPTY
    for keyword in node.keywords:
        if keyword.arg is None:
            continue
        if literal:  # a call's value only where it may be a dict: a function's, the object's own method's (`.item()` is none)
            if type(keyword.value) is not ast.Call or _own_call(keyword.value):
                found |= nested_under(keyword.arg, keyword.value, bag)
            continue
        if not isinstance(keyword.value, (ast.Name, ast.Dict)):
            continue
        inner = bag(keyword.value)
        if inner:
            found |= under(keyword.arg, inner) | (Bag(items=inner.items) if isinstance(keyword.value, ast.Dict) else EMPTY)
    return found


def remote_method(func: ast.Attribute, remote_calls: frozenset[str]) -> str | None:
    """`handle.update.remote(batch)`: a call of the method `update` of whatever class the
    handle runs elsewhere (rules/dataflow.yaml `dispatch`), as evidence/callees.py finds it."""
    if func.attr in remote_calls and isinstance(func.value, ast.Attribute):
        return f"{REMOTE_CALL}{func.value.attr}"
    return None


def unwrapped(node: ast.expr) -> ast.expr:
    """What `sorted(x)`, `list(x)` or `reversed(x)` iterate over in the same order or another."""
    while isinstance(node, ast.Call) and called_name(node.func) in ("sorted", "list", "reversed", "tuple") and node.args:
        node = node.args[0]
    return node


# Calls that make a dict.
DICT_MAKERS = frozenset({"dict", "defaultdict", "OrderedDict"})


def container(node: ast.expr) -> bool:
    """`{}`, `[]`, `dict()`, `defaultdict(list)`, `OrderedDict()`: a dict or list made empty."""
    if isinstance(node, (ast.Dict, ast.List)):
        return True
    return isinstance(node, ast.Call) and (called_name(node.func) in DICT_MAKERS or called_name(node.func) == "list")


class ItemReader(ValueReader):
    """Reads the dicts inside other values, for BagReader, which says what a value holds (`bag`)."""

    def bag(self, node: ast.expr) -> Bag:
        raise NotImplementedError

    def iterated(self, target: ast.expr, iterated: ast.expr) -> None:
        raise NotImplementedError

    def loop_strings(self, target: ast.expr, iterated: ast.expr) -> None:
        raise NotImplementedError

    def _records(self, items: list[ast.expr], calls: bool = False) -> Bag:
        raise NotImplementedError

    def _attribute(self, node: ast.expr) -> str | None:
        raise NotImplementedError

    def _item(self, owner: ast.expr, path: tuple[str, ...]) -> Bag:
        """What `owner[path...]` holds: an item of a dict, or of an attribute of an object a call
        returned (`out.meta["metrics"]`), one step of the path per attribute."""
        while isinstance(owner, ast.Attribute) and self._attribute(owner) is None:
            path = (owner.attr, *path)
            owner = owner.value
        return selected(self.bag(owner), path)

    def elements(self, value: ast.Tuple) -> Bag:
        """`return batches, stats`: each element's dict as the item "#i" (bag_items.element), also
        what a call of a function (`return loss, flatten(stats)`) or of the object's own method
        returns; not of another object's (`return x.float(), y.mean()`: mostly a tensor's)."""
        found = EMPTY
        for index, part in enumerate(value.elts):
            kept = isinstance(part, (ast.Name, ast.Dict, ast.DictComp)) or binding(part, self.rules.binds) or _own_call(part)
            inner = self.bag(part) if kept else EMPTY
            found |= under(element(index), inner) if inner else EMPTY
        return found

    def unpacked(self, targets: list[ast.expr], value: ast.Call | ast.Name) -> None:
        """`batches, stats = prepare(...)`: `stats` holds the dict the call returns as its second
        element; so it does of a name that holds what the call returned (`out = prepare(...)`)."""
        scope = self.scopes[-1]
        returned = self.bag(value) | (self.unplaced_result(value) if isinstance(value, ast.Call) else EMPTY)
        for index, target in enumerate(targets):
            if isinstance(target, ast.Name):
                found = selected(returned, (element(index),))
                scope.results.pop(target.id, None)
                if found:
                    scope.bags[target.id] = found
                else:
                    scope.bags.pop(target.id, None)

    def unplaced_result(self, node: ast.Call) -> Bag:
        """`weights, stats = ctx.compute(x)`: what a method of an object the file cannot place
        returns, which the project-wide step finds when a few classes define it. Asked only
        where its result is taken apart as a tuple: most such calls return no dict, and are
        followed only when handed one (roots.py)."""
        if self.site(node).callee:
            return EMPTY  # followed already
        callee = self.code.callee(node.func, self.classes, self.scopes[-1].known)
        if callee is None or not callee.startswith(UNKNOWN_OBJECT):
            return EMPTY
        return Bag(held=(Held("result", callee, call=self.span(node)),))

    def filtered(self, generator: ast.comprehension) -> None:
        """`{k: v for k, v in stats.items() if k not in SKIPPED}` (or `k != "x"`): the loop's
        key stands for the dict's entries less those (a set, list or tuple of strings, or a
        name bound to one)."""
        for test in generator.ifs:
            self._left_out(test, ast.NotIn, ast.NotEq)

    def skipped(self, body: list[ast.stmt]) -> None:
        """`for k, v in stats.items(): if k in SKIPPED: continue` (or `k == "x"`), the tests a
        loop's body starts with: the loop's key stands for the dict's entries less those."""
        for statement in body:
            if not (isinstance(statement, ast.If) and not statement.orelse and [type(s) for s in statement.body] == [ast.Continue]):
                return
            self._left_out(statement.test, ast.In, ast.Eq)

    def branch_keys(self, test: ast.expr) -> tuple[str, Bag, Bag, Bag] | None:
        """`if k in NAMES:` in a loop over a dict's keys: the loop's key, what it stands for
        before the test, in the branch (the entries under those names) and in the other one
        (the rest); `not in` the other way round. None for any other test."""
        prefixed = self._prefixes(test)
        if prefixed is not None:  # `if k.startswith("train/")`: those in the branch; any in the other
            found = self.scopes[-1].keyvars[prefixed[0]]
            return prefixed[0], found, starting(found, prefixed[1]), found
        compared = self._compared(test)
        if compared is None or not isinstance(compared[1], (ast.In, ast.NotIn)):
            return None
        key, op, names = compared
        found = self.scopes[-1].keyvars[key]
        among, others = kept_only(found, names), left_out(found, names)
        return (key, found, among, others) if isinstance(op, ast.In) else (key, found, others, among)

    def _prefixes(self, test: ast.expr) -> tuple[str, tuple[str, ...]] | None:
        """A loop's key tested for its start: `k.startswith("a/")`, `k.startswith(("a/", "b/"))`,
        or several such tests of the same key joined by `or`; the key and the prefixes. None
        for any other test."""
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        key: str | None = None
        prefixes: tuple[str, ...] = ()
        for part in tests:
            if not (
                isinstance(part, ast.Call)
                and isinstance(part.func, ast.Attribute)
                and part.func.attr == "startswith"
                and isinstance(part.func.value, ast.Name)
                and len(part.args) == 1
                and not part.keywords
            ):
                return None
            named = part.func.value.id
            given = part.args[0]
            texts = (
                (given.value,)
                if isinstance(given, ast.Constant) and isinstance(given.value, str)
                else strings.loop_values(given, self.collection)
            )
            if not texts or (key is not None and named != key) or named not in self.scopes[-1].keyvars:
                return None
            key, prefixes = named, prefixes + tuple(texts)
        return (key, prefixes) if key is not None else None

    def _left_out(self, test: ast.expr, among: type[ast.cmpop], equal: type[ast.cmpop]) -> None:
        """Leaves out of a loop key's entries the names `test` compares it with by `among` (a
        collection of names) or `equal` (one name)."""
        compared = self._compared(test)
        if compared is not None and isinstance(compared[1], (among, equal)):
            key, _, names = compared
            self.scopes[-1].keyvars[key] = left_out(self.scopes[-1].keyvars[key], names)

    def _compared(self, test: ast.expr) -> tuple[str, ast.cmpop, tuple[str, ...]] | None:
        """A loop's key compared with names: `k in NAMES`, `k not in SKIPPED` (a set, list or
        tuple of strings, or a name bound to one), `k == "x"`, `k != "x"`; the key, the
        operator and the names. None for any other test."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return None
        key, op, other = test.left.id, test.ops[0], test.comparators[0]
        if key not in self.scopes[-1].keyvars:
            return None
        names: tuple[str, ...] | None = None
        if isinstance(op, (ast.In, ast.NotIn)):
            names = strings.loop_values(other, self.collection)
        elif isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(other, ast.Constant) and isinstance(other.value, str):
            names = (other.value,)
        return (key, op, names) if names else None


class ListReader(ItemReader):
    """Lists of dicts of metrics, for BagReader: each dict put in a list (`rows.append(stats)`,
    `[w.report() for w in workers]`, every rank's copy a gather returns) is the list's item
    LISTED, which a loop over the list or an index selects."""

    def list_element(self, node: ast.expr) -> Bag:
        """A dict of metrics as one element of a list: the list's item LISTED."""
        inner = self.bag(node)
        return under(LISTED, inner) if inner else EMPTY

    def list_of(self, node: ast.ListComp) -> Bag:
        """`[worker.report() for worker in workers]`: a list of the dicts its element is, with
        the comprehension's loop variables bound inside it only. `[k for k in stats if k !=
        "x"]`, a dict's keys, stands for the dict's entries less those, as `list(stats)` does.
        `[(f"eig/block_{i}", v, step) for i, v in enumerate(values)]`: a list of records, each
        keyed as the loop variables make it."""
        elt = node.elt
        record = type(elt) is ast.Tuple and len(elt.elts) >= 2
        if not (record or isinstance(elt, LIST_ITEMS)):
            return EMPTY
        scope = self.scopes[-1]
        saved = (dict(scope.keyvars), dict(scope.strings), dict(scope.bags))
        for generator in node.generators:
            self.iterated(generator.target, generator.iter)
            self.filtered(generator)
            if record:
                self.loop_strings(generator.target, generator.iter)
        if record:
            found = self._records([elt])
        elif isinstance(elt, ast.Name) and elt.id in scope.keyvars and elt.id not in scope.bags:
            found = scope.keyvars[elt.id]
        else:
            found = self.list_element(elt)
        scope.keyvars, scope.strings, scope.bags = saved
        return found

    def gathered_list(self, node: ast.Call) -> Bag:
        """`all_gather_object(stats)`: a call named as a gather returns every rank's copy of the
        dict it is handed, a list of that dict (rules/dataflow.yaml `per_key.gathers`)."""
        found = EMPTY
        for arg in arguments(node):
            if not arg.star and isinstance(arg.value, (ast.Name, ast.Dict, ast.Attribute)):
                found |= self.list_element(arg.value)
        return found


def _own_call(node: ast.expr) -> bool:
    """A call of a name (`flatten(stats)`) or of a method of `self`."""
    if type(node) is not ast.Call:
        return False
    func = node.func
    return type(func) is ast.Name or type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self"
