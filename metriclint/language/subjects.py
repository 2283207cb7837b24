"""Whether a sentence of a text about one value speaks for that value.

A docstring entry, a trailing comment, a tooltip or a docs cell documents one value, but a
sentence in it may be about another noun: in `loss: Loss used for the backward pass. Gradients
are summed over micro-batches.` the gradients are summed, not the loss. The subject of a
sentence that opens plainly (a short noun phrase, then a finite verb) decides: elided, a word
that refers back ("It", "This value"), the value's own name or head noun ("The norm" for
`grad_norm`) speak for it; another noun phrase does not. The words are data
(`rules/subjects.yaml`, with examples the tests run).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from metriclint.base.builtin import word_lists

# A plain subject is short: a longer opening without a verb is a phrase this reading does not
# judge (and then the sentence speaks for the value, as it did before subjects were read).
MAX_SUBJECT_WORDS = 5
_WORD = re.compile(r"[A-Za-z][\w'-]*")
_NAME_PART = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


@dataclass(frozen=True, slots=True)
class SubjectWords:
    verbs: frozenset[str]
    not_in_subject: frozenset[str]
    refers_to_value: frozenset[str]
    possessive: frozenset[str]
    determiners: frozenset[str]


@lru_cache(maxsize=1)
def subject_words() -> SubjectWords:
    lists = word_lists("subjects.yaml")
    return SubjectWords(*(frozenset(lists[key]) for key in ("verbs", "not_in_subject", "refers_to_value", "possessive", "determiners")))


def speaks_for(sentence: str, names: Iterable[str], words: SubjectWords | None = None) -> bool:
    """Whether `sentence`, in a text documenting the value called `names`, is about that value."""
    words = words or subject_words()
    subject = opening_subject(sentence, words)
    if not subject:
        return True  # elided ("Computed before clipping."), or an opening not judged
    core = _without_determiners(subject, words) or subject
    if " ".join(core) in words.refers_to_value or subject[0] in words.possessive:
        return True
    head = _singular(subject[-1])
    return any(head == _singular(_name_words(name)[-1]) or subject == [name.lower()] for name in names if _name_words(name))


def opening_subject(sentence: str, words: SubjectWords) -> list[str]:
    """The lower-cased words before the sentence's first finite verb, when they form a plain
    noun phrase; [] when the subject is elided or the opening is not plain."""
    found: list[str] = []
    for match in _WORD.finditer(sentence):
        word = match.group().lower()
        if word in words.verbs:
            return found
        if word in words.not_in_subject or len(found) == MAX_SUBJECT_WORDS:
            return []
        found.append(word)
    return []


def _without_determiners(subject: list[str], words: SubjectWords) -> list[str]:
    """ "this value" -> ["value"]; "both quantities" keeps "both": it speaks of two things."""
    start = 0
    while start < len(subject) and subject[start] in words.determiners:
        start += 1
    return subject[start:]


def _name_words(name: str) -> list[str]:
    """`grad_norm`, `gradNorm`, `train/grad-norm` -> [grad, norm]."""
    return [part.lower() for part in _NAME_PART.findall(name.rsplit("/", 1)[-1])]


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
