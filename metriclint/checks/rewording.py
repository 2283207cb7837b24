"""What a contradicting phrase is rewritten to, decided where the finding is made.

The new wording is the canonical phrase of the right value: the first phrase the vocabulary
lists for it (`rules/facets/*.yaml`). A two-valued facet lists its values' phrases side by
side, so there the phrase at the same position is the counterpart: "pre-clip" becomes
"post-clip", and "the pre-clip norm" stays English. A phrase is rewritten only when it is, word for word, a
phrase of the value it was read as, and its text states no other value: "not the post-clip
one" carries a negation cue, and swapping one half of "the sum, not the mean" would make the
text say the registry's value twice and mean nothing. Those are left to a human.
"""

from __future__ import annotations

from metriclint.knowledge.vocabulary import Vocabulary
from metriclint.model import Claim, Fix


def fix_for(claim: Claim, statement: list[Claim], value: str, vocabulary: Vocabulary) -> Fix:
    """The rewrite of `claim`'s phrase to `value`, or why there is none. `statement` holds
    every claim its text makes about the same metric and facet."""
    facet = vocabulary.facets.get(claim.facet)
    phrases = facet.values.get(value, ()) if facet is not None else ()
    entry = vocabulary.lookup(claim.phrase)
    if not phrases:
        return Fix(claim.span, claim.phrase, reason=f"the vocabulary has no wording for {claim.facet}={value}")
    if claim.negated or entry is None or (entry.facet, entry.value) != (claim.facet, claim.value):
        return Fix(claim.span, claim.phrase, reason="negated or coordinated phrasing; reword it by hand")
    if any(other.negated or other.value != claim.value for other in statement):
        return Fix(claim.span, claim.phrase, reason=f"the text states several values of {claim.facet}; reword it by hand")
    position = facet.values[entry.value].index(entry.phrase)  # type: ignore[union-attr]
    paired = len(facet.values) == 2 and position < len(phrases)  # type: ignore[union-attr]
    wording = phrases[position] if paired else phrases[0]
    return Fix(claim.span, claim.phrase, styled(wording, claim.phrase))


def styled(wording: str, original: str) -> str:
    """`wording` in the capitalisation of `original`: sentence-initial capital or all capitals.
    A wording with capitals of its own ("GB") is exact and stays as written."""
    if wording != wording.lower() or not original[:1].isupper():
        return wording
    if len(original) > 1 and original.isupper():
        return wording.upper()
    return wording[:1].upper() + wording[1:]
