"""What a facet phrase states inside its noun phrase: the words after it can change it.

A phrase matched on its own can be cut out of a longer noun phrase ("per response" in "per
response token", "each token" in "each token count", "global" in "global rank"), a
superlative usually picks one item rather than describing a reduction ("the smallest size that
fits"), and "the total loss" is the loss made of several terms, not a sum over samples. The
words that decide this are data (`rules/reading/heads.yaml`, `selection.yaml`, `combined.yaml`).
"""

from __future__ import annotations

import re

from metriclint.knowledge.reading_rules import ReadingRules
from metriclint.knowledge.vocabulary import PhraseEntry, Vocabulary

_NEXT_WORD = re.compile(r"([ \t]+|[ \t]*-[ \t]*)([A-Za-z]+)\b")
_COMPOUND_WORD = re.compile(r"[\w'-]+")  # "per-token" qualifies a loss as one word


def stated(
    text: str, entry: PhraseEntry, match: re.Match[str], limit: int, vocabulary: Vocabulary, rules: ReadingRules, opens: bool = False
) -> tuple[PhraseEntry, int] | None:
    """The entry the phrase at `match` states and where its words end, or None when the noun
    phrase around it says none; `limit` is the end of the phrase's clause. `opens`: the phrase
    opens its sentence or the definition after a name's colon, where "mean" is no verb ("Mean
    absolute log-ratio", "kl_max: mean staleness of the dropped samples").

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
    lower = entry.phrase.lower()
    # "Max absolute gap", not a lone "max", nor a bound ("Max frames to sample")
    names_value = opens and lower in rules.opening and after is not None and not _bounded(text, lower, match.end(), limit, rules)
    if lower in rules.superlatives and not names_value and not _reduces(text, lower, match.end(), limit, rules):
        return None
    if entry.phrase.lower() in rules.totals and _names_combined(text, entry, match.end(), limit, vocabulary, rules):
        return None
    return entry, match.end()


def _open_determiner(phrase: str, rules: ReadingRules) -> bool:
    """ "per response" written with spaces: its noun can be the first of a compound."""
    words = phrase.split()
    return len(words) == 2 and words[0].lower() in rules.determiners


def _reduces(text: str, phrase: str, start: int, limit: int, rules: ReadingRules) -> bool:
    """Whether a domain follows the superlative (or "mean") that ends at `start`."""
    if _domain(text, start, limit, rules.domain, rules.domain_reach) is not None:
        return True
    return phrase in rules.wide and _domain(text, start, limit, rules.wide_domain, rules.domain_reach) is not None


def _bounded(text: str, phrase: str, start: int, limit: int, rules: ReadingRules) -> bool:
    """Whether the opening extreme that ends at `start` is followed by an infinitive within the
    reach: it names a bound on what is done ("Maximum number of frames to sample")."""
    return phrase in rules.bounding and _domain(text, start, limit, rules.bound, rules.domain_reach) is not None


def _domain(text: str, start: int, limit: int, domains: re.Pattern[str], reach: int) -> re.Match[str] | None:
    """The domain ("over ranks") that follows within `reach` words, so a superlative or a total
    reduces, or None. A hyphenated word is one word: "the largest number of kept log-probs of
    any batch"."""
    domain = domains.search(text, start, limit)
    return domain if domain is not None and len(_COMPOUND_WORD.findall(text, start, domain.start())) <= reach else None


def _names_combined(text: str, entry: PhraseEntry, start: int, limit: int, vocabulary: Vocabulary, rules: ReadingRules) -> bool:
    """Whether the total ending at `start` names a loss made of several terms ("the total KL
    loss"): a head follows within the reach, and no domain after it makes the total a sum over
    samples or steps ("the total loss over the epoch") before another phrase of the same facet
    takes that domain ("the total loss averaged over tokens" is a mean)."""
    head_end = _combined_head(text, start, limit, rules)
    if head_end is None:
        return False
    domain = _domain(text, head_end, limit, rules.combined_domain, rules.combined_reach)
    if domain is None:
        return True
    before = (vocabulary.entry_of(m) for m in vocabulary.phrases(text, head_end, domain.start()))
    return any(other.facet == entry.facet and other.value for other in before)


def _combined_head(text: str, start: int, limit: int, rules: ReadingRules) -> int | None:
    """Where the loss a total names ends, when one of the heads follows within the reach with
    only qualifying words before it ("TPO", "per-token"), or None."""
    for position, word in enumerate(_COMPOUND_WORD.finditer(text, start, limit)):
        lower = word.group().strip("'").lower()  # "the 'total loss' key": a quote ends no word
        if lower in rules.combined_heads:
            return word.end()
        if lower in rules.combined_breaks or position >= rules.combined_reach:
            return None
    return None
