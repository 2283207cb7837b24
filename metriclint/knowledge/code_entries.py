"""One entry of a code knowledge file (rules/code/*.yaml): what it holds, and how it is read.

Kept apart from the loader (code_knowledge.py) so that what a user writes in an entry, and
the errors it can get, read in one place."""

from __future__ import annotations

from dataclasses import dataclass

from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.code_sections import (
    facet_names,
    known_value,
    read_facts,
)
from metriclint.knowledge.vocabulary import Facet

KINDS = ("call", "method", "expression", "function")


ENTRY_KEYS = (
    *KINDS,
    "says",
    "facts",
    "norm_type",
    "arguments",
    "element",
    "of",
    "keeps",
    "writes",
    "unless",
    "clamps_with_number",
    "objects_only",
    "receivers",
    "local",
    "picks",
)


# The constructs sources/python/walk.py and code_reader.py recognise; rules/code/ says what each gives.
CONSTRUCTS = (
    "accumulation",
    "averaging",
    "terms-mean",
    "last",
    "rescaling",
    "negation",
    "exponential",
    "after-scheduler-step",
    "log-ratio",
    "reversed-log-ratio",
    "half-square",
    "exp-minus-one",
    "entropy-sum",
    "per-key-mean",
    "per-key-max",
    "per-key-min",
    "entropy-product",
    "negated-entropy-product",
    "comparison-mean",
    "after-framework-step",
    "norm-root",
    "overwritten",
    "at-boundary",
    "per-micro-batch",
    "share",
    "smoothing",
    "token-mean",
    "row-mean",
)


@dataclass(frozen=True, slots=True)
class Known:
    """One entry: what `pattern` computes. For a method, `pattern` is the method name, or the
    methods called in a row (`log_softmax().gather`); for a function, its name wherever it is
    imported from."""

    pattern: str
    method: bool
    says: str
    facts: tuple[tuple[str, str], ...]
    norm_keyword: str = ""
    norm_positions: tuple[int, ...] = ()
    arguments: int | None = None  # a method must be called with exactly this many arguments
    element: int | None = None  # the facts hold for this element of the returned tuple
    of: int | None = None  # ... when the tuple is unpacked into this many names
    keeps: tuple[str, ...] = ()  # facets of the reduced argument (or receiver) the result keeps
    writes: int | None = None  # the facts are about this argument, which the call writes into
    unless_keyword: str = ""  # no facts when the call passes this argument ...
    unless_position: int | None = None  # ... by keyword or at this position
    unless_facets: tuple[str, ...] = ()  # ... only these facts, when listed (a loss's reduction=)
    clamps: bool = False  # with a number among its arguments the call bounds a value: no facts
    objects_only: bool = False  # a method matches on an object, not as a module's function (`torch.max`)
    receivers: frozenset[str] = frozenset()  # a method's object (a function's first argument) must be named with one of these last words
    local: str = ""  # the result is this rank's own (why): scope=per-rank while it stays on the rank (ranks.yaml)
    picks: tuple[int, ...] = ()  # the result's elements come from these arguments (a method's object is 0), all but one constants


@dataclass(frozen=True, slots=True)
class Derivation:
    """What a construct of the code (a loop, a negation) makes of a value that has `given`."""

    construct: str
    given: tuple[str, str] | None  # (facet, value) the value must have; None: any value
    says: str
    gives: tuple[tuple[str, str], ...]
    also: tuple[tuple[str, str], ...] = ()  # values the result is also an estimate of: a text stating one is not ruled out
    unless: tuple[tuple[str, str], ...] = ()  # facts of the value that take `also` back
    also_with: tuple[tuple[str, str], ...] = ()  # what a text must state too for `also` to hold of it


