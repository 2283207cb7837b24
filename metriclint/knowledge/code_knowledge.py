"""The code knowledge base: calls and expressions whose result has known facets.

The knowledge is data (`rules/code/*.yaml`, each entry with its source reference); this module
loads and validates it, and answers one question for the Python source: what does this call
or this arithmetic step compute?
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterable

from metriclint.base import marked_yaml
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge import numbers
from metriclint.knowledge.code_entries import (
    Derivation,
    Known,
    Schedulers,
    compact_code,
    read_derivation,
    read_entry,
    read_items,
    read_rate,
    read_schedulers,
    read_token_rate,
)
from metriclint.knowledge.code_sections import (
    Flops,
    LoggingEffect,
    LogRatios,
    Unreduced,
    facet_names,
    known_value,
    read_alike,
    read_flops,
    read_log_ratios,
    read_logged,
    read_unreduced,
)
from metriclint.knowledge.frameworks import EntryIndex, EntryPoint, entry_index, read_entry_point
from metriclint.knowledge.logged_returns import LoggedReturn, read_logged_return
from metriclint.knowledge.vocabulary import Facet, load_builtin
from metriclint.model import ConfigError, Problem

FILE_KEYS = (
    "results",
    "norm_types",
    "default_norm",
    "variable_norm",
    "conversions",
    "kept_by_arithmetic",
    "kept_by_conversion",
    "kept_by_rate",
    "kept_in_lists",
    "derivations",
    "schedulers",
    "loose_names",
    "log_ratios",
    "logging",
    "entry_points",
    "logged_returns",
    "unreduced",
    "alike",
    "leave_alone",
    "loaders",
    "loader_wrappers",
    "rates",
    "counts",
    "sample_counts",
    "sample_tokens",
    "token_rates",
    "flops",
    "boundaries",
    "window_hooks",
    "window_logs",
    "accumulating",
    "devices",
    "subgroups",
    "kept_by_index",
    "kept_when_shared",
    "masks",
)


@dataclass(frozen=True)
class Knowledge:
    chains: dict[str, Known]  # `torch.nn.utils.clip_grad_norm_()`, `psutil.virtual_memory().used`
    keyed: dict[str, tuple[tuple[str, Known], ...]]  # `torch.cuda.memory_stats()` -> (key pattern, entry) of its items
    methods: dict[str, Known]  # by method name, or `first().second` for methods in a row
    functions: dict[str, Known]  # by the function's own name
    prefixes: frozenset[str]  # chain prefixes worth following through a local name
    local_names: frozenset[str]  # the last names of the calls whose value is this rank's own (`local`)
    norm_types: dict[str, str]  # argument as written (no white space) -> norm
    default_norm: str
    variable_norm: str  # the norm of an order passed in a variable
    conversions: dict[tuple[str, str, float], str]  # (unit, operator, divisor's value) -> unit
    kept_by_arithmetic: frozenset[str]
    kept_by_conversion: frozenset[str] = frozenset()
    kept_by_rate: frozenset[str] = frozenset()  # ... and a division by a duration (units.yaml)
    kept_in_lists: frozenset[str] = frozenset()  # facets a list or tuple has when all its items have them (elements.yaml)
    derivations: dict[str, tuple[Derivation, ...]] = field(default_factory=dict)
    schedulers: Schedulers = Schedulers()
    loose_names: frozenset[frozenset[str]] = frozenset()  # unit pairs named one for the other
    log_ratios: LogRatios = LogRatios()
    logging: dict[str, tuple[LoggingEffect, ...]] = field(default_factory=dict)  # by the logging method's name
    entry_points: dict[str, EntryPoint] = field(default_factory=dict)  # by each of its full import paths
    logged_returns: dict[str, tuple[LoggedReturn, ...]] = field(default_factory=dict)  # by each of their bases' full import paths
    unreduced: tuple[Unreduced, ...] = ()  # logging calls that log each process's own value (ranks.yaml)
    alike: frozenset[frozenset[tuple[str, str]]] = frozenset()  # (facet, value) pairs one may state for the other
    leave_alone: frozenset[str] = frozenset()  # methods that leave their object as it was (ranks.yaml)
    boundaries: frozenset[str] = frozenset()  # calls and attributes true on the last micro-batch of an accumulation window (loops.yaml)
    # Hooks a framework calls once per micro-batch (loops.yaml `per-micro-batch`), whose logging
    # methods write only where the accumulation window ends, in a class that reads one of
    # `accumulating` of its own object (`trainer.accumulate_grad_batches`).
    window_hooks: frozenset[str] = frozenset()
    window_logs: frozenset[str] = frozenset()
    accumulating: frozenset[str] = frozenset()
    masks: frozenset[str] = frozenset()  # last words of the names of masks, whose sum counts what they keep (loops.yaml)
    loaders: frozenset[str] = frozenset()  # last words of the names of data loaders (ranks.yaml) ...
    loader_wrappers: frozenset[str] = frozenset()  # ... and the calls a loop over one wraps it in
    rates: dict[tuple[str, str], str] = field(default_factory=dict)  # (count's unit, duration's unit) -> the rate's unit
    counts: frozenset[str] = frozenset()  # last words of the names of counts a duration stays a duration by
    sample_counts: frozenset[str] = frozenset()  # last words of the names of counts of samples, as a rate's count (units.yaml)
    sample_tokens: frozenset[str] = frozenset()  # ... of the number of tokens in a sample (a sequence length)
    token_rates: dict[str, str] = field(default_factory=dict)  # a sample rate -> the token rate it gives times that number
    flops: tuple[Flops, ...] = ()  # products that count FLOPs (units.yaml)
    devices: frozenset[str] = frozenset()  # names of the number of devices a value is shared out over (ranks.yaml)
    subgroups: frozenset[str] = frozenset()  # ... unless after one of these words: a model-parallel group's size
    kept_by_index: frozenset[str] = frozenset()  # facets one element of a value keeps (elements.yaml)
    kept_when_shared: frozenset[str] = frozenset()  # ... and arithmetic keeps when both operands have them

    @cached_property
    def call_names(self) -> frozenset[str]:
        """The last name of every call an entry may match (`all_reduce` of
        `torch.distributed.all_reduce()`, `gather` of `log_softmax().gather`): a call named
        otherwise matches none, which the walk tells before it spells out the call's chain."""
        called = (chain.removesuffix("()").rsplit(".", 1)[-1] for chain in self.chains if chain.endswith("()"))
        return frozenset((*called, *self.functions, *(method.rsplit(".", 1)[-1] for method in self.methods)))

    @cached_property
    def attribute_names(self) -> frozenset[str]:
        """The last name of every attribute read an entry may match (`used` of
        `psutil.virtual_memory().used`)."""
        return frozenset(chain.rsplit(".", 1)[-1] for chain in self.chains if not chain.endswith(")"))

    @cached_property
    def accumulated(self) -> frozenset[str]:
        """The last name of each of `accumulating` (`accumulate_grad_batches`), asked first."""
        return frozenset(read.rsplit(".", 1)[-1] for read in self.accumulating)

    @cached_property
    def entry_index(self) -> EntryIndex:
        return entry_index(self.entry_points)

    @cached_property
    def _dimensions(self) -> dict[str, str]:
        """Each unit a conversion reaches, by the first unit (in order) it converts to and from:
        seconds and milliseconds measure one thing, tokens/s and seconds two."""
        group: dict[str, str] = {}

        def root(unit: str) -> str:
            while group.setdefault(unit, unit) != unit:
                unit = group[unit]
            return unit

        for (unit, _, _), gives in self.conversions.items():
            a, b = sorted((root(unit), root(gives)))
            group[b] = a
        return {unit: root(unit) for unit in group}

    def convertible(self, facet: str, a: str, b: str) -> bool:
        """Whether two values of a facet measure one thing (units a conversion of units.yaml
        joins); any two values of another facet do."""
        if facet != "unit":
            return True
        dimensions = self._dimensions
        return a in dimensions and dimensions.get(a) == dimensions.get(b)

    def loose(self, facet: str, stated: str, computed: str) -> bool:
        """Whether a stated value is the loose name of the other (GB for a value in GiB)."""
        return facet == "unit" and frozenset((stated.removeprefix("not "), computed)) in self.loose_names

    def alike_kind(self, facet: str, value: str) -> str:
        """One name for `value` and the values it is alike to (the first of them in order)."""
        return min((other for pair in self.alike if (facet, value) in pair for _, other in pair), default=value)

    def alike_values(self, facet: str, stated: str, computed: str) -> bool:
        """Whether a text may state `stated` where the code computes `computed`: a rank's value is
        its device's where one rank drives one device."""
        return frozenset(((facet, stated), (facet, computed))) in self.alike

    def derive(self, construct: str, facts: frozenset[tuple[str, str]]) -> list[Derivation]:
        """What `construct` makes of a value with these (facet, value) facts."""
        return [d for d in self.derivations.get(construct, ()) if d.given is None or d.given in facts]


