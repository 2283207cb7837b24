"""What a name says about the value it names: the parts of `rules/names.yaml`.

`cpu_memory_used_gb` says the value is in GB; `reward_mean` that it is a mean. The parts are
data, each checked against the facet vocabularies, and the file's examples (names that must and
must not state something) are run by the tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping

from metriclint.base import keys, marked_yaml
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import NodeReader
from metriclint.knowledge.vocabulary import Facet, load_builtin
from metriclint.model import ConfigError

FILE = "names.yaml"
PLACES = ("end", "any")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_SHORT_WORD = 3  # a one-word phrase this short (`kl`, `dpo`) states nothing in a name


@dataclass(frozen=True, slots=True)
class NamePart:
    """Words that, ending a name (`end`) or anywhere in it (`any`), state `facet` = `value`."""

    words: tuple[str, ...]
    at: str
    facet: str
    value: str
    also: tuple[str, ...] = ()  # values the part is commonly written for: not ruled out by it


@dataclass(frozen=True, slots=True)
class Stated:
    """One facet value a name states, and the part that states it. Not `outright` where the name
    holds two reductions (`avg_len_max`), which names and texts put either way round."""

    part: NamePart
    outright: bool = True

    @property
    def phrase(self) -> str:
        return "_".join(self.part.words)


def words(name: str) -> tuple[str, ...]:
    """`perf/cpuMemory_{label}_GiB` -> (perf, cpu, memory, gib): placeholders left out, split at
    separators and camelCase humps (but a part's own word such as `GiB` stays whole),
    lower-cased."""
    known = _part_words()
    chunks = _SEPARATORS.split(keys.literal(name))
    return tuple(w.lower() for chunk in chunks for w in ((chunk,) if chunk.lower() in known else _HUMP.split(chunk)) if w)


def stated(name: str, extra: tuple[NamePart, ...] = ()) -> list[Stated]:
    """What `name` states, one value per facet: the longest matching part wins. A reduction
    that ends a name after another one (`avg_len_max`, `mean_of_max`) nests in it or takes it
    in: names put the two either way round (`mean_turn_length_std`, the mean of stds, and
    `group_reward_std_mean`, the same), so the value is the leading one and the other is not
    ruled out (`also`). `extra`: the parts of a registry's own facets (`custom_parts`)."""
    found = words(name)
    best: dict[str, NamePart] = {}
    starting = _starting()
    shipped = [parts()[i] for i in sorted({i for word in found for i in starting.get(word, ())})]
    for part in (*shipped, *extra):
        if _matches(part, found) and (part.facet not in best or len(part.words) > len(best[part.facet].words)):
            best[part.facet] = part
    outer = None
    if "reduction" in best and _after_condition(found, len(found) - len(best["reduction"].words)):
        del best["reduction"]  # `zero_std`: a condition on the items, not the value's reduction
    if "reduction" in best:
        leading = found[: -len(best["reduction"].words)]
        outer = next(
            (_reductions()[word] for i, word in enumerate(leading) if word in _reductions() and not _after_condition(leading, i)),
            None,
        )
        if outer is not None:
            inner = best["reduction"]
            best["reduction"] = replace(outer, also=tuple(dict.fromkeys((*outer.also, inner.value, *inner.also))))
    return [Stated(part, outright=not (outer and part.facet == "reduction")) for part in best.values()]


def custom_parts(facets: dict[str, Facet]) -> tuple[NamePart, ...]:
    """The parts a registry's own facets (those the shipped vocabulary lacks) give names: each
    phrase's words, anywhere in a name (`dpo loss` states its value of `train/dpo_loss_mean`).
    A phrase of one short word is left out: in a name it is as often a piece of another word."""
    builtin, _, _ = load_builtin()
    found = []
    for facet in facets.values():
        if facet.name in builtin:
            continue
        for value, phrases in facet.values.items():
            for phrase in phrases:
                part = tuple(w.lower() for w in _SEPARATORS.split(phrase) if w)
                if len(part) > 1 or len(part) == 1 and len(part[0]) > _SHORT_WORD:
                    found.append(NamePart(part, "any", facet.name, value))
    return tuple(found)


@lru_cache(maxsize=1)
def _part_words() -> frozenset[str]:
    return frozenset(word for part in parts() for word in part.words)


@lru_cache(maxsize=1)
def _reductions() -> dict[str, NamePart]:
    """The one-word reduction parts, by their word, as they would read at a name's end."""
    return {part.words[0]: part for part in parts() if part.facet == "reduction" and len(part.words) == 1}


@lru_cache(maxsize=1)
def _starting() -> dict[str, tuple[int, ...]]:
    """The shipped parts by their first word (their places in `parts()`): a name is tried only
    against the parts that start with one of its words, in their order in the file."""
    found: dict[str, list[int]] = {}
    for i, part in enumerate(parts()):
        found.setdefault(part.words[0], []).append(i)
    return {word: tuple(places) for word, places in found.items()}


def _matches(part: NamePart, found: tuple[str, ...]) -> bool:
    size = len(part.words)
    if part.at == "end":
        return found[-size:] == part.words
    return any(found[i : i + size] == part.words for i in range(len(found) - size + 1))


def parts() -> tuple[NamePart, ...]:
    return _loaded()[0]


def _after_condition(words: tuple[str, ...], at: int) -> bool:
    """Whether the word before `words[at]` is a condition word (`conditions`): `zero` in
    `frac_reward_zero_std` makes the `std` after it a condition the items meet."""
    return at > 0 and words[at - 1] in _loaded()[2]


@lru_cache(maxsize=None)
def bound(key: str) -> str | None:
    """The reduction a key whose last segment opens with a bound's word restates (`bounds`:
    `inference/max_requests` -> max), else None. Asked of each reading of each metric a text
    speaks for: one answer per key."""
    found = words(keys.last_segment(key))
    return _loaded()[3].get(found[0]) if found else None


def against_texts() -> frozenset[str]:
    """The facets a logged key's own name is held against texts for (ML002)."""
    return _loaded()[1]


@lru_cache(maxsize=1)
def _loaded() -> tuple[tuple[NamePart, ...], frozenset[str], frozenset[str], dict[str, str]]:
    path = rules_dir() / FILE
    root, problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    reader = NodeReader(str(path))
    facets, _, _ = load_builtin()
    found: list[NamePart] = []
    top = reader.mapping(root, "the names file", ("against_texts", "parts", "conditions", "bounds", "examples")) if root is not None else {}
    held = reader.texts(top["against_texts"][1], "'against_texts'") if "against_texts" in top else []
    for node, facet in held:
        if facet not in facets:
            reader.error(node, f"unknown facet {facet!r} in 'against_texts'")
    for node in top["parts"][1].elements if "parts" in top else ():
        fields = reader.mapping(node, "a name part", ("part", "at", "states", "also"))
        text = reader.text(fields["part"][1], "'part'") if "part" in fields else None
        at = reader.text(fields["at"][1], "'at'") if "at" in fields else None
        states = reader.mapping(fields["states"][1], "'states'") if "states" in fields else {}
        if text is None or at not in PLACES or len(states) != 1:
            reader.error(node, f"a name part needs 'part', 'at' (one of: {', '.join(PLACES)}) and one 'states: {{facet: value}}'")
            continue
        facet, (facet_node, value_node) = next(iter(states.items()))
        value = reader.text(value_node, f"the value of '{facet}'")
        also = tuple(v for _, v in reader.texts(fields["also"][1], "'also'")) if "also" in fields else ()
        known = facets[facet].values if facet in facets else {}
        unknown = [v for v in (value, *also) if v not in known]
        if value is None or unknown:
            reader.error(facet_node, f"unknown value {unknown[0] if unknown else value!r} of facet '{facet}'")
            continue
        found.append(NamePart(tuple(text.split("_")), at, facet, value, also))
    bounds = _bounds(reader, top["bounds"][1], facets["reduction"].values) if "bounds" in top else {}
    if problems or reader.problems:
        raise ConfigError(problems + reader.problems)
    conditions = frozenset(word for _, word in reader.texts(top["conditions"][1], "'conditions'")) if "conditions" in top else frozenset()
    return tuple(found), frozenset(facet for _, facet in held), conditions, bounds


def _bounds(reader: NodeReader, node: marked_yaml.Node, reductions: Mapping[str, object]) -> dict[str, str]:
    """`bounds: {max: [max, maximum]}` as word -> the reduction it would state."""
    found: dict[str, str] = {}
    for value, (value_node, listed) in reader.mapping(node, "'bounds'").items():
        if value not in reductions:
            reader.error(value_node, f"unknown value {value!r} of facet 'reduction' in 'bounds'")
        found.update((word, value) for _, word in reader.texts(listed, f"the words of bound {value!r}"))
    return found
