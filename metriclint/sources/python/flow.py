"""Data flow inside one function: which values each name may hold, and where they go.

A parameter documented as "norm after clipping" and logged as `{"train/grad_norm": total}` is
known to describe `train/grad_norm` only if the value gets there unchanged; only the
value-preserving steps of rules/dataflow.yaml carry the link. What leaves a function (logged
keys, returns) is summarised for the project-wide step (evidence/code_claims.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping

from metriclint.base.builtin import word_lists
from metriclint.model import Atom, Bag, CodeFact, FunctionFlow, HandOver, Item, LoggedBag, MetricsEntry, Reducer, Related, Span
from metriclint.sources.python.attribute_strings import string_defaults
from metriclint.sources.python.ranks import LocalFact


@dataclass(frozen=True, slots=True)
class FlowRules:
    preserving_functions: frozenset[str]
    preserving_methods: frozenset[str]
    rank_counts: frozenset[str] = frozenset()  # parameter names for the number of ranks (reducers.py)
    replaced_per_key: frozenset[str] = frozenset()  # facets a per-key reduction over the ranks replaces
    gathers: tuple[str, ...] = ()  # words in the name of a call that gathers from the ranks
    group_sizes: frozenset[str] = frozenset()  # a process group's attributes for its number of ranks
    zeros: frozenset[str] = frozenset()  # calls that make a zero tensor of a constant shape (a placeholder)
    zero_tensors: frozenset[str] = frozenset()  # calls that make a tensor of the number given (`tensor(0.0)`)
    dispatchers: frozenset[str] = frozenset()  # calls and decorators that make a class's methods run elsewhere (`ray.remote`)
    remote_calls: frozenset[str] = frozenset()  # `handle.method.remote(...)`: the method's own name is one step up
    fetches: frozenset[str] = frozenset()  # calls that return what a remote call's reference stands for (`ray.get`)
    results: frozenset[str] = frozenset()  # a future's methods that, given no argument, return what its call returns (`out.get()`)
    wrappers: frozenset[str] = frozenset()  # calls that put one value in a tensor or an array (`torch.tensor([x])`)
    wrapper_names: frozenset[str] = frozenset()  # their last names, asked first: most calls are none of them
    deferred: frozenset[str] = frozenset()  # calls that call their first argument with the rest (`pool.submit(f, x)`)
    binds: frozenset[str] = frozenset()  # of those, calls that return their first argument with the rest bound (`partial`)
    items: frozenset[str] = frozenset()  # methods that read one item of a dict by its key (`batch.pop("labels")`)
    attributes: frozenset[str] = frozenset()  # attributes that hold their object's values (`x.data`)
    mapped_first: frozenset[str] = frozenset()  # calls that map each leaf of their first argument (`apply_to_collection`)
    mapped_second: frozenset[str] = frozenset()  # calls that map each leaf of their second argument (`tree_map(f, tree)`)


@lru_cache(maxsize=1)
def flow_rules() -> FlowRules:
    lists = word_lists("dataflow.yaml")
    return FlowRules(
        frozenset(lists.get("value_preserving.functions", ())),
        frozenset(lists.get("value_preserving.methods", ())),
        frozenset(lists.get("per_key.rank_counts", ())),
        frozenset(lists.get("per_key.replaces", ())),
        lists.get("per_key.gathers", ()),
        frozenset(lists.get("per_key.group_sizes", ())),
        frozenset(lists.get("placeholders.zeros", ())),
        frozenset(lists.get("placeholders.tensors", ())),
        frozenset(lists.get("dispatch.wrappers", ())),
        frozenset(lists.get("dispatch.calls", ())),
        frozenset(lists.get("dispatch.fetches", ())),
        frozenset(lists.get("dispatch.results", ())),
        frozenset(lists.get("value_preserving.wrappers", ())),
        frozenset(w.rsplit(".", 1)[-1] for w in lists.get("value_preserving.wrappers", ())),
        frozenset(lists.get("deferred", ())),
        frozenset(lists.get("binds", ())),
        frozenset(lists.get("value_preserving.items", ())),
        frozenset(lists.get("value_preserving.attributes", ())),
        frozenset(lists.get("mapped.first", ())),
        frozenset(lists.get("mapped.second", ())),
    )


Branch = tuple[frozenset[Atom], bool]  # what a value may be on one path, and whether it is computed in a way not known


def either(first: Branch, second: Branch) -> Branch:
    """A value that is one path's or the other's (a branch's assignment, `a if c else b`):
    what either may be, or nothing known if either is computed in a way not known, since what
    the other path computes then holds only on that path."""
    unknown = first[1] or second[1]
    return (frozenset() if unknown else first[0] | second[0]), unknown


def shared(items: Iterable[frozenset[Atom]], facets: frozenset[str]) -> frozenset[Atom]:
    """What a list or tuple of values is: the facts of `facets` (what each item is, not how it
    was reduced: rules/code/elements.yaml) that every item has; nothing for no items."""
    common: set[tuple[str, str]] | None = None
    found: set[CodeFact] = set()
    for atoms in items:
        facts = {a for a in atoms if isinstance(a, CodeFact) and a.facet in facets}
        pairs = {(f.facet, f.value) for f in facts}
        common = pairs if common is None else common & pairs
        if not common:
            return frozenset()
        found |= facts
    return frozenset(f for f in found if common is not None and (f.facet, f.value) in common)


@dataclass(frozen=True, slots=True)
class LoopShape:
    """What a `for` loop's body does, worked out once per loop (bindings.loop_shape, for `Bindings._overwritten`)."""

    varying: frozenset[str]  # names whose value changes from one iteration to the next
    called_on: frozenset[str]  # names whose methods it calls (`seen.append(x)`): a key read from one changes too
    logged: frozenset[str]  # names it hands whole to a sink (rules/sinks.yaml) in each iteration
    leaves: bool  # whether an iteration may end it early (`break`, `return`, `yield`)


@dataclass(slots=True)
class Scope:
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
    sites: dict[int, Span] = field(default_factory=dict)  # sink -> where it is logged, when a call or key of this file logs it
    returns: dict[int | None, frozenset[Atom]] = field(default_factory=dict)
    strings: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> the strings it may be (strings.py)
    kept_prefixes: dict[str, str] = field(default_factory=dict)  # name -> the prefix its key gets unless it has it (strings.prefix_kept)
    collections: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> the strings a loop over it yields
    # name -> the names its value went by, each with the node it is written at (its span made when asked: roots.py `names`)
    named: dict[str, tuple[tuple[str, ast.Name | ast.Attribute], ...]] = field(default_factory=dict)
    loops: list[int] = field(default_factory=list)  # ids of the bodies of the loops the walk is in
    iterating: list[ast.For | ast.AsyncFor | ast.While] = field(default_factory=list)  # the loops the walk is in
    definition: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    at_boundary: int = 0  # how many tests that the accumulation window ends (rules/code/loops.yaml `boundaries`) the walk is under
    # loop id (0: none) -> the names that hold one micro-batch's data or what is computed from it (bindings.py), once asked
    micro_batch: dict[int, set[str]] = field(default_factory=dict)
    loop_spans: tuple[tuple[int, int, frozenset[str]], ...] | None = None  # its loops' lines and the names they bind, once asked (bags.py)
    loop_shapes: dict[int, LoopShape] = field(default_factory=dict)  # loop id -> what its body does (bindings.loop_shape), once asked
    counters: set[str] = field(default_factory=set)  # names counted up by one in a loop (`n += 1`)
    mask_counts: dict[str, ast.expr] = field(default_factory=dict)  # names bound to a mask's sum (`n = mask.sum()`) -> that sum
    generic: list[str] = field(default_factory=list)  # keys too generic to log, built from a parameter: `{section}/{key}`
    stepped: dict[str, Related | None] = field(
        default_factory=dict
    )  # receivers of a scheduler step() seen so far, as written -> the caller's step when it came before the call (held.py)
    framework_stepped: Related | None = None  # a hook its framework calls after stepping the scheduler (rules/code/schedules.yaml)
    placeholders: dict[str, tuple[tuple[int, ...], str, Span]] = field(
        default_factory=dict
    )  # name -> (block path, constant, span) of `x = 0`
    owns: bool = False  # whether this rank's own values (ranks.LocalFact) were made here: else no name holds one
    batches: set[str] = field(default_factory=set)  # names that hold the batch of a loop over a data loader, or a part of a handed batch
    unknown: set[str] = field(default_factory=set)  # names that, on some path, hold a value computed in a way not known
    lists: dict[str, bool] = field(default_factory=dict)  # names bound to a list written out (`[]`) -> whether it has items
    stored: dict[str, list[int]] = field(default_factory=dict)  # dict name -> the sinks of the values put in it (`d["k"] = v`)
    handed: dict[int, list[HandOver]] = field(default_factory=dict)  # sink -> the calls its dict is handed to after
    gathered: dict[str, str] = field(default_factory=dict)  # name -> the parameter it holds what a gather call collected for
    reducers: list[Reducer] = field(default_factory=list)  # what it does to every value of a dict parameter (reducers.py)
    looped: bool = False  # whether the walk met a `for` statement in it: reducers.py looks for loops only in such a function
    recursive: bool = False  # whether it calls a function of its own name after a `for`: flatteners.py reads only such a function
    gathering: bool = False  # whether it assigns what a call named as a gather returns: reducers.py reads its comprehensions only then
    bags: dict[str, Bag] = field(default_factory=dict)  # name -> the dict of metrics (or list of records) it holds (bags.py)
    defs: dict[str, str] = field(default_factory=dict)  # name -> the function defined in its body under it, dotted (FunctionFlow.name)
    results: dict[str, ast.Call] = field(default_factory=dict)  # name -> the call whose result it holds, which may be a dict
    rebound: list[tuple[tuple[int, ...], dict[str, Bag]]] = field(
        default_factory=list
    )  # per `if` branch the walk is in: its block path, and what the names bound right in it held before (bag_puts.py)
    keyvars: dict[str, Bag] = field(default_factory=dict)  # a loop's key variable -> the bag whose keys it takes
    rebound_params: set[str] = field(default_factory=set)  # parameters bound again wherever read after: no caller's value
    # names of a TypedDict of families (annotated.family_table), the families' dicts a loop over one
    # binds (`for name, by_module in table.items()`), and the key variables of loops over those
    family_tables: set[str] = field(default_factory=set)
    family_dicts: set[str] = field(default_factory=set)
    family_keys: set[str] = field(default_factory=set)
    logged: list[LoggedBag] = field(default_factory=list)  # bags logged here that hold entries of elsewhere
    gives: Bag = Bag()  # the bag it returns (a frozen Bag: one empty one serves every scope)
    gives_when: dict[str, Bag] = field(default_factory=dict)  # flag parameter -> the bag it returns only under `if flag:`
    puts: dict[str, Bag] = field(default_factory=dict)  # module.Class.attr -> what it puts in that attribute
    elements: dict[str, str] = field(default_factory=dict)  # name -> the class of a list's elements (`samples: list[Sample]`)
    nested: dict[str, str] = field(default_factory=dict)  # name -> the class of its elements' elements (`groups: list[list[Sample]]`)
    # name -> the dict it is another name for: an attribute's (`metrics = self.metrics`) or a dict's item (`logs = info["logs"]`)
    aliases: dict[str, ast.expr] = field(default_factory=dict)
    # placeholder -> module.Class.attr of the object a key part reads it from ("" when two disagree)
    attribute_parts: dict[str, str] = field(default_factory=dict)
    # name -> the object and attribute it is bound to (`sep = tracker.sep`; made when first needed)
    attribute_reads: dict[str, tuple[str, str]] | None = None
    fills: dict[str, Bag] = field(default_factory=dict)  # parameter -> what it puts in the dict the parameter is
    handed_bags: list[Bag] = field(default_factory=list)  # the dicts of metrics it hands to calls
    makes: str | None = None  # the class it returns an instance of ("" when its returns disagree)
    containers: set[str] = field(default_factory=set)  # parameters annotated as dicts (`timing: dict[str, float]`)
    globals: set[str] = field(default_factory=set)  # names a `global` statement makes the module's
    instances: dict[str, str] = field(default_factory=dict)
    known: Mapping[str, str] = field(
        default_factory=dict
    )  # its instances, then the module's (set by the walk)  # name -> the class it holds an instance of, dotted as imported

    def roots(self, name: str) -> frozenset[Atom]:
        return self.carries[name][0] if name in self.carries else frozenset({name})

    def replaces(self, name: str, path: tuple[int, ...]) -> bool:
        """Whether an assignment at `path` replaces what `name` held (else it may hold either)."""
        old_path = self.carries[name][1] if name in self.carries else self.body or ()
        return old_path[: len(path)] == path

    def bind(self, name: str, atoms: frozenset[Atom], path: tuple[int, ...], unknown: bool = False) -> None:
        """`unknown`: the value is computed in a way not known (`total / active`). An assignment
        that may not run leaves the name holding either value (`either`)."""
        if not self.replaces(name, path):
            old_atoms = self.carries[name][0] if name in self.carries else frozenset({name}) if name in self.params else frozenset()
            atoms, unknown = either((atoms, unknown), (old_atoms, name in self.unknown))
        elif name in self.params:
            self.rebound_params.add(name)
        self.carries[name] = (atoms, path)
        if unknown:
            self.unknown.add(name)
        else:
            self.unknown.discard(name)
        self.batches.discard(name)
        self.lists.pop(name, None)

    def bind_strings(self, name: str, found: tuple[str, ...] | None, path: tuple[int, ...]) -> None:
        """Call before `bind`: whether the old strings stay possible depends on the old path.
        A name bound for the first time, even in a branch, holds what it is bound to wherever
        it is read (elsewhere it holds nothing): `if x: prefix = f"eval/{name}"`."""
        if (name in self.carries or name in self.params or name in self.globals) and not self.replaces(name, path):
            found = tuple(dict.fromkeys((*self.strings.get(name, ()), *(found or ())))) if name in self.strings else None
        if found:
            self.strings[name] = found
        else:
            self.strings.pop(name, None)

    def keys_of(self, param: str) -> tuple[str, ...]:
        """The keys the parameter's value is logged under here, or put under in a dict of
        metrics that another function logs (`{"grad_norm": grad_norm}` handed to a logger)."""
        put = (e.key for bag in self._metric_bags() for e in bag.entries if param in e.value)
        return tuple(dict.fromkeys((*(key for key, roots in self.sinks if param in roots), *put)))

    def keys_of_returned(self) -> tuple[str, ...]:
        """The keys the function logs here, or puts in a dict of metrics, whose value is the one
        it returns (`return loss` after logging `loss`), as far as their atoms tell."""
        returned = self.returns.get(None)
        if not returned:
            return ()
        put = (e.key for bag in self._metric_bags() for e in bag.entries if e.value == returned)
        return tuple(dict.fromkeys((*(key for key, atoms in self.sinks if atoms == returned), *put)))

    def _metric_bags(self) -> tuple[Bag, ...]:
        """Every dict of metrics the function holds, fills, stores or hands on."""
        return (*self.bags.values(), *self.puts.values(), *self.fills.values(), self.gives, *self.handed_bags)

    def kept(self, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """What the project-wide step can follow: parameters, facts and calls, not other names;
        not this rank's own values (ranks.LocalFact), which a caller or callee may reduce."""
        return frozenset(a for a in atoms if (not isinstance(a, str) or a in self.params) and not isinstance(a, LocalFact))

    def local(self, name: str) -> bool:
        """Whether the name holds this rank's own value (ranks.LocalFact)."""
        return name in self.carries and any(isinstance(a, LocalFact) for a in self.carries[name][0])

    def unshared(self, name: str) -> None:
        """A call metriclint cannot see into took the name's value: it may have reduced it."""
        if name in self.carries:
            atoms, path = self.carries[name]
            self.carries[name] = (frozenset(a for a in atoms if not isinstance(a, LocalFact)), path)

    def flow(self) -> FunctionFlow | None:
        """The function's summary for the project-wide step; None when nothing leaves it."""
        kept = self.kept
        leaving = [(index, key, left) for index, (key, atoms) in enumerate(self.sinks) if (left := kept(atoms))]
        sinks = tuple((key, atoms) for _, key, atoms in leaving)
        handed = tuple((n, tuple(self.handed[index])) for n, (index, _, _) in enumerate(leaving) if index in self.handed)
        sites = tuple((n, self.sites[index]) for n, (index, _, _) in enumerate(leaving) if index in self.sites)
        returns = tuple((element, left) for element, atoms in self.returns.items() if (left := kept(atoms)))
        templates = tuple(dict.fromkeys([*(key for key, _ in self.sinks if any(f"{{{p}}}" in key for p in self.params)), *self.generic]))
        puts = tuple((attribute, self.thinned(bag)) for attribute, bag in self.puts.items())
        fills = tuple((param, self.thinned(bag)) for param, bag in self.fills.items())
        if not (self.params or sinks or returns or self.logged or self.gives or puts or fills or self.makes):
            return None
        return FunctionFlow(
            self.name,
            self.params,
            self.bound,
            sinks,
            returns,
            templates,
            handed,
            tuple(self.reducers),
            tuple(self.logged),
            self.thinned(self.gives),
            puts,
            fills,
            self.makes or "",
            sites,
            self._defaults(),
            self.definition is not None and _shell(self.definition.body),
            self.definition is not None and self.definition.args.kwarg is not None,
            tuple((flag, self.thinned(bag)) for flag, bag in self.gives_when.items()),
            tuple((part, held) for part, held in self.attribute_parts.items() if held),
            bool(self.sinks or self.logged),
        )

    def default_string(self, param: str) -> str | None:
        """The string a parameter of the function defaults to, if one is written out."""
        return dict(self._defaults()).get(param) if param in self.params else None

    def _defaults(self) -> tuple[tuple[str, str], ...]:
        """The parameters that default to a string (`prefix: str = "rollout/moe"`), each with it."""
        node = self.definition
        if node is None or not (node.args.defaults or node.args.kw_defaults):
            return ()
        return tuple(string_defaults(node.args).items())

    def thinned(self, bag: Bag) -> Bag:
        """The bag as the project-wide step can follow it: its values `kept`, its items' too."""
        if not (bag.entries or bag.items):
            return bag
        items = tuple(Item(i.keys, self._thinned(i.entries), i.held) for i in bag.items)
        return Bag(self._thinned(bag.entries), bag.held, items)

    def _thinned(self, entries: tuple[MetricsEntry, ...]) -> tuple[MetricsEntry, ...]:
        return tuple(e.valued(self.kept(e.value)) for e in entries)

    def hands_on(self, name: str) -> bool:
        """Whether `hand_over` of `name` would change anything: values were put in it, or it is
        a dict parameter or what was gathered for one."""
        return bool(self.stored.get(name)) or self._handed_param(name) is not None

    def hand_over(self, name: str, over: HandOver, replaces: frozenset[str]) -> None:
        """`name` is passed to a project function: the values put in it so far go with it, and
        a dict parameter (or what was gathered for it) goes on to what that function does."""
        for index in self.stored.get(name, ()):
            self.handed.setdefault(index, []).append(over)
        param = self._handed_param(name)
        if param is not None:
            self.reducers.append(Reducer(param, True, frozenset(), replaces, over))

    def _handed_param(self, name: str) -> str | None:
        """The dict parameter `name` is, or holds what a gather call collected for; else None."""
        return name if name in self.params and name not in self.carries else self.gathered.get(name)


def _shell(body: list[ast.stmt]) -> bool:
    """A body that does nothing: a docstring, `pass` or `...`, alone or together, or that only
    raises NotImplementedError (an abstract method, which a subclass's definition replaces)."""
    return all(
        isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) or _not_implemented(s) for s in body
    )


def _not_implemented(statement: ast.stmt) -> bool:
    """`raise NotImplementedError`, with or without a message."""
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return False
    raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
