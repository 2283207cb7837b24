"""What the code computes and how values flow through it: code facts, function and call
summaries, and what the project's code makes together (model/__init__.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, TypeVar, Union

from metriclint.base import keys
from metriclint.model.core import KeyUse, Related, Span, TooltipTable


@dataclass(frozen=True, slots=True)
class Placeholder:
    """The constant a value holds unless a flag is set: `stat = 0.0`, then `if args.track:
    stat = max(...)` in the same block, and the value logged whatever the flag."""

    flag: str  # the test as written: "args.track"
    constant: str  # as written: "0.0"
    span: Span  # the constant's assignment

    @property
    def flag_name(self) -> str:
        """The name the flag is defined under: `args.track` -> `track`."""
        return self.flag.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class FlagDefault:
    """A flag the project defines (an argparse option, a config field) and whether it is off
    unless given: `add_argument("--track", action="store_true")`, `track: bool = False`."""

    name: str  # as the code reads it: `args.track` reads `track`
    off: bool
    span: Span


@dataclass(frozen=True, slots=True)
class CodeFact:
    """What the code computes: the value made at `span` by `origin` has `facet` = `value`."""

    facet: str
    value: str
    span: Span
    origin: str  # the call or expression, as a reader would name it: "torch.nn.utils.clip_grad_norm_"
    says: str  # why, from the knowledge base: "returns the total norm computed before clipping"
    placeholder: Placeholder | None = None  # only when its flag is set; else the value is a constant
    also: tuple[str, ...] = ()  # values of the facet the value is also an estimate of, which a text may state (rules/code/ `also`)
    context: Related | None = None  # where what gives the fact is, when not at the value (the framework hook it is read in)
    also_with: tuple[str, ...] = ()  # `also` holds only of a text that states these too ("reduction=mean")


@dataclass(frozen=True, slots=True)
class ResultOf:
    """The value a call of a project function returns (`element` of it, when it is a tuple)."""

    callee: str  # dotted name as resolved from the imports; may still name a non-project function
    element: int | None
    caller: str = ""  # FunctionFlow.name of the function the call is in
    args: tuple[tuple[int | str, frozenset[Atom]], ...] = ()  # what this call passes (see CallFlow)
    bound: bool = False

    def of(self, element: int) -> ResultOf:
        """The element at `element` of what the call returns: built field by field, as
        `dataclasses.replace` would, at a quarter of its cost (a tuple's parts are read often)."""
        return ResultOf(self.callee, element, self.caller, self.args, self.bound)


@dataclass(frozen=True, slots=True)
class Derived:
    """What a construct of the code makes of values only the project-wide step can tell: a project
    call's result divided by a count (`masked_sum(x, mask) / mask.sum()`) is a mean when that
    call's result is a sum. Each of `gives` is (facet, value, fact): the fact holds when the
    values have that facet's value; the values' facts of `keeps` hold too, and those of
    `converted` where one of `gives` holds (a peak in bytes converted to GiB is still a peak)."""

    atoms: frozenset[Atom]
    gives: tuple[tuple[str, str, CodeFact], ...]
    keeps: tuple[str, ...] = ()
    converted: tuple[str, ...] = ()

    @staticmethod
    def later(keeps: Iterable[str], atoms: frozenset[Atom]) -> frozenset[Atom]:
        """What a step that keeps some facets (a reduction's `keeps`, a mask) keeps of the
        values only the project-wide step can tell, a parameter or a project call's result:
        `torch.sum(x)` of a parameter x is in x's unit, of x's quantity, as the callers pass it."""
        later = frozenset(a for a in atoms if isinstance(a, (str, Derived)) or (isinstance(a, ResultOf) and a.callee))
        return frozenset({Derived(later, (), tuple(sorted(keeps)))}) if later else frozenset()  # sorted: the same in every process


# How a call's callee is written when the call is a method of an object nothing in its file names
# (`writer.record(...)`: `?.record`); the project-wide step may still find the one method of that
# name (evidence/callees.py).
UNKNOWN_OBJECT = "?."
# How an attribute of an object whose class the file does not know is written in a key part
# (`tracker.sep`: `~tracker.sep`): the project's classes its name names fill it (evidence/inherited.py).
NAMED_OBJECT = "~"
# How a call of a method through a handle's `.remote` is written (`handle.update.remote(batch)`:
# `?remote.update`): only the methods of classes whose methods run elsewhere answer it (evidence/callees.py).
REMOTE_CALL = "?remote."
# How a dict's key is written when it is another module's constant (`metrics.pop(COUNTS_KEY)`,
# imported: `?=pkg.keys.COUNTS_KEY`): the project-wide step reads its string (evidence/logged_bags.py).
CONSTANT_KEY = "?="
# Where a call passes a dict by `**stats` (CallFlow.bags): its entries are keywords, for a
# callee's `**kwargs` to take those none of its parameters is named (evidence/logged_bags.py).
KEYWORDS = "**"


# What a value may be, as far as one file can tell: a parameter of the enclosing function (its
# name), a code fact, the result of a call that the project-wide step resolves, or what a
# construct makes of such results.
Atom = Union[str, CodeFact, ResultOf, Derived]


@dataclass(frozen=True, slots=True)
class MetricsEntry:
    """One value put in a dict of metrics (`metrics["loss"] = loss`), or one record of a list of
    records (`events.append(("loss", loss, step))`): logged under `key` wherever the dict is."""

    key: str  # a template; a placeholder may name a parameter of the function it was put in
    span: Span  # where the key is written
    value: frozenset[Atom]
    measured: bool = True
    through: tuple[tuple[str, Span], ...] = ()
    recorded: bool = False  # a key shaped like one, logged where it is written (`d["train/loss"] = v`), as every such key is
    # its last segment is only placeholders, each for what the code names without listing (an
    # attribute, a module's name): a family of keys, which a template names (keys.too_generic)
    family: bool = False

    def renamed(self, key: str) -> MetricsEntry:
        """The entry under another key, which is not written where it is (not `recorded`)."""
        return MetricsEntry(key, self.span, self.value, self.measured, self.through, family=self.family)

    def valued(self, value: frozenset[Atom]) -> MetricsEntry:
        """The entry holding `value` instead: built field by field, as `dataclasses.replace`
        would, at a quarter of its cost (the walk thins every entry it hands on)."""
        return MetricsEntry(self.key, self.span, value, self.measured, self.through, self.recorded, self.family)


@dataclass(frozen=True, slots=True)
class HeldOptions:
    """What few Helds set, kept apart so that a Held stays small: a frozen dataclass sets each of
    its fields when it is built, and a tree's walk builds and sends a hundred thousand Helds
    (each field cost about 0.3% of a cold run on miles, counted with callgrind)."""

    without: tuple[str, ...] = ()  # its entries under these keys (or CONSTANT_KEY's) are left out (`if k not in SKIPPED`)
    only: tuple[str, ...] = ()  # when any, its entries under other keys are left out (`if k in KEPT`)
    starts: tuple[str, ...] = ()  # when any, its entries under keys starting otherwise are left out (`if k.startswith("train/")`)
    # an entry whose key starts with this already keeps it: `rekey` adds it to the others alone
    # (`f"{prefix}{k}" if not k.startswith(prefix) else k`); a parameter in it is filled as in `rekey`
    kept: str = ""
    # of a "result": the keywords the call passes ("*" where a starred argument may pass any)
    # and how many arguments it passes by position: which flags it turns on (FunctionFlow.gives_when)
    passed: tuple[str, ...] = ()
    positional: int = 0
    # its entries hold a measurement made of theirs (`{k: np.mean(v) for k, v in d.items()}`
    # over a dict of per-sample lists), whatever they held where they were put
    measured: bool = False
    # its dict's nested dicts are read as entries of their own, each key joined to the keys above
    # it by this (`flatten_dict(stats)`, sep "/": `{"losses": {"policy": x}}` holds "losses/policy")
    flattens: str = ""
    # its entries' keys as these str methods rewrite them (base/keys.py `rewritten`), before `rekey`
    # puts them in place: `f"train/{k.replace(' ', '_')}"` over the dict's keys
    rewrites: tuple[keys.Rewrite, ...] = ()
    # its entries' values reduced again by this (`{k: sum(v) / len(v) for k, v in stats.items()}`
    # over the lists a step appends its values to): `reduced_again`
    over: tuple[CodeFact, ...] = ()


PLAIN = HeldOptions()  # what a Held without options (`options` None) reads


def reduced_again(value: frozenset[Atom], over: tuple[CodeFact, ...]) -> frozenset[Atom]:
    """What a value reduced known ways is once reduced again by `over` (each step's maximum,
    averaged over the steps since the last log): the outer reduction, `estimating` the inner
    one, the value's other facts kept. A value no reduction is known of stays as it is: the
    outer one alone would be held against a text about each step's value ("the total tokens of
    a step")."""
    inner = [a for a in value if type(a) is CodeFact and a.facet == "reduction"]
    if not over or not inner:
        return value
    kept = frozenset(a for a in value if not (type(a) is CodeFact and a.facet == "reduction"))
    return kept | frozenset(estimating(f, inner) for f in over)


def estimating(outer: CodeFact, inner: Iterable[CodeFact]) -> CodeFact:
    """`outer`, a reduction taken of values each reduced as `inner` says, as also an estimate of
    each inner reduction and of what that one estimates (CodeFact.also): the mean of the ranks'
    standard deviations is a standard deviation, the mean of each step's maximum a maximum."""
    estimates = {f.value for f in inner} | {v for f in inner if not f.also_with for v in f.also}
    added = estimates - {outer.value, *outer.also}
    return replace(outer, also=tuple(sorted({*outer.also, *added}))) if added else outer


@dataclass(frozen=True, slots=True)
class Held:
    """The entries of a dict that one function cannot see, each under `rekey` with its own key
    in place of "{}": what a caller passes for a parameter (`kind` "param", `name` the
    parameter), what a project call returns ("result", `name` the callee as the file's imports
    name it, `call` where the call is, whose arguments fill the callee's parameters), or what a
    class's attribute holds ("attribute", `name` module.Class.attr), put in by any method of the
    class or of a class it extends or is extended by), what a project call puts in the dict
    it is handed ("filled", `name` the callee, `call` where, `where` the argument it is), or
    the names of another module's list of names ("constant", `name` its import path), or what
    a method of the class returns as the instance's class has it (OVERRIDDEN, `name`
    module.Class.method, `where` the framework's method whose return it is: a subclass of the
    project that overrides that method, and those below it, may call another).
    `item`: the dict held is not that one but its item (or attribute) at this path, as
    `out.meta["metrics"]` selects ("meta", "metrics") of what a call returns."""

    kind: str
    name: str
    rekey: str = "{}"
    call: Span | None = None
    where: int | str | None = None
    item: tuple[str, ...] = ()
    options: HeldOptions | None = None  # what few Helds set; None for PLAIN (one null in the cache, nothing to build)

    @property
    def opts(self) -> HeldOptions:
        """Its options, PLAIN where it sets none."""
        return self.options or PLAIN

    def with_options(self, **changes: object) -> Held:
        """This Held with some of its options changed (HeldOptions' fields by name)."""
        return replace(self, options=replace(self.opts, **changes))  # type: ignore[arg-type]

    def at(self, path: tuple[str, ...]) -> Held:
        """This Held's item at `path` below its own (`out["meta"]["metrics"]`): built field by
        field, as `dataclasses.replace` would, at a quarter of its cost (the walk selects
        items of what calls return at most dict reads)."""
        return Held(self.kind, self.name, self.rekey, self.call, self.where, self.item + path, self.options)


OVERRIDDEN = "overridden"  # Held.kind: a method's return, as the instance's class (or a subclass of the project) has the method
# Held.kind: a function of the project as a value, named as the file's imports name it: handed to
# a call (`run(step_fn=forward)`), bound (`partial(loss, cfg)`), kept in an attribute or returned.
# It holds no dict itself; what calling it returns (INVOKED) is what the function returns.
FUNCTION = "function"
# The item a Held selects for what calling the value it stands for returns: `loss_fn(out)` of a
# parameter is Held("param", "loss_fn", item=(INVOKED,)), answered by the functions its callers
# pass for it; `loss, stats = loss_fn(out)` selects the item "#1" of that.
INVOKED = "()"


@dataclass(frozen=True, slots=True)
class Item:
    """A dict a dict of metrics holds under `keys` (`{"meta": {"metrics": stats}}`: ("meta",
    "metrics")): its entries and what it holds of elsewhere, as a Bag's own (kept flat, since
    the cache writes no type that holds itself). Not named `path`: the cache takes a field of
    that name for the file the value is about (base/plain.py)."""

    keys: tuple[str, ...]
    entries: tuple[MetricsEntry, ...] = ()
    held: tuple[Held, ...] = ()


@dataclass(frozen=True, slots=True)
class Bag:
    """What a dict of metrics (or a list of records) may hold, as far as one function can tell:
    the entries put in it here, and the dicts of elsewhere whose entries it holds. `items`: the
    dicts it holds under a key (`{"metrics": stats}`) or a call packs under a keyword
    (`Output(meta={"metrics": stats})`), for a reader that selects one (`out.meta["metrics"]`)."""

    entries: tuple[MetricsEntry, ...] = ()
    held: tuple[Held, ...] = ()
    items: tuple[Item, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries or self.held or self.items)

    def __or__(self, other: Bag) -> Bag:
        # the fields tested here, not through __bool__: the walk joins bags at most dict reads
        if not (other.entries or other.held or other.items):
            return self
        if not (self.entries or self.held or self.items):
            return other
        return Bag(_joined(self.entries, other.entries), _joined(self.held, other.held), _joined(self.items, other.items))


T = TypeVar("T")


def _joined(first: tuple[T, ...], second: tuple[T, ...]) -> tuple[T, ...]:
    """Both, in order, each once; one side alone as it is (hashing an entry hashes its values)."""
    if not second:
        return first
    if not first:
        return second
    return tuple(dict.fromkeys((*first, *second)))


@dataclass(frozen=True, slots=True)
class LoggedBag:
    """A dict of metrics whose entries reach a sink (rules/sinks.yaml) at `span`, each under
    `rekey` with its own key in place of "{}"."""

    bag: Bag
    sink: str  # what the sink is, as rules/sinks.yaml says it: "wandb's log"
    span: Span


# The flow of a file's framework uses (sources/python/frameworks.py): "module.<frameworks>"
# logs the keys an entry point such as transformers' Trainer logs itself.
FRAMEWORKS = "<frameworks>"


ANY_PLACE = "*"  # where a call passes `*args` or `**kwargs` (HandOver.tables): what it passes at each place is not known


@dataclass(frozen=True, slots=True)
class KeyTable:
    """What a call passes beside a dict it hands over, which the callee may look each key's
    reduction up in (sources/python/key_tables.py): a table written out, `{"len_max": "max"}`
    (`entries`, `known`; None is a `known` table with no entries), the caller's own parameter
    (`param`), to be filled by its callers, or neither: a value not known."""

    entries: tuple[tuple[str, str], ...] = ()
    known: bool = False
    param: str = ""


@dataclass(frozen=True, slots=True)
class HandOver:
    """A dict of metric values handed to a project function: `callee` (dotted, as imported) is
    passed it at `where` (a position, a method's object not counted when `bound`, or a keyword)
    by the call at `span`, written there as `origin`. `tables`: what the call passes at each of
    its other places, for a callee that reduces each key as a table says (model.Reducer)."""

    callee: str
    where: int | str
    bound: bool
    span: Span
    origin: str
    tables: tuple[tuple[int | str, KeyTable], ...] = ()


@dataclass(frozen=True, slots=True)
class Reducer:
    """What a function does to every value of the dict it is handed as `param`, whatever its key.

    Either its own loop over the dict's keys writes each key's value into the dict it returns:
    `known`, as `facts` say (a mean over the ranks' dicts), which replace the value's facts of
    `replaces`; not `known`, in a way that depends on the key or is not known, so its facts of
    `replaces` are lost. Or (`then`) it hands the dict, or what it gathered from the ranks for
    it, on to that call."""

    param: str
    known: bool
    facts: frozenset[CodeFact]
    replaces: frozenset[str]
    then: HandOver | None = None
    # Or each key's reduction is looked up in the table the function is passed as `table`
    # (`how = table.get(key, "mean")`), `default` where the table has no such key or none is
    # passed, and each value of the lookup gives the facts of `choices` ("" for any other value).
    table: str = ""
    default: str = ""
    choices: tuple[tuple[str, frozenset[CodeFact]], ...] = ()


@dataclass(frozen=True, slots=True)
class FunctionFlow:
    """One function, as the project-wide step needs it: where its parameters and results go."""

    name: str  # dotted: module.function or module.Class.method; "module.<module>" for top level, FRAMEWORKS below
    params: tuple[str, ...]
    bound: bool  # a method called through `self.`: the first parameter is not passed
    sinks: tuple[tuple[str, frozenset[Atom]], ...]  # (logged key, what the value may be)
    returns: tuple[tuple[int | None, frozenset[Atom]], ...]  # (tuple element or None, atoms)
    templates: tuple[str, ...] = ()  # logged keys built from a parameter: `perf/{name}_time`, `{section}/{key}`
    handed: tuple[
        tuple[int, tuple[HandOver, ...]], ...
    ] = ()  # (index in sinks, the calls the dict its value was put in is handed to after)
    reducers: tuple[Reducer, ...] = ()  # what it does to every value of a dict parameter
    logged: tuple[LoggedBag, ...] = ()  # dicts of metrics it logs whose entries it cannot all see (evidence/logged_bags.py)
    gives: Bag = Bag()  # the dict of metrics it returns
    stored: tuple[tuple[str, Bag], ...] = ()  # what it puts in a class's attribute (module.Class.attr)
    fills: tuple[tuple[str, Bag], ...] = ()  # what it puts in the dict a parameter is
    makes: str = ""  # the class it returns an instance of, or the module-level name of the instance it returns
    sites: tuple[tuple[int, Span], ...] = ()  # (index in sinks, where this file logs it)
    defaults: tuple[tuple[str, str], ...] = ()  # (parameter, the string it defaults to): what a key it names is, where a call passes none
    shell: bool = False  # its body is a docstring, `pass` or `...` alone: another class's method of its name runs (evidence/callees.py)
    any_keyword: bool = False  # it takes `**kwargs`: a call may pass a keyword none of its parameters is named
    # what it returns only under `if flag:`, a parameter off unless a call passes it: only to such a call
    gives_when: tuple[tuple[str, Bag], ...] = ()
    # (placeholder, module.Class.attr): a key part read from an attribute of an object of a class
    # the file names (`f"{stage}{meter.joiner}{k}"`), or a name bound to one, which that class's
    # strings fill (ProjectClass.strings); `~held.attr` where the object's name alone says its class
    attribute_parts: tuple[tuple[str, str], ...] = ()
    # whether it logs a value itself (before `sinks` is thinned to what leaves it): a parameter of
    # such a function, named like a metric, may reach that metric (evidence/code_claims.py)
    logs: bool = False


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A class of the project that extends a framework's own class with a method that may
    rewrite what an entry point logs (a Trainer callback's `on_log`), or a statement that
    replaces one of the entry point's own methods (`Trainer.log = ...`): wherever the class is
    passed in, or once the patch has run, the entry point's facts may not hold, so they hold
    nowhere in the project."""

    entry: tuple[str, ...]  # the entry point's import paths, as its code facts name their origin
    span: Span


@dataclass(frozen=True, slots=True)
class PassedCallback:
    """A callback a file hands to an entry point (`Trainer(callbacks=[Report()])`,
    `trainer.add_callback(Report)`), named as the file's imports resolve it: unless it is the
    framework's own, or a class of the project none of whose hooks (nor bases) may rewrite the
    logs, the entry point's facts do not hold in that file (evidence/callbacks.py)."""

    entry: tuple[str, ...]  # the entry point's import paths
    callback: str  # dotted: the class, or whatever else the name is; "f()" for what a call of f returns
    span: Span


@dataclass(frozen=True, slots=True)
class MethodCall:
    """A call of one of an entry point's `called` methods (rules/code/frameworks.yaml) on an
    object a class made: `trainer.evaluate()` on `trainer = AnswerTrainer(...)`. Whether the
    class is the entry point or extends it through the project's classes is the project-wide
    step's to say (evidence/called_keys.py)."""

    entry: str  # the entry point's first import path
    owner: str  # the class that made the object, dotted as the file's imports name it
    method: str
    prefixes: tuple[str, ...]  # the prefixes the call may pass
    returned: tuple[str, ...]  # the functions whose returned dict it logs under each prefix (`Scores.__call__`), dotted as imported
    span: Span  # the called method's name


@dataclass(frozen=True, slots=True)
class CallbackList:
    """The callbacks a function of the project returns (`def get_callbacks(args): ...`), each
    named as its file's imports resolve it (sources/python/callback_lists.py): a call of it
    handed to an entry point hands these over."""

    function: str  # dotted: module.function or module.Class.method
    callbacks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProjectClass:
    """A class of the project, as the project-wide step needs it to find the entry points a
    class reaches through other classes of the project (`class Weighted(ProjectTrainer)`, where
    `ProjectTrainer` extends transformers' Trainer) and the methods that change what they log
    anywhere along the way (evidence/inherited.py)."""

    name: str  # dotted: module.Class
    span: Span  # its `class` statement
    bases: tuple[tuple[str, Span], ...]  # each base as the file's imports resolve it, and where it is written
    defines: frozenset[str]  # the methods it defines that some entry point's `overrides` name
    silenced: frozenset[str]  # entry points (first path) whose logs its file may rewrite (`unless_defined`, `unless_called`)
    rewrites: frozenset[str] = frozenset()  # entry points (first path) one of whose keys a hook it defines may change
    attributes: tuple[tuple[str, str], ...] = ()  # (attribute, the class its methods set it to an instance of, dotted as imported)
    # (attribute, the strings its body and methods set it to, a parameter's string default included;
    # () once one of them is no string written out): what a key built from it elsewhere is
    strings: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class CallFlow:
    """A call whose arguments carry something: positional index or keyword -> atoms."""

    callee: str
    caller: str  # FunctionFlow.name of the function the call is in
    span: Span
    args: tuple[tuple[int | str, frozenset[Atom]], ...]
    bound: bool = False  # made through `self.`: positions skip the callee's first parameter
    texts: tuple[tuple[int | str, tuple[str, ...]], ...] = ()  # the strings an argument may be
    bags: tuple[tuple[int | str, Bag], ...] = ()  # the dicts of metrics an argument may be
    # the dicts a key argument is built from a loop over (`f"train/{k}"` for `k` in `losses`), re-keyed
    # as it builds each key: a callee that logs under that parameter logs one key per entry
    keyed: tuple[tuple[int | str, Bag], ...] = ()
    # the object attribute an argument reads whose strings are not known here (`tracker.sep`, or a
    # name bound to it), as FunctionFlow.attribute_parts writes it: the project-wide step fills it
    attributes: tuple[tuple[int | str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class CodeClaim:
    """A code fact about one metric: the evidence ML006 holds texts against."""

    metric: str
    fact: CodeFact
    # Where the value is logged with this fact, when a call or key of the project's logs it
    # there: a comment at one of them speaks for that path alone (checks/ml006.py). Not part of
    # what the claim is: the same fact logged at two places is one claim.
    sites: frozenset[Span] = field(default=frozenset(), compare=False)


@dataclass(frozen=True, slots=True)
class CodeProducts:
    """What the code of all the files makes, besides what each logs itself (evidence/products.py):
    keys built across calls, named by another module's constant, or read back; the help texts
    of the metrics so named; and what each metric is computed as."""

    built: tuple[KeyUse, ...] = ()
    read: tuple[KeyUse, ...] = ()
    tables: tuple[TooltipTable, ...] = ()
    code: tuple[CodeClaim, ...] = ()
    own_methods: frozenset[Span] = frozenset()  # calls named like a tracker's method that reach the project's own (KeyUse.via)
    put_logged: tuple[tuple[str, str, frozenset[Atom]], ...] = ()  # (function, key, value): put in a dict a sink elsewhere logs
    # keys whose last segment labels what a function measured (`timer("gen", times)`): no value's name
    labelled: frozenset[str] = frozenset()
    # the project-wide step stopped at its cap on readings (evidence/logged_bags.py MAX_READINGS):
    # keys logged only through the paths it left unread are missing
    cut_short: bool = False


def rekeyed(bag: Bag, rekey: str, kept: str = "") -> Bag:
    """The bag with each key written into `rekey` in place of "{}" (`train/{}`); `kept`: a key
    that starts with this keeps it (Held `kept`), one of elsewhere where it is known."""
    if rekey == "{}":
        return bag
    entries = tuple(e.renamed(keys.rekey(rekey, e.key, kept)) for e in bag.entries)  # new keys: not recorded
    return Bag(entries, tuple(_rekeyed_held(h, rekey, kept) for h in bag.held))  # its items keep no key


def rewritten(bag: Bag, rewrites: tuple[keys.Rewrite, ...]) -> Bag:
    """The bag with each key as the str methods `rewrites` make it (`k.lower()` of a loop over
    its keys): its own entries' now, what it holds of elsewhere's where the project-wide step
    reads them, unless a key there was rewritten or re-keyed already (then it stays as it is)."""
    entries = tuple(e if (key := keys.rewritten(e.key, rewrites)) == e.key else e.renamed(key) for e in bag.entries)
    held = tuple(h.with_options(rewrites=rewrites) if h.rekey == "{}" and not h.opts.rewrites else h for h in bag.held)
    return Bag(entries, held, bag.items)


def flattened(bag: Bag, joiner: str) -> Bag:
    """The bag as a function that flattens nested dicts returns it (HeldOptions `flattens`): an
    item's entries, and what it holds of elsewhere, keyed by the item's keys and their own
    joined by `joiner`; an entry whose value is such an item is no key of its own."""
    dicts = [item for item in bag.items if not any(key[:1] in _NOT_KEYS for key in item.keys)]
    if not dicts:
        return bag
    paths = {item.keys for item in dicts}  # an entry at one of these holds a dict: its own keys are logged, not it
    found = Bag(tuple(e for e in bag.entries if (e.key,) not in paths), bag.held)
    for item in dicts:
        values = tuple(e for e in item.entries if (*item.keys, e.key) not in paths)
        found |= rekeyed(Bag(values, item.held), joiner.join((*item.keys, "{}")))
    return found


# The first characters of an Item's keys that name no key of a nested dict: the elements of a
# list ("[]"), of a tuple ("#1"), what calling a value returns (INVOKED).
_NOT_KEYS = frozenset("[#(")


def _rekeyed_held(held: Held, rekey: str, kept: str) -> Held:
    """`held` re-keyed once more; the prefix a key keeps is the first re-keying's."""
    found = replace(held, rekey=rekey.replace("{}", held.rekey))
    return found.with_options(kept=kept) if held.rekey == "{}" and kept != held.opts.kept else found