@dataclass(frozen=True, slots=True)
class Schedulers:
    step: str = "step"
    reads: frozenset[str] = frozenset()
    group_reads: frozenset[str] = frozenset()  # reads called with the optimizer's param group whose rate they compute
    names: tuple[str, ...] = ()
    # (method, the import paths of the classes it overrides) of the hooks a framework calls after
    # its loop has stepped the scheduler: a rate read in one is the next step's
    stepped_before: tuple[tuple[str, frozenset[str]], ...] = ()

    def stepped_before_hook(self, method: str, bases: frozenset[str]) -> bool:
        """Whether `method` of a class with these bases (import paths) is such a hook."""
        return any(method == name and bases & classes for name, classes in self.stepped_before)


def read_rate(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> tuple[tuple[str, str], str] | None:
    """`{count: tokens, per: seconds, gives: tokens/s}` -> ((tokens, seconds), tokens/s)."""
    fields = reader.mapping(node, "a rate", ("count", "per", "gives"))
    count, per, gives = (reader.text(fields[k][1], f"'{k}'") if k in fields else None for k in ("count", "per", "gives"))
    if count is None or per is None or gives is None:
        reader.error(node, "a rate needs 'count', 'per' and 'gives'")
        return None
    if not all(known_value(reader, node, facets, "unit", unit) for unit in (count, per, gives)):
        return None
    return (count, per), gives


def read_token_rate(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> tuple[str, str] | None:
    """`{rate: samples/s, gives: tokens/s}` -> (samples/s, tokens/s)."""
    fields = reader.mapping(node, "a token rate", ("rate", "gives"))
    rate, gives = (reader.text(fields[k][1], f"'{k}'") if k in fields else None for k in ("rate", "gives"))
    if rate is None or gives is None:
        reader.error(node, "a token rate needs 'rate' and 'gives'")
        return None
    if not all(known_value(reader, node, facets, "unit", unit) for unit in (rate, gives)):
        return None
    return rate, gives


def read_items(reader: NodeReader, top: dict[str, tuple[Node, Node]], key: str) -> list[Node]:
    if key not in top:
        return []
    return reader.sequence(top[key][1], f"'{key}'")


def read_entry(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> Known | None:
    fields = reader.mapping(node, "a knowledge entry", ENTRY_KEYS)
    kinds = [k for k in KINDS if k in fields]
    if len(kinds) != 1 or "says" not in fields or "facts" not in fields:
        reader.error(node, "an entry needs one of 'call', 'method', 'expression' or 'function', and 'says' and 'facts'")
        return None
    pattern = reader.text(fields[kinds[0]][1], f"'{kinds[0]}'")
    says = reader.text(fields["says"][1], "'says'")
    facts = read_facts(reader, fields["facts"][1], facets, "'facts'")
    local = (reader.text(fields["local"][1], "'local'") or "") if "local" in fields else ""
    keyword = ""
    positions: tuple[int, ...] = ()
    if "norm_type" in fields:
        norm = reader.mapping(fields["norm_type"][1], "'norm_type'", ("keyword", "positions"))
        keyword = (reader.text(norm["keyword"][1], "'keyword'") or "") if "keyword" in norm else ""
        positions = tuple(_whole(reader, n) for n in (norm["positions"][1].elements if "positions" in norm else ()))
    arguments, element, of, writes = (
        _whole(reader, fields[k][1]) if k in fields else None for k in ("arguments", "element", "of", "writes")
    )
    keeps = facet_names(reader, fields["keeps"][1], facets, "'keeps'") if "keeps" in fields else ()
    picks = _wholes(reader, fields["picks"][1], "'picks'") if "picks" in fields else ()
    unless_keyword, unless_position = "", None
    unless_facets: tuple[str, ...] = ()
    if "unless" in fields:
        unless = reader.mapping(fields["unless"][1], "'unless'", ("keyword", "position", "facets"))
        unless_keyword = (reader.text(unless["keyword"][1], "'keyword'") or "") if "keyword" in unless else ""
        unless_position = _whole(reader, unless["position"][1]) if "position" in unless else None
        unless_facets = facet_names(reader, unless["facets"][1], facets, "'facets'") if "facets" in unless else ()
    clamps, objects_only = (k in fields and fields[k][1].value is True for k in ("clamps_with_number", "objects_only"))
    receivers = frozenset(v for _, v in reader.texts(fields["receivers"][1], "'receivers'")) if "receivers" in fields else frozenset()
    if pattern is None or says is None:
        return None
    chain = pattern if kinds[0] in ("method", "expression") else pattern + "()"
    return Known(
        chain,
        kinds[0] == "method",
        says,
        tuple(facts),
        keyword,
        positions,
        arguments=arguments,
        element=element,
        of=of,
        keeps=keeps,
        writes=writes,
        unless_keyword=unless_keyword,
        unless_position=unless_position,
        unless_facets=unless_facets,
        clamps=clamps,
        objects_only=objects_only,
        receivers=receivers,
        local=local,
        picks=picks,
    )


def read_derivation(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> Derivation | None:
    fields = reader.mapping(node, "a derivation", ("construct", "from", "says", "gives", "also", "with", "unless"))
    if any(k not in fields for k in ("construct", "says", "gives")):
        reader.error(node, "a derivation needs 'construct', 'says' and 'gives'")
        return None
    construct = reader.text(fields["construct"][1], "'construct'")
    if construct not in CONSTRUCTS:
        reader.error(fields["construct"][1], f"unknown construct '{construct}'; known: {', '.join(CONSTRUCTS)}")
        return None
    given = read_facts(reader, fields["from"][1], facets, "'from'") if "from" in fields else ()
    says = reader.text(fields["says"][1], "'says'")
    gives = read_facts(reader, fields["gives"][1], facets, "'gives'")
    also = read_facts(reader, fields["also"][1], facets, "'also'") if "also" in fields else ()
    also_with = read_facts(reader, fields["with"][1], facets, "'with'") if "with" in fields else ()
    unless = tuple(
        f for item in (fields["unless"][1].elements if "unless" in fields else ()) for f in read_facts(reader, item, facets, "'unless'")
    )
    return Derivation(construct, given[0] if given else None, says or "", gives, also, unless, also_with) if says else None


def read_schedulers(reader: NodeReader, node: Node) -> Schedulers:
    fields = reader.mapping(node, "'schedulers'", ("step", "reads", "group_reads", "names", "stepped_before"))
    step = (reader.text(fields["step"][1], "'step'") or "step") if "step" in fields else "step"
    reads, group_reads = (
        frozenset(v for _, v in reader.texts(fields[k][1], f"'{k}'")) if k in fields else frozenset() for k in ("reads", "group_reads")
    )
    names = tuple(v for _, v in reader.texts(fields["names"][1], "'names'")) if "names" in fields else ()
    hooks = []
    for item in read_items(reader, fields, "stepped_before"):
        hook = reader.mapping(item, "a hook of 'stepped_before'", ("method", "classes"))
        method = reader.text(hook["method"][1], "'method'") if "method" in hook else None
        classes = frozenset(v for _, v in reader.texts(hook["classes"][1], "'classes'")) if "classes" in hook else frozenset()
        if method and classes:
            hooks.append((method, classes))
        else:
            reader.error(item, "a hook of 'stepped_before' needs a 'method' and its 'classes'")
    return Schedulers(step, reads, group_reads, names, tuple(hooks))


def _whole(reader: NodeReader, node: Node) -> int:
    if node.kind != "integer" or not isinstance(node.value, int):
        reader.error(node, f"expected a whole number, not {node.written}")
        return -1
    return node.value


def _wholes(reader: NodeReader, node: Node, what: str) -> tuple[int, ...]:
    if node.kind != "sequence":
        reader.error(node, f"{what} must be a list of whole numbers")
        return ()
    return tuple(_whole(reader, n) for n in node.elements)


def compact_code(code: str) -> str:
    return "".join(code.split())
