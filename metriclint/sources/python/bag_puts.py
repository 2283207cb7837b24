"""Dicts of metrics, for the walk: where it puts what a statement adds to a dict or a list of
records (`d[k] = v`, `d.update(...)`, `rows.append(stats)`, `x = {...}`, a dict handed to a
project function that fills it). What an expression holds is read by bags.py's BagReader.
"""

from __future__ import annotations

import ast

from metriclint.base import keys
from metriclint.model import CONSTANT_KEY, Atom, Bag, Held, rekeyed
from metriclint.sources.python.bag_items import EMPTY, LIST_ITEMS, LISTED, container, item_key, nested, popped, reads, under
from metriclint.sources.python.bags import BagReader, local_attribute
from metriclint.sources.python.call_names import Argument, arguments, called_name, looked_up
from metriclint.sources.python.flow import Scope

# Methods that add to a dict (`update`, `|=`) or a list of records (`append`, `extend`, `insert`).
_ADDS = frozenset({"update", "append", "extend", "insert", "add", "setdefault"})


class BagWriter(BagReader):
    """Where the walk puts what a statement adds to a dict of metrics."""

    def put(self, container: ast.expr, added: Bag, aliased: bool = True) -> None:
        """Adds to the dict `container` names: a local, or `self.attr`, through any subscripts
        (`self.stats[mode][key].append(v)` adds to `self.stats`). Through a subscript by a
        variable (`[mode]`) it adds to that dict's item LISTED instead, one of its dicts, as a
        reader that indexes it by a variable or loops over its values selects it
        (`self.stats[mode].items()`, bags.py `bag`): not to the outer dict's own keys, which a
        loop over them would read as keys. Through subscripts by strings alone it also adds to
        the item they select (`out["metrics"]["lr"] = lr` puts `lr` in the item "metrics" of
        `out`, which `out["metrics"]` reads). A local that is another name for a dict
        (`bound`) adds to that dict too; `aliased` False, not through another such name."""
        if not added:
            return
        selected = added
        while isinstance(container, ast.Subscript):
            if type(container.slice) is ast.Name:
                added = under(LISTED, added)
            name = item_key(container.slice)
            selected = under(name, selected) if name is not None else EMPTY
            container = container.value
        if selected is not added:
            added |= selected
        scope = self.scopes[-1]
        if isinstance(container, ast.Name):
            if scope.collections and container.id in scope.collections:
                self._grown(scope, container.id, added)
            shared = self.module_dict(container.id)
            if shared is not None:  # `REGISTRY[name] = func` in a function: the module's dict
                scope.puts[shared] = scope.puts.get(shared, EMPTY) | added
            scope.bags[container.id] = self.bag(container) | added
            if self.is_param(container.id):
                scope.fills[container.id] = scope.fills.get(container.id, EMPTY) | added  # the caller's dict
            alias = scope.aliases.get(container.id) if aliased else None
            if alias is not None:  # `metrics = self.metrics; metrics["k"] = v`: the attribute's dict
                self.put(alias, added, aliased=False)
            return
        attribute = self._attribute(container)
        if attribute is not None:
            scope.puts[attribute] = scope.puts.get(attribute, EMPTY) | added
            return
        held = local_attribute(container)
        if held is not None:  # `result.metrics["k"] = v`: the dict an object of this function holds
            scope.bags[held] = scope.bags.get(held, EMPTY) | added
        field = self.field(container) if type(container) is ast.Attribute else None
        if field is not None:  # `sample.status = stats`: that attribute of every object of its class
            scope.puts[field] = scope.puts.get(field, EMPTY) | added

    def added(self, call: ast.Call) -> None:
        """A call that adds to a dict or a list of records: `d.update(other)`, `d.update(k=v)`,
        `events.append(("loss", loss, step))`, `d[k].append(v)`, `d.setdefault(k, []).append(v)`,
        `d.setdefault(k, v)` (v under k, unless the dict has it already)."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in _ADDS:
            return
        owner = func.value
        if func.attr == "update":
            self.put(owner, self.given_bag(arguments(call), as_dict=True))
        elif func.attr == "setdefault":
            if len(call.args) == 2 and not call.keywords:
                self.put(owner, self.entry(call.args[0], call.args[1]))
        elif isinstance(owner, ast.Subscript) and call.args and not isinstance(owner.slice, ast.Slice):
            self.put(owner.value, self.entry(owner.slice, call.args[0]))  # `d[k].append(v)`: v under k
            name = item_key(owner.slice) if func.attr == "append" and isinstance(call.args[0], LIST_ITEMS) else None
            if name is not None:  # `log["rows"].append(stats)`: a list of dicts under "rows"
                self.put(owner.value, under(name, self.list_element(call.args[0])))
        elif isinstance(owner, ast.Call) and called_name(owner.func) == "setdefault" and owner.args and call.args:
            inner = owner.func.value if isinstance(owner.func, ast.Attribute) else None
            if inner is not None:
                self.put(inner, self.entry(owner.args[0], call.args[0]))
        elif func.attr in ("append", "insert") and call.args:
            made = isinstance(owner, ast.Name) and owner.id in self.scopes[-1].bags or self._attribute(owner) is not None
            self.put(owner, self._records([call.args[-1]], made))
        elif func.attr == "extend" and call.args:
            self.put(owner, self.bag(call.args[0]))

    def _loop_key_rebound(self, name: str, value: ast.expr, replaces: bool) -> None:
        """`name = f"{section}/{name}"` in a loop over a dict's keys: from here each entry is
        logged under the key made of its own (on a branch, that or its own). `if section: name =
        f"{section}/{name}"` is the one key either way, an empty section filling as nothing
        (base/keys.py `emptied`). A key made otherwise (`name.upper()`) stays the loop's."""
        mark = f"{{{name}}}"
        texts = self._entry_keys(value)
        if not texts or not all(mark in text for text in texts):
            return
        scope = self.scopes[-1]
        found = scope.keyvars[name]
        made = EMPTY
        for text in texts:
            made |= rekeyed(found, text.replace(mark, "{}"))
        tested = self.tests[-1] if self.tests else set()
        sections = len(tested) == 1 and all(keys.emptied(text, next(iter(tested))) == mark for text in texts)
        scope.keyvars[name] = made if replaces or sections else found | made

    def removed(self, call: ast.expr) -> None:
        """`d.pop("k")`, for its value or not: the dict no longer holds the key, so a sink handed
        `d` after it does not log it (what was popped is logged only under a key of its own), also
        inside a cast (`cast(dict, d.pop("k"))`); so does a parameter's dict, returned after it."""
        if isinstance(call, ast.Call):
            call = self.cast_value(call) or call
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "pop" and call.args:
            self.deleted(call.func.value, call.args[0])

    def _grown(self, scope: Scope, name: str, added: Bag) -> None:
        """A dict or list bound to a literal (`m = {"count": n}`, `names = []`), whose keys a loop
        over it takes (`loop_strings`), is put more in: a key written out joins them (`m["lr"] =
        lr`), and so does one built from what the function runs over (`names.append(f"grad/
        {name}.norm")` in a loop over the model's parameters), a family of keys; keys made
        otherwise (`m[k] = v` over another dict, `m.update(stats)`, a caller's section) are not
        all known, and the loop reads the dict's entries instead (bags.py `iterated`)."""
        written = [entry.key for entry in added.entries]  # its items, were a value a dict, are under these keys
        if added.held or not written or any(self.open_template(key) for key in written):
            scope.collections.pop(name)
        else:
            scope.collections[name] = tuple(dict.fromkeys((*scope.collections[name], *written)))

    def deleted(self, owner: ast.expr, key: ast.expr) -> None:
        """`del d["k"]`, `d.pop("k")`: `d` holds no `k` from here (`removed`)."""
        scope = self.scopes[-1]
        if not isinstance(owner, ast.Name) or (
            owner.id not in scope.bags and owner.id not in scope.results and not self.is_param(owner.id)
        ):
            return  # a name bound to a call's result holds what it returns (`stats = fetch(out, "metrics")`); a parameter, the caller's dict
        names = self.key_texts(key) or self._imported_key(key)
        if names and not any(keys.is_template(name) for name in names):
            scope.bags[owner.id] = popped(self.bag(owner), names)
            if owner.id in scope.collections:
                scope.collections[owner.id] = tuple(name for name in scope.collections[owner.id] if name not in names)

    def _imported_key(self, key: ast.expr) -> tuple[str, ...]:
        """Another module's constant, as model.CONSTANT_KEY writes it."""
        imported = self.code.imports.get(key.id) if isinstance(key, ast.Name) else None
        return (f"{CONSTANT_KEY}{imported}",) if imported is not None and "." in imported else ()

    def stored(self, target: ast.Subscript, value: ast.expr, recorded: bool, atoms: frozenset[Atom] | None = None) -> None:
        """`d[k] = v`, `self.stats[k] = v`, `d[k] += v`; `recorded` and `atoms`: as `entry` says."""
        if not isinstance(target.slice, (ast.Slice, ast.Tuple)):
            self.put(target.value, self.entry(target.slice, value, recorded, atoms) | self._nested_under(target, value))

    def _nested_under(self, target: ast.Subscript, value: ast.expr) -> Bag:
        """`report["metrics"] = stats`: `stats` as the item "metrics" of `report`, as the dict
        literal `{"metrics": stats}` holds it, for a reader that selects it; `by_name[name] =
        stats`: one of its dicts (LISTED), as a loop over its values reads it. Only a dict's own
        key: what a deeper subscript stores (`d[a]["metrics"] = x`) is put in `d` by its key alone."""
        if isinstance(target.value, ast.Subscript):
            return EMPTY
        if type(target.slice) is ast.Name:
            inner = self.bag(value) if isinstance(value, (ast.Name, ast.Dict, ast.DictComp, ast.Call)) else EMPTY
            return under(LISTED, inner) if inner else EMPTY
        return nested(target.slice, value, self.bag)

    def bound(self, name: str, value: ast.expr, replaces: bool) -> None:
        """`name = value`: the name holds what the value holds (with what it held, on a branch)."""
        scope = self.scopes[-1]
        if name in scope.keyvars:
            self._loop_key_rebound(name, value, replaces)
        if self._names_a_dict(value, name):
            scope.aliases[name] = value
        elif scope.aliases:
            scope.aliases.pop(name, None)
        if not replaces and scope.rebound and scope.rebound[-1][0] == tuple(self.blocks):
            replaces = True  # in the branch it holds the new dict alone; after it, either (`branch_ends`)
            self.remember(name)
        holds = name in scope.bags or name in scope.results or self.is_param(name)
        if holds and isinstance(value, ast.Call) and any(reads(a, name) for a in (*value.args, *(k.value for k in value.keywords))):
            self.argument_bags(value)  # `x = f(x["metrics"])`: what the call is handed, before `x` is rebound
        # `method = getattr(handle, name)` in a loop, too, for a name that held no dict: a method (bags.py `_remote_by_name`)
        if (replaces or name not in scope.bags and looked_up(value)) and isinstance(value, ast.Call) and not self.copies(value):
            owner = value.func
            while isinstance(owner, (ast.Attribute, ast.Call)):
                owner = owner.value if isinstance(owner, ast.Attribute) else owner.func
            if isinstance(owner, ast.Name) and owner.id == name:
                self._called(value)  # `x = x.get("metrics")`: an item of what x held, read before x is rebound
            scope.results[name] = value  # what a call returns, a dict only maybe: read as one when used as one (`bag`)
            scope.bags.pop(name, None)
            return
        found = self.field_bag(value)
        if not replaces:  # on a branch: what it held before stays possible
            found = (scope.bags.get(name) or self._result(scope.results.get(name))) | found
        scope.results.pop(name, None)
        if found or container(value):
            scope.bags[name] = found  # an empty dict too: a function it is handed may fill it
        else:
            scope.bags.pop(name, None)

    def _names_a_dict(self, value: ast.expr, name: str) -> bool:
        """Whether `name = value` makes `name` another name for a dict that outlives it: an
        attribute's (`self.metrics`), or an item by strings of another local's or attribute's
        dict (`info["logs"]`, `self.stats["train"]`), where Python binds the same object."""
        base = value
        while type(base) is ast.Subscript and item_key(base.slice) is not None:
            base = base.value
        if type(base) is ast.Name:
            return base is not value and base.id != name
        return type(base) is ast.Attribute and self._attribute(base) is not None

    def branch_starts(self, body: list[ast.stmt]) -> None:
        """An `if` branch: a name bound right in its body holds the new dict alone there
        (`if merged: stats = merge(parts); out["stats"] = stats` hands on the merged dict only)."""
        self.scopes[-1].rebound.append(((*self.blocks, id(body)), {}))

    def remember(self, name: str) -> None:
        """A name bound right in an `if` branch: what it held before, which it may hold again
        after the branch (`branch_ends`), as the branch may not run."""
        scope = self.scopes[-1]
        if scope.rebound and scope.rebound[-1][0] == tuple(self.blocks) and name not in scope.rebound[-1][1]:
            scope.rebound[-1][1][name] = scope.bags.get(name) or self._result(scope.results.get(name))

    def branch_ends(self) -> dict[str, tuple[Bag, Bag]]:
        """After the branch, a name it bound may hold either dict, as the branch may not run.
        Returns, for each name that held a dict before, that dict and the one the branch left."""
        scope = self.scopes[-1]
        _, before = scope.rebound.pop()
        rebound = {}
        for name, old in before.items():
            if not old:
                continue
            new = scope.bags.get(name) or self._result(scope.results.get(name))
            rebound[name] = (old, new)
            joined = old | new
            scope.results.pop(name, None)
            if joined:
                scope.bags[name] = joined
            else:
                scope.bags.pop(name, None)
        return rebound

    def handed_to(self, callee: str, call: ast.Call, given: list[Argument]) -> None:
        """A dict handed to a project function holds, after the call, what the function puts
        in it (`self._compute_metrics(batch, metrics)`), as the project-wide step knows."""
        scope, positional = self.scopes[-1], True
        if not (scope.bags or scope.containers or self.classes):
            return  # no dict to fill here: most functions
        for position, arg in enumerate(given):
            positional = positional and not arg.star
            if arg.star or not (arg.keyword or positional):
                continue
            value = arg.value
            named = isinstance(value, ast.Name) and (value.id in scope.bags or (value.id in scope.containers and self.is_param(value.id)))
            if named or self._attribute(value) is not None:
                self.put(value, Bag(held=(Held("filled", callee, call=self.span(call), where=arg.keyword or position),)))
