"""The rules for reading a phrase inside its noun phrase and its sentence, as data:
`rules/reading/*.yaml` (selection words, a total that names a combined loss, head nouns, the
scope of negation cues, list items, reductions over the run's ranks, statistics held up against zero, the whole a part is taken of).

This module only loads and validates them; `language/noun_phrase.py` and `language/phrases.py` apply them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base import marked_yaml
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.vocabulary import SEPARATOR, FacetExample, read_examples
from metriclint.model import ConfigError

# Each file's word lists, whether it sets a `reach`, and what its examples must yield when read.
FILES = {
    "selection.yaml": (("phrases", "domains", "wide", "wide_domains", "opening", "bounding", "bounds", "prepositional"), True, "claims"),
    "combined.yaml": (("phrases", "heads", "breaks", "domains"), True, "claims"),
    "heads.yaml": (("determiners", "compound_heads", "names"), False, "claims"),
    "cue_scope.yaml": (("referents",), False, "claims"),
    "sentences.yaml": (("bullets", "numbered"), False, "sentences"),
    "over_ranks.yaml": (("after", "states", "prepositions", "qualifiers", "ranks"), True, "claims"),
    "conditions.yaml": (("facets", "before", "after"), False, "claims"),
    "wholes.yaml": (("facets", "before"), False, "claims"),
}


@dataclass(frozen=True)
class RulesFile:
    lists: dict[str, tuple[str, ...]]
    reach: int
    examples: tuple[FacetExample, ...]


@dataclass(frozen=True)
class Silencer:
    """Words beside a phrase of one of `facets` that make it state nothing: a statistic held up
    against zero (conditions.yaml), the whole a part is taken of (wholes.yaml)."""

    facets: frozenset[str]
    before: re.Pattern[str] | None  # ending right before the phrase: searched in the text up to it
    after: re.Pattern[str] | None  # right after the phrase: matched where it ends

    def silences(self, before: str, text: str, end: int) -> bool:
        """Whether `before` (the text up to a phrase of one of `facets`) or `text` from the
        phrase's `end` holds this silencer's words."""
        if self.before is not None and self.before.search(before) is not None:
            return True
        return self.after is not None and self.after.match(text, end) is not None


@dataclass(frozen=True)
class ReadingRules:
    superlatives: frozenset[str]  # phrases that state a reduction only with a domain after them
    domain: re.Pattern[str]  # a word or words that make a superlative a reduction ("over")
    domain_reach: int  # how many words may stand between the superlative and its domain
    wide: frozenset[str]  # "mean": gated for being a verb, so the domains of `wide_domain` count after it too
    wide_domain: re.Pattern[str]  # "of the batch": a domain after "mean", where a superlative picks from it
    opening: frozenset[str]  # "mean", "maximum": opening a sentence or a definition, they need no domain
    bounding: frozenset[str]  # "maximum": the opening words that may name a bound on what is done
    bound: re.Pattern[str]  # "to sample": after such an opening word, it names that bound
    totals: frozenset[str]  # "total": before a loss, it names a combined objective unless a domain follows
    combined_heads: frozenset[str]  # "loss": the nouns a total names the combined form of
    combined_breaks: frozenset[str]  # "of", "batch": a word that cannot qualify such a head
    combined_domain: re.Pattern[str]  # "over": after the head, it makes the total a sum again
    combined_reach: int  # words between the total and its head, and between the head and a domain
    determiners: frozenset[str]  # "per", "each": their phrase's noun may head a longer compound
    compound_heads: frozenset[str]  # "count": after "each token", the unit is token counts
    names: frozenset[str]  # "rank": a phrase before it names a thing ("global rank")
    referent: re.Pattern[str]  # "true": the phrase after it is the right value, not a negated one
    list_item: re.Pattern[str]  # where a list item starts a sentence of its own
    over_ranks_after: frozenset[tuple[str, str]]  # (facet, value) of a reduction that may be over ranks
    over_ranks_states: tuple[tuple[str, str], ...]  # what such a reduction states besides ("scope", "global")
    over_ranks: re.Pattern[str]  # "across all DP ranks", right after the reduction; group "preposition"
    over_ranks_prepositions: frozenset[str]  # "across": a reduction phrase ending in one needs none after it
    silencers: tuple[Silencer, ...]  # the words beside a phrase that make it state nothing
    silenced_facets: frozenset[str]  # the facets of their phrases, asked first


@lru_cache(maxsize=None)
def builtin() -> ReadingRules:
    lists = {name: _load(name).lists for name in FILES}
    selection, heads, ranks = lists["selection.yaml"], lists["heads.yaml"], lists["over_ranks.yaml"]
    combined = lists["combined.yaml"]
    silencers = (_silencer(lists["conditions.yaml"]), _silencer(lists["wholes.yaml"]))
    return ReadingRules(
        superlatives=frozenset(w.lower() for w in selection["phrases"]),
        domain=_words(selection["domains"]),
        domain_reach=_load("selection.yaml").reach,
        wide=frozenset(w.lower() for w in selection["wide"]),
        wide_domain=_words(selection["wide_domains"]),
        opening=frozenset(w.lower() for w in selection["opening"]),
        bounding=frozenset(w.lower() for w in selection["bounding"]),
        bound=_bound(selection["bounds"], selection["prepositional"]),
        totals=frozenset(w.lower() for w in combined["phrases"]),
        combined_heads=frozenset(w.lower() for w in combined["heads"]),
        combined_breaks=frozenset(w.lower() for w in combined["breaks"]),
        combined_domain=_words(combined["domains"]),
        combined_reach=_load("combined.yaml").reach,
        determiners=frozenset(w.lower() for w in heads["determiners"]),
        compound_heads=frozenset(w.lower() for w in heads["compound_heads"]),
        names=frozenset(w.lower() for w in heads["names"]),
        referent=_words(lists["cue_scope.yaml"]["referents"]),
        list_item=_list_item(lists["sentences.yaml"]["bullets"], lists["sentences.yaml"]["numbered"]),
        over_ranks_after=frozenset(_facet_values(ranks["after"])),
        over_ranks_states=_facet_values(ranks["states"]),
        over_ranks=_over_ranks(ranks["prepositions"], ranks["qualifiers"], ranks["ranks"], _load("over_ranks.yaml").reach),
        over_ranks_prepositions=frozenset(w.lower() for w in ranks["prepositions"]),
        silencers=silencers,
        silenced_facets=frozenset(facet for silencer in silencers for facet in silencer.facets),
    )


def _silencer(lists: dict[str, tuple[str, ...]]) -> Silencer:
    """A file's `facets`, and its `before` and `after` words as patterns."""
    before, after = lists.get("before"), lists.get("after")
    return Silencer(
        frozenset(lists["facets"]),
        re.compile(rf"{_words(before).pattern}(?:\s+(?:the|a|an))?[\s-]+$", re.IGNORECASE) if before else None,
        re.compile(rf"\s+{_words(after).pattern}(?![-.]\w)", re.IGNORECASE) if after else None,
    )