@lru_cache(maxsize=1)
def _shipped() -> Knowledge:
    facets, _, _ = load_builtin()
    return load(sorted((rules_dir() / "code").glob("*.yaml")), facets)


@lru_cache(maxsize=4)
def knowledge(declared: tuple[Known, ...] = ()) -> Knowledge:
    """The shipped knowledge, with what a project declares about its own helpers (its
    registry's `code:` section) added; a declared entry replaces a shipped one of the same name."""
    shipped = _shipped()
    if not declared:
        return shipped
    every = [*shipped.chains.values(), *shipped.methods.values(), *shipped.functions.values(), *declared]
    return replace(shipped, **_indexed(every))


def declared(reader: NodeReader, node: Node, facets: dict[str, Facet], where: str, what: str = "'code'") -> tuple[Known, ...]:
    """A project's own code knowledge: `results` entries as in rules/code/*.yaml, read from a
    registry's `code:` section or a file the settings name (`what` it is, for the messages), each
    fact checked against the project's facets. Every entry says where it was declared (`where`),
    so a finding quoting it points the reader there."""
    top = reader.mapping(node, what, ("results",))
    entries = (read_entry(reader, item, facets) for item in read_items(reader, top, "results"))
    return tuple(replace(e, says=f"{e.says} (declared in {where})") for e in entries if e is not None)


