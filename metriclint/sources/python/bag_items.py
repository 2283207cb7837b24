"""Dicts of metrics inside other values, for the walk (sources/python/bags.py): a dict held
under a key of another (`{"metrics": stats}`), packed by a call under a keyword
(`Reply(meta={"metrics": stats})`), read back by its path (`out.meta["metrics"]`,
`out.get("metrics")`) from what a call returns, and a call through a handle's `.remote`, which
the project-wide step answers with the methods of the classes whose methods run elsewhere."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable

from metriclint.model import REMOTE_CALL, Bag, Item, MetricsEntry

# Methods that read one item of a dict by its key (`out.get("metrics")`, `out.pop("metrics", {})`).
ITEM_READS = frozenset({"get", "pop"})
_EMPTY = Bag()


def rekeyed(bag: Bag, rekey: str) -> Bag:
    """The bag with each key written into `rekey` in place of "{}" (`train/{}`)."""
    if rekey == "{}":
        return bag
    entries = tuple(
        MetricsEntry(rekey.replace("{}", e.key), e.span, e.value, e.measured, e.through) for e in bag.entries
    )  # new keys: not recorded
    return Bag(entries, tuple(replace(h, rekey=rekey.replace("{}", h.rekey)) for h in bag.held))  # its items keep no key


def selected(bag: Bag, path: tuple[str, ...]) -> Bag:
    """The dicts `bag` holds at `path` (`out.meta["metrics"]`: ("meta", "metrics")): its items
    of that name, and the same item of what a call returns, which the project-wide step finds.
    Only a call's result is followed so: an item of a parameter's dict (`batch["input_ids"]`)
    is most often no dict of metrics, and following each would cost every call that passes one."""
    found, size = _EMPTY, len(path)
    for item in bag.items:
        if item.path == path:
            found |= Bag(item.entries, item.held)
        elif item.path[:size] == path:
            found |= Bag(items=(Item(item.path[size:], item.entries, item.held),))
    held = tuple(replace(h, item=h.item + path) for h in bag.held if h.kind == "result" and h.rekey == "{}")
    return found | Bag(held=held) if held else found


def under(name: str, bag: Bag) -> Bag:
    """`bag` as the item `name` of a dict that holds it."""
    items = (Item((name,), bag.entries, bag.held),) if bag.entries or bag.held else ()
    return Bag(items=items + tuple(replace(i, path=(name, *i.path)) for i in bag.items))


def item_key(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def nested(key: ast.expr, value: ast.expr, bag: Callable[[ast.expr], Bag]) -> Bag:
    """`{"metrics": stats}`: the dict `stats` as the item "metrics", for a reader that
    selects it (`selected`); nothing when the key is no string or the value no dict."""
    name = item_key(key)
    if name is None or not isinstance(value, (ast.Name, ast.Dict, ast.DictComp, ast.Attribute)):
        return _EMPTY
    inner = bag(value)
    return under(name, inner) if inner else _EMPTY


def packed(node: ast.Call, bag: Callable[[ast.expr], Bag]) -> Bag:
    """The dicts a call packs into what it makes, under their keywords (`Output(meta={"metrics":
    stats})`, `make(extra={"metrics": stats})`); a dict written as a keyword's value gives its
    items as the result's own too, whatever the keyword (`out["metrics"]` of `make(extra=
    {"metrics": stats})`), since a maker that takes several dicts keeps their items side by side."""
    found = _EMPTY
    for keyword in node.keywords:
        if keyword.arg is None or not isinstance(keyword.value, (ast.Name, ast.Dict)):
            continue
        inner = bag(keyword.value)
        if inner:
            found |= under(keyword.arg, inner) | (Bag(items=inner.items) if isinstance(keyword.value, ast.Dict) else _EMPTY)
    return found


def remote_method(func: ast.Attribute, remote_calls: frozenset[str]) -> str | None:
    """`handle.update.remote(batch)`: a call of the method `update` of whatever class the
    handle runs elsewhere (rules/dataflow.yaml `dispatch`), as evidence/callees.py finds it."""
    if func.attr in remote_calls and isinstance(func.value, ast.Attribute):
        return f"{REMOTE_CALL}{func.value.attr}"
    return None