def examples(name: str) -> tuple[FacetExample, ...]:
    """The examples of one file of `FILES`; each is a test."""
    return _load(name).examples


@lru_cache(maxsize=None)
def _load(name: str) -> RulesFile:
    """One file of `FILES`; a broken one is a ConfigError with its `file:line:col`."""
    path = rules_dir() / "reading" / name
    keys, has_reach, expected = FILES[name]
    root, problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    reader = NodeReader(str(path))
    lists: dict[str, tuple[str, ...]] = {}
    reach = 0
    found: tuple[FacetExample, ...] = ()
    if root is not None:
        required = keys + (("reach",) if has_reach else ())
        items = reader.mapping(root, "the file", required + ("examples",))
        for key in required:
            if key not in items:
                reader.error(root, f"'{key}' is missing")
        for key in keys:
            if key in items:
                lists[key] = tuple(text for _, text in reader.texts(items[key][1], f"'{key}'"))
        if "reach" in items:
            reach = _whole_number(reader, items["reach"][1])
        found = read_examples(reader, items["examples"][1], expected) if "examples" in items else ()
    if problems or reader.problems:
        raise ConfigError(problems + reader.problems)
    return RulesFile(lists, reach, found)


def _whole_number(reader: NodeReader, node: Node) -> int:
    if not isinstance(node.value, int) or isinstance(node.value, bool):
        reader.error(node, "'reach' must be a whole number")
        return 0
    return node.value


def _words(words: tuple[str, ...]) -> re.Pattern[str]:
    """Any of `words` as whole words, any case, any white space inside a multi-word entry."""
    alternatives = "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)


def _bound(markers: tuple[str, ...], prepositional: tuple[str, ...]) -> re.Pattern[str]:
    """An infinitive's marker and the word after it, unless that word makes the marker a
    preposition (`to the reference`)."""
    return re.compile(rf"{_words(markers).pattern}\s+(?!{_words(prepositional).pattern})[A-Za-z]+", re.IGNORECASE)


def _facet_values(entries: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`facet=value` entries as pairs (the tests hold them to the built-in facets)."""
    return tuple((facet, value) for facet, _, value in (entry.partition("=") for entry in entries))


def _over_ranks(prepositions: tuple[str, ...], qualifiers: tuple[str, ...], ranks: tuple[str, ...], reach: int) -> re.Pattern[str]:
    """The words after a reduction that name the run's ranks as its domain: an optional
    preposition (the reduction's phrase may end in one), up to `reach` qualifiers, a noun."""

    def alternatives(words: tuple[str, ...]) -> str:
        return "|".join(SEPARATOR.join(map(re.escape, w.split())) for w in sorted(words, key=len, reverse=True))

    return re.compile(
        rf"(?i:\s+(?P<preposition>{alternatives(prepositions)}))?(?i:{SEPARATOR}(?:{alternatives(qualifiers)})){{0,{reach}}}"
        rf"(?i:{SEPARATOR}(?:{alternatives(ranks)}))(?![\w'])"
    )


def _list_item(bullets: tuple[str, ...], numbered: tuple[str, ...]) -> re.Pattern[str]:
    """A line break before a list marker and a space: the break ends the sentence before it."""
    markers = "|".join([re.escape(b) for b in bullets] + [rf"\d{{1,3}}{re.escape(n)}" for n in numbered])
    return re.compile(rf"\n[ \t]*(?=(?:{markers})[ \t])")
