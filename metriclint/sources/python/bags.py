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
from typing import Any

from metriclint.base import keys
from metriclint.model import Bag, Entry, Held, Span
from metriclint.sources.python import strings
from metriclint.sources.python.code import Argument, arguments, called_name
from metriclint.sources.python.roots import ValueReader
from metriclint.sources.python.values import is_measurement

# Calls that return the dict they are given, or one with the same items.
_COPIES = frozenset({"dict", "OrderedDict", "defaultdict", "copy", "deepcopy", "sorted", "list", "reversed", "tuple"})
# Methods that add to a dict (`update`, `|=`) or a list of records (`append`, `extend`, `insert`).
_ADDS = frozenset({"update", "append", "extend", "insert", "add"})


def rekeyed(bag: Bag, rekey: str) -> Bag:
    """The bag with each key written into `rekey` in place of "{}" (`train/{}`)."""
    if rekey == "{}":
        return bag
    entries = tuple(Entry(rekey.replace("{}", e.key), e.span, e.value, e.measured, e.through) for e in bag.entries)  # new keys: not recorded
    return Bag(entries, tuple(Held(h.kind, h.name, rekey.replace("{}", h.rekey), h.site) for h in bag.held))


class BagReader(ValueReader):
    """What a dict-valued expression holds, and where the walk puts what it adds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.valued: dict[Span, ast.expr] = {}  # where an entry's key is written -> the value put under it

    def bag(self, node: ast.expr) -> Bag:
        """What `node` holds as a dict of metrics (or a list of (key, value, ...) records)."""
        scope = self.scopes[-1]
        if isinstance(node, ast.Name):
            if node.id in scope.bags:
                return scope.bags[node.id]
            if node.id in scope.params and node.id not in scope.carries and node.id not in ("self", "cls"):
                return Bag(held=(Held("param", node.id),))
            return Bag()
        attribute = self._attribute(node)
        if attribute is not None:
            return Bag(held=(Held("attribute", attribute),))
        if isinstance(node, ast.Dict):
            found = Bag()
            table = self.tables.holds(node)
            for key, value in zip(node.keys, node.values):
                found |= self.bag(value) if key is None else self.entry(key, value, recorded=not table)
            return found
        if isinstance(node, ast.DictComp):
            return self._comprehended(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._records(node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Add)):
            return self.bag(node.left) | self.bag(node.right)
        if isinstance(node, ast.IfExp):
            return self.bag(node.body) | self.bag(node.orelse)
        if isinstance(node, ast.Call):
            return self._called(node)
        return Bag()

    def entry(self, key: ast.expr, value: ast.expr, recorded: bool = False) -> Bag:
        """What putting `value` under `key` adds: an entry per string the key may be, or, when
        the key is a loop's key over another dict, that dict's entries re-keyed. `recorded`: a
        key shaped like one is logged where it is written (a dict literal's, `d[k] = v`)."""
        scope = self.scopes[-1]
        if isinstance(key, ast.Name) and key.id in scope.keyvars:
            return scope.keyvars[key.id]
        found = self.key_texts(key)
        if not found and isinstance(key, ast.Name) and key.id in scope.params:
            found = (f"{{{key.id}}}",)  # `record(name, value)`: what its callers pass, evidence/logged_bags.py
        if not found:
            return Bag()
        made = Bag()
        for text in found:
            over = next((name for name in scope.keyvars if f"{{{name}}}" in text), None)
            if over is not None:
                made |= rekeyed(scope.keyvars[over], text.replace(f"{{{over}}}", "{}"))
            else:
                span = self.span(key)
                self.valued[span] = value
                shaped = recorded and keys.looks_like_key(text) and not keys.too_generic(text)
                made |= Bag((Entry(text, span, self.roots(value), is_measurement(value), self.names(value), shaped),))
        return made

    def key_texts(self, node: ast.expr) -> tuple[str, ...]:
        """The keys a key expression may be (strings.py); an unknown part is a `{name}` placeholder."""
        return strings.values(node, self.string) or ()

    def over_loop_key(self, key: ast.expr) -> bool:
        """Whether a key is, or is built from, a loop's key over a dict (`f"train/{k}"`)."""
        keyvars = self.scopes[-1].keyvars
        if not keyvars:
            return False
        if isinstance(key, ast.Name):
            return key.id in keyvars
        return any(f"{{{name}}}" in text for text in self.key_texts(key) for name in keyvars)

    def _records(self, items: list[ast.expr]) -> Bag:
        """A list of (key, value, ...) records, as DeepSpeed's monitors take them."""
        found = Bag()
        for item in items:
            if isinstance(item, ast.Tuple) and len(item.elts) >= 2:
                found |= self.entry(item.elts[0], item.elts[1])
        return found

    def _comprehended(self, node: ast.DictComp) -> Bag:
        """`{f"train/{k}": v for k, v in stats.items()}`: `stats` re-keyed."""
        scope = self.scopes[-1]
        saved = (dict(scope.keyvars), dict(scope.strings))
        for generator in node.generators:
            self.loop_strings(generator.target, generator.iter)
            self.iterated(generator.target, generator.iter)
        found = self.entry(node.key, node.value, recorded=True)
        scope.keyvars, scope.strings = saved
        return found

    def loop_strings(self, target: ast.expr, iterated: ast.expr) -> None:
        """`for k in ["a", "b"]`, `for k in NAMES`, `for k, v in table.items()`: k is one of them."""
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "items":
            if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
                return
            target = target.elts[0]
        found = strings.loop_values(iterated, self.collection) if isinstance(target, ast.Name) else None
        if isinstance(target, ast.Name) and found:
            self.scopes[-1].strings[target.id] = found

    def _called(self, node: ast.Call) -> Bag:
        """`dict(stats, lr=lr)`, `stats.copy()`, `deepcopy(stats)`, or what a project call returns."""
        func, name = node.func, called_name(node.func)
        if name in _COPIES:
            given = arguments(node)
            found = self.bag(func.value) if isinstance(func, ast.Attribute) and name == "copy" and not given else self._given(given)
            if found:
                return found
        site = self.site(node)
        if site.callee:
            return Bag(held=(Held("result", site.callee, site=site),))
        return Bag()

    def _given(self, given: list[Argument]) -> Bag:
        """What a call's arguments hold: its dicts, and each keyword as a key (`dict(a, lr=lr)`)."""
        found = Bag()
        for arg in given:
            if arg.keyword is None:
                found |= self.bag(arg.value)
            elif not arg.star and arg.where is not None:
                line, column = self.text.start(arg.where)
                span = Span(self.path, line, column + 1, line, column + 1 + len(arg.keyword))
                self.valued[span] = arg.value
                found |= Bag((Entry(arg.keyword, span, self.roots(arg.value), is_measurement(arg.value), self.names(arg.value)),))
        return found

    def iterated(self, target: ast.expr, iterated: ast.expr) -> None:
        """`for k, v in stats.items()`, `for k in stats`, `for name, value, step in records`:
        `k` is the key of each of that bag's entries, inside the loop."""
        scope = self.scopes[-1]
        over = iterated
        while isinstance(over, ast.Call) and called_name(over.func) in ("sorted", "list", "reversed") and over.args:
            over = over.args[0]
        pairs = isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute) and over.func.attr == "items" and not over.args
        if pairs or (isinstance(over, ast.Call) and isinstance(over.func, ast.Attribute) and over.func.attr == "keys" and not over.args):
            over = over.func.value  # type: ignore[union-attr]
        key = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
        if isinstance(key, ast.Name):
            if isinstance(target, ast.Tuple) and not pairs and len(target.elts) < 2:
                return
            found = self.bag(over)
            if found:
                scope.keyvars[key.id] = found
            else:
                scope.keyvars.pop(key.id, None)

    def put(self, container: ast.expr, added: Bag) -> None:
        """Adds to the dict `container` names: a local, or `self.attr`, through any subscripts
        (`self.stats[mode][key].append(v)` adds to `self.stats`)."""
        if not added:
            return
        while isinstance(container, ast.Subscript):
            container = container.value
        scope = self.scopes[-1]
        if isinstance(container, ast.Name):
            scope.bags[container.id] = self.bag(container) | added
            return
        attribute = self._attribute(container)
        if attribute is not None:
            scope.puts[attribute] = scope.puts.get(attribute, Bag()) | added

    def added(self, call: ast.Call) -> None:
        """A call that adds to a dict or a list of records: `d.update(other)`, `d.update(k=v)`,
        `events.append(("loss", loss, step))`, `d[k].append(v)`, `d.setdefault(k, []).append(v)`."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in _ADDS:
            return
        owner = func.value
        if func.attr == "update":
            self.put(owner, self._given(arguments(call)))
        elif isinstance(owner, ast.Subscript) and call.args and not isinstance(owner.slice, ast.Slice):
            self.put(owner.value, self.entry(owner.slice, call.args[0]))  # `d[k].append(v)`: v under k
        elif isinstance(owner, ast.Call) and called_name(owner.func) == "setdefault" and owner.args and call.args:
            inner = owner.func.value if isinstance(owner.func, ast.Attribute) else None
            if inner is not None:
                self.put(inner, self.entry(owner.args[0], call.args[0]))
        elif func.attr in ("append", "insert") and call.args:
            self.put(owner, self._records([call.args[-1]]))
        elif func.attr == "extend" and call.args:
            self.put(owner, self.bag(call.args[0]))

    def stored(self, target: ast.Subscript, value: ast.expr, recorded: bool) -> None:
        """`d[k] = v`, `self.stats[k] = v`, `d[k] += v`; `recorded`: as `entry` says."""
        if not isinstance(target.slice, (ast.Slice, ast.Tuple)):
            self.put(target.value, self.entry(target.slice, value, recorded))

    def bound(self, name: str, value: ast.expr, replaces: bool) -> None:
        """`name = value`: the name holds what the value holds (with what it held, on a branch)."""
        scope = self.scopes[-1]
        found = self.bag(value)
        if not replaces and name in scope.bags:
            found = scope.bags[name] | found
        if found:
            scope.bags[name] = found
        else:
            scope.bags.pop(name, None)

    def _attribute(self, node: ast.expr) -> str | None:
        """`self.stats` in a method: the class's attribute, as module.Class.stats."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" and self.classes:
            return ".".join((self.module, *self.classes, node.attr))
        return None
