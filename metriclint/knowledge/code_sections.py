"""Sections of the code knowledge files besides call results, and the readers they share with
code_knowledge.py: how a name says it holds a policy's log-probabilities (divergences.yaml), what a logging
call does to the values it logs (logging.yaml), facts checked against the facets."""

from __future__ import annotations

from dataclasses import dataclass, field

from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.vocabulary import Facet


@dataclass(frozen=True, slots=True)
class LogRatios:
    """How a name says it holds log-probabilities, and of which policy (divergences.yaml)."""

    log_probs: frozenset[str] = frozenset()  # words: `logprobs`, `log_probs` (`log` and `probs` joined)
    policies: dict[str, str] = field(default_factory=dict)  # word -> policy
    drawn_by: tuple[str, ...] = ()  # of two policies, the one listed first drew the tokens
    examples: tuple[tuple[str, str | None], ...] = ()  # (name, the policy it names), run by the tests

    def policy(self, name: str) -> str | None:
        """The policy whose log-probabilities `name` holds; an unqualified name holds the
        current policy's. None when it names no log-probabilities, or a word it cannot place."""
        words = words_of(name)
        if sum(w in self.log_probs for w in words) != 1:
            return None
        owners = {self.policies.get(w) for w in words if w not in self.log_probs}
        if None in owners or len(owners) > 1:
            return None
        return owners.pop() if owners else "current"

    def sampler(self, policies: tuple[str, str]) -> int | None:
        """Which of the two policies drew the tokens (0 or 1), which decides a log-ratio's sign;
        None when that is not certain (a policy `drawn_by` does not list, such as a teacher)."""
        if any(p not in self.drawn_by for p in policies):
            return None
        return 0 if self.drawn_by.index(policies[0]) < self.drawn_by.index(policies[1]) else 1


def words_of(name: str) -> list[str]:
    """`ref_log_probs` -> [ref, log_probs]: a name's words, `log` joined to the word after it."""
    words: list[str] = []
    for word in name.lower().split("_"):
        if words and words[-1] == "log":
            words[-1] = f"log_{word}"
        elif word:
            words.append(word)
    return words


@dataclass(frozen=True, slots=True)
class LoggingEffect:
    """What a logging call does to the values it logs, when it is passed each keyword of
    `when` as the literal True or False: `facts`, or, with `keyword`, the facts `values` gives
    for that argument as written (`facts` when it is not passed; nothing for another value)."""

    method: str  # the logging method's name (`log`, `log_dict`)
    when: tuple[tuple[str, bool], ...]
    says: str
    facts: tuple[tuple[str, str], ...]
    keyword: str = ""
    values: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


def read_facts(reader: NodeReader, node: Node, facets: dict[str, Facet], what: str) -> tuple[tuple[str, str], ...]:
    found = []
    for facet, (facet_node, value_node) in reader.mapping(node, what).items():
        value = reader.text(value_node, f"the value of '{facet}'")
        if value is not None and known_value(reader, facet_node, facets, facet, value):
            found.append((facet, value))
    return tuple(found)


