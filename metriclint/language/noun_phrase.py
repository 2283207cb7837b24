"""What a facet phrase states inside its noun phrase: the words after it can change it.

A phrase matched on its own can be cut out of a longer noun phrase ("per response" in "per
response token", "each token" in "each token count", "global" in "global rank"), and a
superlative usually picks one item rather than describing a reduction ("the smallest size that
fits"). The words that decide this are data (`rules/reading/heads.yaml`, `selection.yaml`).
"""

from __future__ import annotations

import re

from metriclint.knowledge.reading_rules import ReadingRules
from metriclint.knowledge.vocabulary import PhraseEntry, Vocabulary

_NEXT_WORD = re.compile(r"([ \t]+|[ \t]*-[ \t]*)([A-Za-z]+)\b")
_WORD = re.compile(r"[\w']+")


def stated(
    text: str, entry: PhraseEntry, match: re.Match[str], limit: int, vocabulary: Vocabulary, rules: ReadingRules
) -> tuple[PhraseEntry, int] | None:
    """The entry the phrase at `match` states and where its words end, or None when the noun
    phrase around it says none; `limit` is the end of the phrase's clause.

    Only a phrase that can modify a noun (one word, "global", "per-token", or an open
    determiner phrase) can be part of a name: "mean over ranks" ends in a preposition, and
    "ranks" is its object."""
    after = _NEXT_WORD.match(text, match.end(), limit)
    head = after.group(2).lower() if after is not None else ""
    open_determiner = _open_determiner(match.group(), rules)
    if head in rules.names and (open_determiner or len(match.group().split()) == 1):
        return None
    if after is not None and after.group(1).strip() == "" and open_determiner:
        longer = vocabulary.lookup(f"{match.group().split()[0]} {head}")
        if longer is not None and longer.facet == entry.facet and longer.value:
            return longer, after.end()
        if head in rules.compound_heads:
            return None
    if entry.phrase.lower() in rules.superlatives and not _has_domain(text, match.end(), limit, rules):
        return None
    return entry, match.end()


def _open_determiner(phrase: str, rules: ReadingRules) -> bool:
    """"per response" written with spaces: its noun can be the first of a compound."""
    words = phrase.split()
    return len(words) == 2 and words[0].lower() in rules.determiners


def _has_domain(text: str, start: int, limit: int, rules: ReadingRules) -> bool:
    """Whether a domain ("over ranks") follows within the reach, so the superlative reduces."""
    domain = rules.domain.search(text, start, limit)
    return domain is not None and len(_WORD.findall(text, start, domain.start())) <= rules.domain_reach