def load(paths: list[Path], facets: dict[str, Facet]) -> Knowledge:
    """Read every knowledge file; any problem in any of them is reported at once."""
    problems: list[Problem] = []
    entries: list[Known] = []
    norm_types: dict[str, str] = {}
    default_norm = ""
    variable_norm = ""
    conversions: dict[tuple[str, str, float], str] = {}
    kept: set[str] = set()
    kept_by_conversion: set[str] = set()
    kept_by_rate: set[str] = set()
    kept_in_lists: set[str] = set()
    leave_alone: set[str] = set()
    loaders: set[str] = set()
    loader_wrappers: set[str] = set()
    boundaries: set[str] = set()
    window_hooks: set[str] = set()
    window_logs: set[str] = set()
    accumulating: set[str] = set()
    devices: set[str] = set()
    subgroups: set[str] = set()
    kept_by_index: set[str] = set()
    kept_when_shared: set[str] = set()
    masks: set[str] = set()
    derivations: list[Derivation] = []
    schedulers = Schedulers()
    loose_names: set[frozenset[str]] = set()
    log_ratios = LogRatios()
    logging: dict[str, tuple[LoggingEffect, ...]] = {}
    entry_points: dict[str, EntryPoint] = {}
    logged_returns: dict[str, tuple[LoggedReturn, ...]] = {}
    unreduced: list[Unreduced] = []
    alike: set[frozenset[tuple[str, str]]] = set()
    rates: dict[tuple[str, str], str] = {}
    counts: set[str] = set()
    sample_counts: set[str] = set()
    sample_tokens: set[str] = set()
    token_rates: dict[str, str] = {}
    flops: list[Flops] = []
    for path in paths:
        root, load_problems = marked_yaml.load(read_text(path), str(path), shipped=True)
        problems += load_problems
        reader = NodeReader(str(path))
        top = reader.mapping(root, "a code knowledge file", FILE_KEYS) if root is not None else {}
        for node in read_items(reader, top, "results"):
            entry = read_entry(reader, node, facets)
            if entry is not None:
                entries.append(entry)
        if "norm_types" in top:
            for norm, (key_node, node) in reader.mapping(top["norm_types"][1], "'norm_types'").items():
                known_value(reader, key_node, facets, "norm", norm)
                norm_types.update({compact_code(text): norm for _, text in reader.texts(node, f"the spellings of '{norm}'")})
        if "default_norm" in top:
            default_norm = reader.text(top["default_norm"][1], "'default_norm'") or ""
            known_value(reader, top["default_norm"][1], facets, "norm", default_norm)
        if "variable_norm" in top:
            variable_norm = reader.text(top["variable_norm"][1], "'variable_norm'") or ""
            known_value(reader, top["variable_norm"][1], facets, "norm", variable_norm)
        for node in read_items(reader, top, "conversions"):
            fields = reader.mapping(node, "a conversion", ("unit", "op", "by", "gives"))
            unit, op, gives = (reader.text(fields[k][1], f"'{k}'") if k in fields else None for k in ("unit", "op", "gives"))
            if unit is None or op is None or gives is None or "by" not in fields:
                reader.error(node, "a conversion needs 'unit', 'op', 'by' and 'gives'")
                continue
            for value_node, value in ((node, unit), (node, gives)):
                known_value(reader, value_node, facets, "unit", value)
            for by_node, by in reader.texts(fields["by"][1], "'by'"):
                number = numbers.written(by)
                if number is None:
                    reader.error(by_node, f"'{by}' is not a number")
                else:
                    conversions[(unit, op, number)] = gives
        if "kept_in_lists" in top:
            kept_in_lists.update(facet_names(reader, top["kept_in_lists"][1], facets, "'kept_in_lists'"))
        for key, into in (
            ("kept_by_arithmetic", kept),
            ("kept_by_conversion", kept_by_conversion),
            ("kept_by_rate", kept_by_rate),
            ("leave_alone", leave_alone),
            ("loaders", loaders),
            ("loader_wrappers", loader_wrappers),
            ("counts", counts),
            ("sample_counts", sample_counts),
            ("sample_tokens", sample_tokens),
            ("boundaries", boundaries),
            ("window_hooks", window_hooks),
            ("window_logs", window_logs),
            ("accumulating", accumulating),
            ("devices", devices),
            ("subgroups", subgroups),
            ("kept_by_index", kept_by_index),
            ("kept_when_shared", kept_when_shared),
            ("masks", masks),
        ):
            if key in top:
                into.update(v for _, v in reader.texts(top[key][1], f"'{key}'"))
        for node in read_items(reader, top, "rates"):
            rate = read_rate(reader, node, facets)
            if rate is not None:
                rates[rate[0]] = rate[1]
        token_rates.update(
            r for r in (read_token_rate(reader, node, facets) for node in read_items(reader, top, "token_rates")) if r is not None
        )
        flops += (f for f in (read_flops(reader, node, facets) for node in read_items(reader, top, "flops")) if f is not None)
        for node in read_items(reader, top, "derivations"):
            derivation = read_derivation(reader, node, facets)
            if derivation is not None:
                derivations.append(derivation)
        if "schedulers" in top:
            schedulers = read_schedulers(reader, top["schedulers"][1])
        for node in read_items(reader, top, "loose_names"):
            pair = [v for _, v in reader.texts(node, "a pair of units")]
            if len(pair) == 2 and all(known_value(reader, node, facets, "unit", unit) for unit in pair):
                loose_names.add(frozenset(pair))
        for node in read_items(reader, top, "logging"):
            logged = read_logged(reader, node, facets)
            if logged is not None:
                logging[logged.method] = (*logging.get(logged.method, ()), logged)
        unreduced += (u for u in (read_unreduced(reader, node) for node in read_items(reader, top, "unreduced")) if u is not None)
        alike.update(p for p in (read_alike(reader, node, facets) for node in read_items(reader, top, "alike")) if p is not None)
        if "log_ratios" in top:
            log_ratios = read_log_ratios(reader, top["log_ratios"][1], facets)
        for node in read_items(reader, top, "entry_points"):
            entry_point = read_entry_point(reader, node, facets)
            if entry_point is not None:
                entry_points.update(dict.fromkeys(entry_point.paths, entry_point))
        for node in read_items(reader, top, "logged_returns"):
            returned = read_logged_return(reader, node)
            for base in returned.bases if returned is not None else ():
                logged_returns[base] = (*logged_returns.get(base, ()), returned)  # type: ignore[arg-type]
        problems += reader.problems
    if problems:
        raise ConfigError(problems)
    by_construct: dict[str, tuple[Derivation, ...]] = {}
    for derivation in derivations:
        by_construct[derivation.construct] = (*by_construct.get(derivation.construct, ()), derivation)
    return Knowledge(
        **_indexed(entries),
        norm_types=norm_types,
        default_norm=default_norm or "l2",
        variable_norm=variable_norm,
        conversions=conversions,
        kept_by_arithmetic=frozenset(kept),
        kept_by_conversion=frozenset(kept_by_conversion),
        kept_by_rate=frozenset(kept_by_rate),
        kept_in_lists=frozenset(kept_in_lists),
        derivations=by_construct,
        schedulers=schedulers,
        loose_names=frozenset(loose_names),
        log_ratios=log_ratios,
        logging=logging,
        entry_points=entry_points,
        logged_returns=logged_returns,
        unreduced=tuple(unreduced),
        alike=frozenset(alike),
        leave_alone=frozenset(leave_alone),
        loaders=frozenset(loaders),
        loader_wrappers=frozenset(loader_wrappers),
        rates=rates,
        counts=frozenset(counts),
        sample_counts=frozenset(sample_counts),
        sample_tokens=frozenset(sample_tokens),
        token_rates=token_rates,
        flops=tuple(flops),
        boundaries=frozenset(boundaries),
        window_hooks=frozenset(window_hooks),
        window_logs=frozenset(window_logs),
        accumulating=frozenset(accumulating),
        devices=frozenset(devices),
        subgroups=frozenset(subgroups),
        kept_by_index=frozenset(kept_by_index),
        kept_when_shared=frozenset(kept_when_shared),
        masks=frozenset(masks),
    )


