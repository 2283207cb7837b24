"""Names written with spaces (TensorBoard tags such as `lm loss vs samples`), found in texts.

An alternation of every name as one regular expression tries each name at each place of a
text, so its cost grows with the number of names: with 10,000 names, 13 ms a text (issue 19).
Here a place is tried only where the text's word up to the next space is the first word of
some name, and only with the lengths such names have, so the cost is the text's length times
the few lengths, however many names there are. The places a name may start (not inside a
word, a space within the longest first word's length) are found by one small expression, in
C: a loop over every character in Python was most of a warm run on Megatron-LM's 47,000
texts. The matches are the expression's: a name neither preceded nor followed by a word
character or `/`, the longest at the leftmost place, none overlapping.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterable, Iterator

_SCREENED = 32  # first words; a text is searched for each, so not for thousands


class SpacedNames:
    def __init__(self, names: Iterable[str]) -> None:
        self._names: dict[str, set[str]] = defaultdict(set)  # first word -> the names it starts
        for name in names:
            if " " in name:
                self._names[name.split(" ", 1)[0]].add(name)
        self._lengths = {head: sorted({len(n) for n in found}, reverse=True) for head, found in self._names.items()}
        longest_head = max(map(len, self._names), default=0)
        # Each place not inside a word, with the word from there up to the next space (no
        # longer than the longest first word): zero-width, so places within one word all come.
        self._places = re.compile(rf"(?<![\w/])(?=([^ ]{{1,{longest_head}}}) )") if longest_head else None
        # With few first words, a text that holds none of them before a space (most texts) is
        # passed over by a substring search each, without a step in Python per word.
        self._screen = tuple(f"{head} " for head in self._names) if len(self._names) <= _SCREENED else None

    def finditer(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end) of each name in `text`, left to right."""
        if self._places is None or (self._screen is not None and not any(map(text.__contains__, self._screen))):
            return
        position = 0
        for place in self._places.finditer(text):
            start = place.start()
            head = place.group(1)
            if start < position or head not in self._names:
                continue
            for length in self._lengths[head]:
                end = start + length
                if end > len(text):
                    continue  # a shorter name's slice would pass for this one
                if text[start:end] in self._names[head] and (end == len(text) or not _joins(text[end])):
                    yield start, end
                    position = end
                    break


def _joins(char: str) -> bool:
    """Whether `char` continues a name: a word character or `/`."""
    return char.isalnum() or char in "_/"
