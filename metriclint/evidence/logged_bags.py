"""Keys logged through dicts of metrics that cross functions: what reaches a sink from a
caller's dict, a called function's returned dict or a class's attribute.

Each file's walk (sources/python/bags.py) logs the entries it sees put in a dict that reaches a
sink, and records what the dict holds of elsewhere (model.Held): a parameter (`def log(self,
metrics): wandb.log(metrics)`), a project call's result (`wandb.log(compute_stats(batch))`), or
an attribute filled by another method (`self.stats[key].append(v)` in `step`, logged in
`on_log`). This step follows those back to the dicts they come from, through as many calls as
it takes, so a project's own logger is a sink without being named: its callers' dicts are
logged. Every question is answered once, and chains stop after `MAX_HOPS`.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, Mapping, Sequence

from metriclint.base import keys
from metriclint.base.identifiers import class_like
from metriclint.evidence import overrides
from metriclint.evidence.built_keys import each_key
from metriclint.evidence.code_claims import CallGraph, param_at, passed_at
from metriclint.evidence.dotted import Dotted
from metriclint.model import (
    CONSTANT_KEY,
    FUNCTION,
    INVOKED,
    KEYWORDS,
    OVERRIDDEN,
    UNKNOWN_OBJECT,
    Atom,
    Bag,
    CallFlow,
    FunctionFlow,
    Held,
    Item,
    KeyUse,
    MetricsEntry,
    ProjectClass,
    Span,
    flattened,
    logged_by,
    reduced_again,
    rekeyed,
)

# A dict may cross many functions: on verl a worker's metrics reach the trainer's logger through
# 19 (the engine's output, the worker's loop over mini-batches, a worker-group call, a prefixing
# helper, a reduction, an aggregator's attribute, two methods filling the step's dict), and what
# the loss function the worker hands its engine returns through 30 (the attribute it is kept in,
# its setter's call, the engine's batch loop and step, and back up as the engine's output).
# Measured on verl: 20 -> 32 grows this step's memo by a quarter (998 -> 1,235 answers) and its
# time by 0.01 s; nothing more is found past 30.
MAX_HOPS = 32
# How many ways of reading a dict (a function's, for a call, from its callers) the project-wide
# step keeps at most. Real trees need a few thousand (verl 1,319; SkyRL 1,406); methods of one
# name that summarise each other through objects no file tells the class of (prime-rl's
# `to_dict`s) make every path a new reading, and grew to 24 GB before the kernel killed the run.
MAX_READINGS = 50_000

# The calls a function's callers are read for, outermost first: reading a caller's dict that a
# callee returns or fills goes down into the callee for that call, and a parameter of the callee
# comes back up to the caller as it was read (the caller's own call), not as any of its callers'.
Outer = tuple[CallFlow | None, ...]


@dataclass(frozen=True, slots=True)
class LoggedEntry:
    """An entry of a dict some sink logs: its key as logged, and the function it was put in
    (whose flow its value's atoms belong to)."""

    use: KeyUse
    function: str
    value: frozenset[Atom]
    recorded: bool = False  # its key is logged where it is written too, with the value its file sees there
    labelled: bool = False  # its last segment is a label a caller passed for it (`timer("gen", times)`): no name of its value
    family: bool = False  # its placeholders name a family of keys (MetricsEntry.family), which a template stands for


class _Families:
    """Which classes share their attributes: a class and every class it extends or that
    extends it, through the project's classes."""

    def __init__(self, classes: Iterable[ProjectClass]) -> None:
        named = {c.name: c for c in classes}
        self.resolve = Dotted(named).resolve
        self.parent: dict[str, str] = {name: name for name in named}
        for project_class in named.values():
            for base, _ in project_class.bases:
                found = self.resolve(base)
                if found is not None:
                    self.parent[self.root(found.name)] = self.root(project_class.name)

    def root(self, name: str) -> str:
        """The family of a class named where it is defined, or as a file imports it (an object's
        attribute of a class another module re-exports, `sample.status`)."""
        if name not in self.parent:
            found = self.resolve(name)
            name = found.name if found is not None else name
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name


class LoggedBags:
    def __init__(
        self,
        functions: Iterable[FunctionFlow],
        calls: Iterable[CallFlow],
        classes: Iterable[ProjectClass],
        instances: Mapping[str, str] = {},
        dispatched: Iterable[str] = (),
        name_lists: Mapping[str, Bag] = {},
        constants: Mapping[str, str] = {},
    ) -> None:
        classes = list(classes)
        self.constant = Dotted(constants).resolve  # a module's top-level names bound to one string, by import path
        self.name_lists = Dotted(name_lists)  # module-level lists of names, by import path
        calls = list(calls)
        self.project = CallGraph(functions, calls, classes, instances, dispatched)
        self.targets = self.project.callees.targets if self.project.callees is not None else lambda name: ()
        self.families = _Families(classes)
        self.at: dict[Span, CallFlow] = {call.span: call for call in calls}  # a result's call, by where it is
        self.made_in: dict[str, list[CallFlow]] = defaultdict(list)  # function -> the calls it makes
        for call in calls:
            self.made_in[call.caller].append(call)
        self.puts: dict[tuple[str, str], list[tuple[str, Bag]]] = defaultdict(list)  # (family, attribute) -> (function, bag put in it)
        for flow in self.project.functions.values():
            for attribute, bag in flow.stored:
                owner, name = attribute.rsplit(".", 1)
                self.puts[(self.families.root(owner), name)].append((flow.name, bag))
        self._fields_made(calls)
        self.fanned = self._fanned(calls)
        self.cut_short = False  # whether `entries` stopped at MAX_READINGS
        self.memo: dict[tuple[str, Bag, int, Span | None, tuple[Span | None, ...]], tuple[tuple[MetricsEntry, str], ...]] = {}
        self.at_memo: dict[tuple[object, ...], list[tuple[Bag, tuple[str, CallFlow | None, Outer]]]] = {}
        self.labelled: set[MetricsEntry] = set()  # entries whose key's last segment a caller passed as a label
        # entries whose key a call filled, with the function and the parameters it filled: the
        # names they hold now are the caller's (`_value(group, f"{name}/lr")` into `def
        # _value(group, name)`), and the function's other callers do not fill them again
        self.given: dict[MetricsEntry, tuple[str, frozenset[str]]] = {}

    def logged(self, own_methods: frozenset[Span] = frozenset()) -> Iterator[LoggedEntry]:
        """Every entry a sink logs through a dict it cannot see whole, keyed as it is logged; not
        at a call that reaches a method of the project's own (`own_methods`), which logs its own."""
        for flow in self.project.functions.values():
            for logged in flow.logged:
                if logged.span in own_methods:
                    continue
                for entry, function in self.entries(flow.name, logged.bag, 0, None):
                    for key, span in self._filled(function, entry):
                        sink = logged_by(logged.sink, logged.span, span, None if function == flow.name else function)
                        owner = self.project.functions.get(function)
                        labelled = entry in self.labelled or (key != entry.key and _label_filled(owner, entry, key))
                        use = KeyUse(key, span, False, entry.measured, entry.through, sink=sink)
                        yield LoggedEntry(use, function, entry.value, entry.recorded, labelled, entry.family)

    def filled_standing(self) -> Iterator[KeyUse]:
        """The keys a project function puts in a dict its caller passes, built from its
        parameters (`out[f"{head}{name}{tail}"] = v` in a loop over `names`), as each call fills
        them. Where a key the call makes whole is shaped like a metric key over a measured
        value, it is logged at the call as the same key written in the caller would be
        (sources/python/values.py `stands_alone`), whether or not a sink is seen to log the
        dict; the template alone names no metric, so the walk could not tell. A key left a
        template (`correct_length/p{min}`) is not taken: the call names no one metric there.
        Only the keys the helper writes and the names the call passes are the call's: the
        keys of a dict it is handed and puts in again are logged where that dict is."""
        for flow in self.project.functions.values():
            for _, bag in flow.fills:
                if _builds_keys(bag):
                    for call in self.callers(flow.name):
                        if call.caller != flow.name:
                            yield from self._filled_at(flow.name, bag, call)

    def _filled_at(self, function: str, bag: Bag, call: CallFlow) -> Iterator[KeyUse]:
        """The keys `call` makes whole in the dict `function` fills (`bag`), for `filled_standing`."""
        for entry, where in self.entries(function, bag, 0, call):
            if not entry.measured or not (where == function or entry.span.starts_in(call.span)):
                continue  # a key another dict brought (`add_sectioned(out, stats, "value/")`) is logged where that dict is
            for key, span in self._filled(where, entry) if keys.is_template(entry.key) else [(entry.key, entry.span)]:
                if keys.looks_like_key(key) and not keys.is_template(key):
                    yield KeyUse(key, span, False, True, entry.through)

    def entries(self, function: str, bag: Bag, hops: int, call: CallFlow | None, outer: Outer = ()) -> tuple[tuple[MetricsEntry, str], ...]:
        """The entries `bag` (of `function`) holds, each with the function it was put in. `call`:
        the call `function` is read for (its result's), whose arguments alone fill its parameters;
        `outer`: the calls its caller, and that one's, are read for, in turn (`Outer`)."""
        memo = (function, bag, hops, call.span if call is not None else None, tuple(c.span if c is not None else None for c in outer))
        if memo in self.memo:
            return self.memo[memo]
        if len(self.memo) >= MAX_READINGS:
            self.cut_short = True  # said on stderr (cli/project.py): the keys of the paths left unread are missing
            return ()  # paths past counting: what is read by then is what the project-wide step knows
        self.memo[memo] = ()  # a cycle adds nothing
        flow = self.project.functions.get(function)
        found: list[tuple[MetricsEntry, str]] = list(self._read_for(flow, function, bag.entries, call))
        for held in bag.held if hops < MAX_HOPS else ():
            for at in self._calls_for(flow, held.rekey, call):
                for rekey, kept in self._rekeys(flow, held, at):
                    pushed = self._pushed(flow, held, rekey, at)
                    if pushed is not None:  # the caller's section: its callers fill it, each for the dicts it passes
                        rekey, kept = "{}", ""
                    for held_entry, where in self._held(function, held, hops + 1, at, outer if at is call else (), pushed):
                        entry = replace(held_entry, measured=True) if held.opts.measured and not held_entry.measured else held_entry
                        if held.opts.over:
                            entry = entry.valued(reduced_again(entry.value, held.opts.over))
                        if (
                            entry.key in self._without(held)
                            or (held.opts.only and entry.key not in held.opts.only)
                            or (held.opts.starts and not entry.key.startswith(held.opts.starts))
                        ):
                            continue
                        if held.opts.rewrites:  # `f"train/{k.replace(' ', '_')}"` over the keys of this dict
                            entry = entry.renamed(keys.rewritten(entry.key, held.opts.rewrites))
                        if where == function and at is not None and keys.is_template(entry.key):
                            found.extend(
                                self._read_for(flow, function, (self._rekeyed(entry, rekey, kept),), at)
                            )  # a key a callee named by our parameter
                        else:
                            found.append((self._rekeyed(entry, rekey, kept), where))
        self.memo[memo] = tuple(dict.fromkeys(found))
        return self.memo[memo]

    def _without(self, held: Held) -> tuple[str, ...]:
        """The keys `held` leaves out, another module's constant as its string (model.CONSTANT_KEY)."""
        if not any(name.startswith(CONSTANT_KEY) for name in held.opts.without):
            return held.opts.without
        return tuple(self.constant(n[len(CONSTANT_KEY) :]) or n if n.startswith(CONSTANT_KEY) else n for n in held.opts.without)

    def _calls_for(self, flow: FunctionFlow | None, rekey: str, call: CallFlow | None) -> list[CallFlow | None]:
        """The calls to read `flow` for, to fill a re-keying that names its parameters
        (`f"{section}/{k}"` over the items of a dict its caller passes): `call`, when given;
        else each of its callers in turn, whose strings fill the names and whose dicts alone
        are the parameters' (`gather("rollout", stats)` and `gather("eval", scores)` make
        `rollout/` keys of the one and `eval/` keys of the other)."""
        if call is not None or flow is None or "{" not in rekey.replace("{}", "") or not any(f"{{{p}}}" in rekey for p in flow.params):
            return [call]
        callers = [c for c in self.callers(flow.name) if c.caller != flow.name]
        return list(callers) or [None]

    def _held(
        self, function: str, held: Held, hops: int, call: CallFlow | None, outer: Outer, pushed: tuple[str, str] | None = None
    ) -> Iterator[tuple[MetricsEntry, str]]:
        """The entries `held` stands for; `pushed`: the re-keying (and kept prefix) to put on the
        dict the caller passes before it is read, whose callers fill what it names (`_pushed`)."""
        path = _called(held, self._item_given(function, held.item, call) if call is not None and held.item else held.item)
        if path is None:
            return
        invoked = self.at.get(held.call) if held.call is not None and held.item[:1] == (INVOKED,) and held.kind != "result" else None
        for where, bag, at, back in self._sources(function, held, hops, call, outer):
            for inner, (owner, read_for, read_outer) in self._at(where, bag, path, hops, at, back, invoked):
                yield from self.entries(owner, rekeyed(inner, *pushed) if pushed is not None else inner, hops, read_for, read_outer)

    def _pushed(self, flow: FunctionFlow | None, held: Held, rekey: str, at: CallFlow | None) -> tuple[str, str] | None:
        """`held`'s re-keying as the caller at `at` names it, where a part of it is a parameter the
        caller passes on from its own (`logger.log_metrics(metrics, step, prefix)` in a fan-out
        whose callers each give a prefix): the caller's callers fill it, each for the dict it
        passes, not every caller's prefix for every dict. None for any other re-keying."""
        if held.kind != "param" or held.item or at is None or "{" not in rekey.replace("{}", ""):
            return None
        caller = self.project.functions.get(at.caller)
        renamed = _passed_on(flow, rekey, at, caller) if caller is not None else None
        return (renamed, "") if renamed is not None and not held.opts.kept else None

    def _item_given(self, function: str, path: tuple[str, ...], call: CallFlow) -> tuple[str, ...]:
        """`path` with an item named by a parameter (`table.get(key)`) read as the one string
        `call` passes for it (`fetch(out, "metrics")`); as it is where it passes none, or several."""
        if not any(part.startswith("{") for part in path):
            return path
        flow = self.project.functions.get(function)
        filled = [self._given_texts(flow, part, call) if part.startswith("{") else [part] for part in path]
        return tuple(texts[0] if len(texts) == 1 else part for part, texts in zip(path, filled))

    def _at(
        self,
        function: str,
        bag: Bag,
        path: tuple[str, ...],
        hops: int,
        call: CallFlow | None,
        outer: Outer,
        invoked: CallFlow | None = None,
    ) -> Iterator[tuple[Bag, tuple[str, CallFlow | None, Outer]]]:
        """The dicts `bag` (of `function`, read for `call`) holds at `path`, each with the
        function and call it is to be read for: its items of that name, or that item of what a
        dict it holds of elsewhere holds (an item of an item a callee returns). `invoked`: the
        call that calls the value the path's first INVOKED stands for (`step_fn(batch)` of a
        parameter), which the function found there is read for: its arguments are its
        parameters' (model.Held `call`). Each question is answered once: the same dict is met
        again and again through the many ways calls reach it, as `entries` meets it."""
        memo = (function, bag, path, hops, _span(call), tuple(_span(c) for c in outer), _span(invoked))
        found = self.at_memo.get(memo)
        if found is not None:  # no cycle reaches it again while it is read: each step adds a hop
            return iter(found)
        found = []
        if not path:
            found.append((bag, (function, call, outer)))
        deeper = [(held, path) for held in bag.held] if path else []
        for item in bag.items if path else ():
            if item.keys == path:
                found.append((Bag(item.entries, item.held), (function, call, outer)))
            elif path[: len(item.keys)] == item.keys:
                deeper += [(held, path[len(item.keys) :]) for held in item.held]
        for held, rest in deeper if hops < MAX_HOPS else ():
            found.extend(self._through(function, held, rest, hops, call, outer, invoked))
        self.at_memo[memo] = found
        return iter(found)

    def _through(
        self, function: str, held: Held, rest: tuple[str, ...], hops: int, call: CallFlow | None, outer: Outer, invoked: CallFlow | None
    ) -> Iterator[tuple[Bag, tuple[str, CallFlow | None, Outer]]]:
        """What a dict of elsewhere that `held` (of `function`) stands for holds at `rest` past
        its own item: a function value's past its call, an object's called as a function
        through its class's `__call__`."""
        inner = _called(held, held.item + rest)
        if held.rekey != "{}" or inner is None:
            return
        if held.kind == "result" and inner[:1] == (INVOKED,):
            # an object of a class of the project called as a function (`loss_fn = PolicyLoss(cfg)`,
            # then `loss_fn(batch)`) runs its `__call__`, the call's arguments after `self`
            method = replace(invoked, bound=True) if invoked is not None else None
            for target in self.targets(f"{held.name}.__call__"):
                yield from self._at(target.name, target.gives, inner[1:], hops + 1, method, ())
        for where, found, at, back in self._sources(function, held, hops + 1, call, outer):
            if held.kind == FUNCTION:
                yield from self._at(where, found, inner, hops + 1, invoked or at, back)
            else:
                yield from self._at(where, found, inner, hops + 1, at, back, invoked if inner[:1] == (INVOKED,) else None)

    def _sources(
        self, function: str, held: Held, hops: int, call: CallFlow | None, outer: Outer
    ) -> Iterator[tuple[str, Bag, CallFlow | None, Outer]]:
        """The dicts `held` stands for, each with the function it is of, the call it is read for
        and what that one's callers are (`Outer`): a parameter of a function read for a call
        is what that call's caller passes, read as it was read when it made the call."""
        back: tuple[CallFlow | None, Outer] = (outer[-1], outer[:-1]) if call is not None and outer else (None, ())
        if held.kind == "param":
            flow = self.project.functions.get(function)
            callers = [call] if call is not None else self.callers(function) if flow is not None else ()
            for caller in callers:
                if caller.caller == function:
                    continue  # a recursive call hands the function what it was handed: its own callers say what
                for where, bag in caller.bags:
                    if param_at(flow, where, caller.bound) == held.name:  # type: ignore[arg-type]
                        yield caller.caller, self._flattened(flow, held, bag, caller), *back
                keywords = _keywords_taken(flow, held.name, caller) if flow is not None and flow.any_keyword else None
                if keywords:
                    yield caller.caller, keywords, *back
        elif held.kind == "result":
            at = self.at.get(held.call) if held.call is not None else None
            for name in self._given_texts(self.project.functions.get(function), held.name, call) if "{" in held.name else (held.name,):
                for target in self.targets(name):  # a method named by the caller's string (`run_each("update")`)
                    yield target.name, _returned(target, held), at, (*outer, call)
        elif held.kind == FUNCTION:  # what the function returns, where it is called
            for target in self.targets(held.name):
                yield target.name, target.gives, None, ()
        elif held.kind == OVERRIDDEN:
            at = self.at.get(held.call) if held.call is not None else None
            callees = self.project.callees
            for target in overrides.runs(callees, held.name, str(held.where)) if callees is not None else ():
                yield target.name, _returned(target, held), at, (*outer, call)
        elif held.kind == "filled":
            at = self.at.get(held.call) if held.call is not None else None
            for callee, filled in self._fillers(held, at):
                if callee.name != function:  # a recursive call fills the dict with the function's own keys, no others
                    yield callee.name, filled, at, (*outer, call)
        elif held.kind == "constant":
            names = self.name_lists.resolve(held.name)
            if names is not None:
                yield f"{held.name.rsplit('.', 1)[0]}.<module>", names, None, ()
        elif held.kind == "attribute":
            owner, attribute = held.name.rsplit(".", 1)
            for where, bag in self.puts.get((self.families.root(owner), attribute), ()):
                yield from self._put_for(where, bag, _object(call, outer))

    def _flattened(self, flow: FunctionFlow | None, held: Held, bag: Bag, call: CallFlow) -> Bag:
        """The dict `call` passes, as the function that flattens it returns it (HeldOptions
        `flattens`), its keys joined by the separator the call passes or the parameter's default."""
        if not held.opts.flattens:
            return bag
        bag = Bag(bag.entries, bag.held, tuple(item for item in bag.items if not self._scalar(call.caller, item)))
        return _union(flattened(bag, joiner) for joiner in self._given_texts(flow, held.opts.flattens, call))

    def _scalar(self, function: str, item: Item) -> bool:
        """Whether a value of a dict that may hold a dict (a parameter of `function`: `{"optim":
        {"lr": lr}}` in `def log_step(lr)`; what a method of an object no file names returns:
        `{"peak": loads.max().item()}`) holds none its callers pass or the project's methods of
        that name return: then it is one value, whose key the flattening keeps, not a nested
        dict whose keys it would join."""
        if item.entries or not item.held or not all(h.kind == "param" or _unknown_result(h) for h in item.held):
            return False
        return not self.entries(function, Bag(held=item.held), 1, None)

    def _fanned(self, calls: Iterable[CallFlow]) -> dict[str, list[CallFlow]]:
        """The calls that may run several methods of the project's own (evidence/callees.py
        `fanned`: a front's calls of its backends, a family's method called on an object nothing
        names), by method: each is a caller of every one of them, whichever runs; `callers` holds
        only the calls that reach one function."""
        callees = self.project.callees
        fanned: dict[str, list[CallFlow]] = defaultdict(list)
        if callees is None:
            return fanned
        for call in calls:
            runs = callees.fanned(call.callee, call.caller)
            if runs and self.project.resolve(call.callee) is None:
                for method in runs:
                    fanned[method.name].append(call)
        return fanned

    def callers(self, function: str) -> Sequence[CallFlow]:
        """The calls that may run `function`: those that reach it alone, and those that may run
        it among others (`_fanned`)."""
        found = self.project.callers.get(function, ())
        more = self.fanned.get(function)
        return [*found, *more] if more else found

    def _fields_made(self, calls: Iterable[CallFlow]) -> None:
        """A call of a class of the project that has no `__init__` of its own or of a base (a
        dataclass, a pydantic model: `Rollout(tokens=t, info=info)`) sets each field it names
        by keyword: what it passes there is put in that attribute, as `self.info = info` puts
        it in a class whose `__init__` does so."""
        callees = self.project.callees
        if callees is None:
            return
        fields: dict[str, str | None] = {}  # callee -> the family of the class it makes, if such a class
        for call in calls:
            if not call.bags:
                continue
            if call.callee not in fields:
                made = callees.hierarchy.base(call.callee) if class_like(call.callee) else None
                fields[call.callee] = self.families.root(made.name) if made is not None and not callees.resolve(call.callee) else None
            family = fields[call.callee]
            if family is None:
                continue
            for where, bag in call.bags:
                if isinstance(where, str):
                    self.puts[(family, where)].append((call.caller, bag))

    def _put_for(self, where: str, bag: Bag, reached: str) -> Iterator[tuple[str, Bag, CallFlow | None, Outer]]:
        """What the method `where` put in an attribute, as the object it is read of holds it.
        Where that object was reached through another object's attribute (`reached`, `_object`)
        and the method is called through such attributes (a setter: `self.actor.set_loss_fn(f)`,
        `self.critic.set_loss_fn(g)`), only its calls through that same attribute put anything
        in this object: each is read for what that call passes. Where the object was not so
        reached, the method's calls through several objects' attributes put things in several
        objects, of which the one read is not known: none is taken. A method that puts more than
        what it is handed (`self.times[name] = elapsed`) puts alike in every object: all are taken."""
        if bag.entries or bag.items or not all(h.kind == "param" and not h.item for h in bag.held):
            yield where, bag, None, ()
            return
        callers = self.callers(where)
        objects = {_receiver(c) for c in callers if _object(c, ())}
        if reached in objects:
            yield from ((where, bag, c, ()) for c in callers if _receiver(c) == reached)
        elif not (reached and objects) and len(objects) < 2:
            yield where, bag, None, ()

    def _read_for(
        self, flow: FunctionFlow | None, function: str, entries: Iterable[MetricsEntry], call: CallFlow | None
    ) -> Iterator[tuple[MetricsEntry, str]]:
        """Entries of `function` read for `call`, each with the function whose parameters its key
        names: the caller's, when the call passes one of the caller's own parameters for a
        parameter the key names (`_timer(name, timings)` in `def marked(name, timings)`), so that
        the caller's callers fill it (`with marked("gen", timings)`)."""
        caller = self.project.functions.get(call.caller) if call is not None else None
        for entry in self._given(flow, entries, call):
            named = _passed_on(flow, entry.key, call, caller) if caller is not None and keys.is_template(entry.key) else None
            if named is None:
                yield entry, function
            else:
                yield self._kept(entry, entry.renamed(named)), caller.name  # type: ignore[union-attr]

    def _fillers(self, held: Held, at: CallFlow | None) -> list[tuple[FunctionFlow, Bag]]:
        """The functions a call that fills a dict (`held`) runs, each with what it puts in the
        dict. A name that reaches no one definition (a package that picks one of several at
        import time and re-exports it with `import *`) runs one of the project's functions of
        that name under the package it is imported from: all of them, when every one fills
        the dict; none, when one does not."""
        found = self.project.resolve(held.name)
        named = [found] if found is not None else self._named_like(held.name)
        fillers = []
        for callee in named:
            param = param_at(callee, held.where, at.bound if at is not None else False) if held.where is not None else None
            filled = (dict(callee.fills).get(param) or self._handed_on(callee, param)) if param is not None else None
            if not filled:
                return []
            fillers.append((callee, filled))
        return fillers

    def _handed_on(self, flow: FunctionFlow, param: str) -> Bag:
        """What the calls a function hands its parameter to put in it, where the function puts
        nothing there itself (`forward_step(..., store)` passing `store` on to the helper that
        appends to it)."""
        handed = (
            Held("filled", call.callee, call=call.span, where=where)
            for call in self.made_in.get(flow.name, ())
            if call.caller != call.callee
            for where, bag in call.bags
            if any(h.kind == "param" and h.name == param and not h.item and h.rekey == "{}" for h in bag.held)
        )
        return Bag(held=tuple(handed))

    def _named_like(self, name: str) -> list[FunctionFlow]:
        """The project's functions named as `name` ends, under its top package (`pkg.utils.timer`
        for `pkg.debug.timer`)."""
        callees = self.project.callees
        if "." not in name or callees is None:
            return []
        package = "." + name.split(".", 1)[0] + "."
        return [flow for flow in callees.named.named_like(name) if package in "." + flow.name]

    def _given(self, flow: FunctionFlow | None, entries: Iterable[MetricsEntry], call: CallFlow | None) -> Iterator[MetricsEntry]:
        """Entries whose keys name `flow`'s parameters, filled with what `call` passes for them."""
        for entry in entries:
            given = self._given_for(flow, entry.key, call)
            for key in keys.filled(entry.key, given) if given else (entry.key,):
                if key == entry.key:
                    yield entry
                    continue
                made = self._kept(entry, entry.renamed(key))
                self.given[made] = (flow.name, frozenset(given))  # type: ignore[union-attr]
                if _label_filled(flow, entry, key):
                    self.labelled.add(made)
                yield made

    def _kept(self, entry: MetricsEntry, made: MetricsEntry) -> MetricsEntry:
        """`made`, from `entry`, labelled as `entry` is."""
        if entry in self.labelled:
            self.labelled.add(made)
        return made

    def _rekeys(self, flow: FunctionFlow | None, held: Held, at: CallFlow | None) -> list[tuple[str, str]]:
        """`held`'s re-keying and the prefix a key keeps (model.Held `kept`), each filled alike
        with the strings `at` passes for the parameters they name."""
        if not held.opts.kept:
            return [(rekey, "") for rekey in self._given_texts(flow, held.rekey, at)]
        return [tuple(filled.split("\0", 1)) for filled in self._given_texts(flow, f"{held.rekey}\0{held.opts.kept}", at)]  # type: ignore[misc]

    def _rekeyed(self, entry: MetricsEntry, rekey: str, kept: str = "") -> MetricsEntry:
        key = keys.rekey(rekey, entry.key, kept)
        if key == entry.key:
            return entry
        made = self._kept(entry, entry.renamed(key))
        if entry in self.given:
            self.given[made] = self.given[entry]
        return made

    def _given_texts(self, flow: FunctionFlow | None, template: str, call: CallFlow | None) -> list[str]:
        """`template` with each placeholder that names a parameter of `flow` filled with the
        strings `call` passes for it (`{prefix}{}` for `dict_add_prefix(d, "rollout/")`)."""
        given = self._given_for(flow, template, call)
        return keys.filled(template, given) if given else [template]

    def _given_for(self, flow: FunctionFlow | None, template: str, call: CallFlow | None) -> dict[str, tuple[str, ...]]:
        """The strings `call` passes for each parameter of `flow` that `template` names (its
        default where the call passes nothing), and those of the parts it reads from an
        object's attribute (`_attribute_parts`); none when they would make too many keys."""
        if flow is None or "{" not in template.replace("{}", ""):
            return {}
        given = self._attribute_parts(flow, template)
        if call is not None:
            given |= {
                p: texts
                for p in flow.params
                if f"{{{p}}}" in template
                for where, texts in call.texts
                if where in (p, passed_at(flow, p, call.bound))
            }
            given |= {p: (text,) for p, text in flow.defaults if p not in given and f"{{{p}}}" in template and not _passes(flow, p, call)}
        return given if math.prod(len(t) for t in given.values()) <= keys.MAX_VALUES else {}

    def _attribute_parts(self, flow: FunctionFlow, template: str) -> dict[str, tuple[str, ...]]:
        """The strings each placeholder of `template` read from an object's attribute may be,
        as the object's class sets it (`{joiner}` of `f"{stage}{meter.joiner}{k}"` is what
        Meter's constructor stores in `joiner` by default)."""
        callees = self.project.callees
        if not flow.attribute_parts or callees is None:
            return {}
        found = {part: callees.hierarchy.strings(held) for part, held in flow.attribute_parts if f"{{{part}}}" in template}
        return {part: texts for part, texts in found.items() if texts}

    def _filled(self, function: str, entry: MetricsEntry) -> list[tuple[str, Span]]:
        """The keys an entry's key template makes with the strings its function's callers pass
        for the parameters it names (`record(name, value)` called as `record("perf/wps", x)`),
        each at that call; the key as it is, at its own place, when no caller passes one."""
        flow = self.project.functions.get(function)
        owner, filled = self.given.get(entry, ("", frozenset()))
        done = filled if owner == function else frozenset()
        named = (
            [p for p in flow.params if f"{{{p}}}" in entry.key and p not in done]
            if flow is not None and keys.is_template(entry.key)
            else []
        )
        made: list[tuple[str, Span]] = []
        defaults = dict(flow.defaults) if named else {}  # type: ignore[union-attr]
        for call in self.callers(function) if named else ():
            if call.caller == function:
                continue  # a recursive call passes the function's own parameter on: it names no key of its own
            given = {p: texts for p in named for where, texts in call.texts if where in (p, passed_at(flow, p, call.bound))}  # type: ignore[arg-type]
            given |= {p: (defaults[p],) for p in named if p not in given and p in defaults and not _passes(flow, p, call)}  # type: ignore[arg-type]
            looped = each_key(flow, named, call, self.looped_texts)  # type: ignore[arg-type]
            given |= looped
            if len(given) != len(named) or math.prod(len(t) for p, t in given.items() if p not in looped) > keys.MAX_VALUES:
                continue
            made += [(key, call.span) for key in keys.filled(entry.key, given)]
        # no call passes them: the defaults, where they fill a section (`{section}/widest`); a
        # default for the whole name (`{name}`, "Table") is a caller's to choose
        if not made and named and all(p in defaults for p in named) and not keys.too_generic(entry.key):
            made += [(key, entry.span) for key in keys.filled(entry.key, {p: (defaults[p],) for p in named})]
        return made or [(entry.key, entry.span)]

    def looped_texts(self, call: CallFlow, bag: Bag) -> tuple[str, ...]:
        """The keys a key argument of `call` built from a loop's key over a dict stands for, one
        per entry of that dict (CallFlow.keyed), as the project-wide step finds them:
        `log_scalar(f"train/{k}", v)` in a loop over what `train_step` returns passes each of
        that dict's keys, under `train/`."""
        return tuple(dict.fromkeys(e.key for e, _ in self.entries(call.caller, bag, 0, None) if not keys.too_generic(e.key)))


def _unknown_result(held: Held) -> bool:
    return held.kind == "result" and held.name.startswith(UNKNOWN_OBJECT)


def _builds_keys(bag: Bag) -> bool:
    """Whether a helper's bag holds a key its callers fill: a template it writes, or the items
    of a parameter it puts under keys of its own making (`f"{head}{}"`)."""
    return any(keys.is_template(e.key) for e in bag.entries) or any(h.kind == "param" and h.rekey != "{}" for h in bag.held)


def _union(bags: Iterable[Bag]) -> Bag:
    found = Bag()
    for bag in bags:
        found |= bag
    return found


def _keywords_taken(flow: FunctionFlow, param: str, call: CallFlow) -> Bag | None:
    """What a function's `**kwargs` parameter (`param`, its last) holds for one call: each
    keyword the call passes that none of its other parameters is named (`record(step,
    loss=loss)` into `def record(self, step, **metrics)`), and the entries of a dict it passes as
    `**stats` (model.KEYWORDS); None where `param` is no `**kwargs`."""
    if param != flow.params[-1]:
        return None
    named = frozenset(flow.params)
    found = Bag(tuple(MetricsEntry(k, call.span, atoms, True) for k, atoms in call.args if isinstance(k, str) and k not in named))
    for where, bag in call.bags:
        if where == KEYWORDS:
            found |= Bag(tuple(e for e in bag.entries if e.key not in named), bag.held, bag.items)
    return found


def _returned(target: FunctionFlow, held: Held) -> Bag:
    """What `target` returns to the call `held` is the result of: what it returns on its
    default path, and what it returns under a flag that call passes (FunctionFlow.gives_when)."""
    found = target.gives
    for flag, bag in target.gives_when:
        position = target.params.index(flag) - int(target.bound) if flag in target.params else held.opts.positional
        if "*" in held.opts.passed or flag in held.opts.passed or position < held.opts.positional:
            found |= bag
    return found


def _span(call: CallFlow | None) -> Span | None:
    return call.span if call is not None else None


def _receiver(call: CallFlow) -> str:
    """What a method call is made on, as its callee names it: `pkg.Worker.actor` for
    `self.actor.update(...)` in a method of `pkg.Worker`."""
    return call.callee.rsplit(".", 1)[0]


def _object(call: CallFlow | None, outer: Outer) -> str:
    """The attribute of another object through which the calls being read reached the object
    whose method is read (`self.actor.update(...)` in `pkg.Worker`: "pkg.Worker.actor"), past the
    calls a class makes of its own methods (`self.step(...)`); "" where another kind of call
    comes first, or none."""
    for each in (call, *reversed(outer)):
        if each is None:
            return ""
        owner, receiver = each.caller.rsplit(".", 1)[0], _receiver(each)
        if receiver != owner:
            return receiver if receiver.rsplit(".", 1)[0] == owner else ""
    return ""


def _called(held: Held, path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The path to read in what `held` stands for: of a function value, the path past its call,
    or None where the function is not called (a function holds no dict of metrics)."""
    if held.kind != FUNCTION:
        return path
    return path[1:] if path[:1] == (INVOKED,) else None


def _passes(flow: FunctionFlow, param: str, call: CallFlow) -> bool:
    """Whether `call` passes anything the walk saw for `param` (a string, a value, a dict):
    else it has its default."""
    where = passed_at(flow, param, call.bound)
    return any(w in (param, where) for w, _ in (*call.args, *call.texts, *call.bags, *call.attributes))


def _passed_on(flow: FunctionFlow | None, template: str, call: CallFlow | None, caller: FunctionFlow) -> str | None:
    """`template` with each placeholder that names a parameter of `flow` for which `call` passes
    a parameter of `caller` as it is renamed to that one; None when it names none such."""
    if flow is None or call is None:
        return None
    renamed: dict[str, str] = {}
    for param in flow.params:
        if f"{{{param}}}" not in template:
            continue
        for where, bag in call.bags:
            if where in (param, passed_at(flow, param, call.bound)):
                held = bag.held[0] if len(bag.held) == 1 and not bag.entries and not bag.items else None
                if held is not None and held.kind == "param" and held.rekey == "{}" and not held.item and held.name in caller.params:
                    renamed[param] = held.name
    if not renamed:
        return None
    return _PLACEHOLDER.sub(lambda m: "{" + renamed.get(m.group(1), m.group(1)) + "}", template)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _label_filled(flow: FunctionFlow | None, entry: MetricsEntry, key: str) -> bool:
    """Whether filling the entry's key made `key` by putting a caller's text in place of its
    whole last segment (`times[name] = elapsed` in `def timer(name, times)`), for a value the
    function measures itself: the text labels what was measured (a stage), and names no value a
    text may document under it. A value the caller passes with its name (`def record(name,
    value)`) is named by it."""
    last = entry.key.rsplit("/", 1)[-1]
    if flow is None or not (last.startswith("{") and last.endswith("}") and last[1:-1] in flow.params) or "{" in key.rsplit("/", 1)[-1]:
        return False
    filled = {param for param, _ in flow.fills}
    return not any(isinstance(atom, str) and atom in flow.params and atom != last[1:-1] and atom not in filled for atom in entry.value)


def logged_entries(bags: LoggedBags, own_methods: frozenset[Span] = frozenset()) -> list[LoggedEntry]:
    """Every entry logged through a dict that crosses functions, once per key and place; keys
    still too generic to name a metric (`{name}`, `train/{key}`) are left out, but for a family's
    (`eval/downstream/{label}_{metric}`, MetricsEntry.family)."""
    unique = {(e.use.key, e.use.span): e for e in bags.logged(own_methods) if e.family or not keys.too_generic(e.use.key)}
    return list(unique.values())