def _keyed(chains: Iterable[Known]) -> dict[str, tuple[tuple[str, Known], ...]]:
    """Expressions that read an item of a call's result by key (`memory_stats()["*_bytes.*.peak"]`),
    by the call's chain: each key a shell-style pattern."""
    found: dict[str, tuple[tuple[str, Known], ...]] = {}
    for entry in chains:
        base, bracket, key = entry.pattern.partition('["')
        if bracket and key.endswith('"]'):
            found[base] = (*found.get(base, ()), (key[:-2], entry))
    return found


def _indexed(entries: list[Known]) -> dict[str, Any]:
    """The entries by how the Python source looks them up (Knowledge's first four fields)."""
    chains = {e.pattern: e for e in entries if not e.method and "." in e.pattern}
    return {
        "chains": chains,
        "keyed": _keyed(chains.values()),
        "methods": {e.pattern: e for e in entries if e.method},
        "functions": {e.pattern.removesuffix("()"): e for e in entries if not e.method and "." not in e.pattern},
        "prefixes": frozenset(chain[: i + 2] for chain in chains for i in range(len(chain) - 2) if chain[i : i + 2] == "()"),
        "local_names": frozenset(e.pattern.removesuffix("()").rsplit(".", 1)[-1] for e in entries if e.local),
    }