def read_logged(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> LoggingEffect | None:
    fields = reader.mapping(node, "a logging entry", ("method", "when", "says", "facts", "keyword", "values"))
    if any(k not in fields for k in ("method", "when", "says", "facts")):
        reader.error(node, "a logging entry needs 'method', 'when', 'says' and 'facts'")
        return None
    method, says = (reader.text(fields[k][1], f"'{k}'") for k in ("method", "says"))
    when = []
    for keyword, (_, value) in reader.mapping(fields["when"][1], "'when'").items():
        if value.kind != "boolean":
            reader.error(value, f"'{keyword}' must be true or false, not {value.written}")
        when.append((keyword, value.value is True))
    keyword = (reader.text(fields["keyword"][1], "'keyword'") or "") if "keyword" in fields else ""
    values = tuple(
        (written, read_facts(reader, facts, facets, f"the facts of '{written}'"))
        for written, (_, facts) in (reader.mapping(fields["values"][1], "'values'") if "values" in fields else {}).items()
    )
    facts = read_facts(reader, fields["facts"][1], facets, "'facts'")
    return LoggingEffect(method, tuple(when), says, facts, keyword, values) if method and says else None


def read_log_ratios(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> LogRatios:
    fields = reader.mapping(node, "'log_ratios'", ("log_probs", "policies", "drawn_by", "examples"))
    words = frozenset(w for _, w in reader.texts(fields["log_probs"][1], "'log_probs'")) if "log_probs" in fields else frozenset()
    policies: dict[str, str] = {}
    for policy, (key_node, value) in (reader.mapping(fields["policies"][1], "'policies'") if "policies" in fields else {}).items():
        if known_value(reader, key_node, facets, "policy", policy):
            policies.update((w, policy) for _, w in reader.texts(value, f"the words of '{policy}'"))
    drawn_by = tuple(
        policy
        for key_node, policy in (reader.texts(fields["drawn_by"][1], "'drawn_by'") if "drawn_by" in fields else ())
        if known_value(reader, key_node, facets, "policy", policy)
    )
    examples = []
    for example in fields["examples"][1].elements if "examples" in fields else ():
        parts = reader.mapping(example, "an example", ("name", "policy"))
        name = reader.text(parts["name"][1], "'name'") if "name" in parts else None
        owner = parts["policy"][1].value if "policy" in parts else None
        if name is not None:
            examples.append((name, owner if isinstance(owner, str) else None))
    return LogRatios(words, policies, drawn_by, tuple(examples))


def facet_names(reader: NodeReader, node: Node, facets: dict[str, Facet], what: str) -> tuple[str, ...]:
    """A list of facets (`keeps`, `kept_in_lists`): a misspelt one would keep nothing, silently."""
    found = reader.texts(node, what)
    for name_node, name in found:
        if name not in facets:
            reader.error(name_node, f"unknown facet '{name}'")
    return tuple(name for _, name in found if name in facets)


def known_value(reader: NodeReader, node: Node, facets: dict[str, Facet], facet: str, value: str) -> bool:
    if facet not in facets:
        reader.error(node, f"unknown facet '{facet}'")
        return False
    if value not in facets[facet].values:
        reader.error(node, f"unknown value '{value}' for facet '{facet}'")
        return False
    return True


@dataclass(frozen=True, slots=True)
class Unreduced:
    """A logging call that logs each process's own value as given (ranks.yaml): a value of this
    rank's data reaching it with no collective on the way is logged per rank."""

    call: str  # a function as imported (`wandb.log`), or "" for a method
    method: str  # a method's name, or ""
    says: str
    receivers: frozenset[str] = frozenset()  # a method's object is named with one of these last words
    classes: frozenset[str] = frozenset()  # ... in a class with one of these bases (by last name)
    unless: frozenset[str] = frozenset()  # keywords that, passed other than as the literal False, may reduce


def read_unreduced(reader: NodeReader, node: Node) -> Unreduced | None:
    fields = reader.mapping(node, "an unreduced logging call", ("call", "method", "says", "receivers", "classes", "unless"))
    kinds = [k for k in ("call", "method") if k in fields]
    if len(kinds) != 1 or "says" not in fields:
        reader.error(node, "an unreduced logging call needs one of 'call' or 'method', and 'says'")
        return None
    name, says = reader.text(fields[kinds[0]][1], f"'{kinds[0]}'"), reader.text(fields["says"][1], "'says'")
    words = {
        k: frozenset(v for _, v in reader.texts(fields[k][1], f"'{k}'")) if k in fields else frozenset()
        for k in ("receivers", "classes", "unless")
    }
    if not name or not says:
        return None
    call, method = (name, "") if kinds[0] == "call" else ("", name)
    return Unreduced(call, method, says, words["receivers"], words["classes"], words["unless"])


def read_alike(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> frozenset[tuple[str, str]] | None:
    """`{facet: scope, values: [per-rank, per-device]}`: two values a text may state one for the other."""
    fields = reader.mapping(node, "a pair of alike values", ("facet", "values"))
    facet = reader.text(fields["facet"][1], "'facet'") if "facet" in fields else None
    values = [(v_node, v) for v_node, v in reader.texts(fields["values"][1], "'values'")] if "values" in fields else []
    if facet is None or len(values) != 2:
        reader.error(node, "a pair of alike values needs 'facet' and two 'values'")
        return None
    if not all(known_value(reader, v_node, facets, facet, v) for v_node, v in values):
        return None
    return frozenset((facet, v) for _, v in values)


@dataclass(frozen=True, slots=True)
class Flops:
    """A product that counts FLOPs (units.yaml `flops`): a factor named as a parameter count
    (all the words of one of `parameters`) times one named as a token count gives `gives`."""

    parameters: tuple[tuple[str, ...], ...]
    tokens: tuple[tuple[str, ...], ...]
    gives: str

    def counts(self, names: list[list[str]]) -> bool:
        """Whether the factors' names (each as its words) hold both counts."""
        return any(_named(words, self.parameters) for words in names) and any(_named(words, self.tokens) for words in names)


def _named(words: list[str], alternatives: tuple[tuple[str, ...], ...]) -> bool:
    return any(all(w in words for w in wanted) for wanted in alternatives)


def read_flops(reader: NodeReader, node: Node, facets: dict[str, Facet]) -> Flops | None:
    fields = reader.mapping(node, "a FLOP product", ("parameters", "tokens", "gives"))
    if any(k not in fields for k in ("parameters", "tokens", "gives")):
        reader.error(node, "a FLOP product needs 'parameters', 'tokens' and 'gives'")
        return None
    gives = reader.text(fields["gives"][1], "'gives'")
    if gives is None or not known_value(reader, fields["gives"][1], facets, "unit", gives):
        return None
    parameters, tokens = (
        tuple(tuple(w for _, w in reader.texts(words, "the words of a name")) for words in reader.sequence(fields[k][1], f"'{k}'"))
        for k in ("parameters", "tokens")
    )
    return Flops(parameters, tokens, gives)
