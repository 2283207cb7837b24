"""Names written with spaces (TensorBoard tags such as `lm loss vs samples`), found in texts.

An alternation of every name as one regular expression tries each name at each place of a
text, so its cost grows with the number of names: with 10,000 names, 13 ms a text (issue 19).
Here a place is tried only where the text's word up to the next space is the first word of
some name, and only with the lengths such names have, so the cost is the text's length times
the few lengths, however many names there are. The matches are the expression's: a name
neither preceded nor followed by a word character or `/`, the longest at the leftmost place,
none overlapping.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Iterator


class SpacedNames:
    def __init__(self, names: Iterable[str]) -> None:
        self._names: dict[str, set[str]] = defaultdict(set)  # first word -> the names it starts
        for name in names:
            if " " in name:
                self._names[name.split(" ", 1)[0]].add(name)
        self._lengths = {head: sorted({len(n) for n in found}, reverse=True) for head, found in self._names.items()}
        self._longest_head = max(map(len, self._names), default=0)

    def finditer(self, text: str) -> Iterator[tuple[int, int]]:
        """(start, end) of each name in `text`, left to right."""
        position = 0
        while position < len(text):
            space = text.find(" ", position)
            if space < 0:
                return  # a name holds a space: none starts in the text's last word
            found = self._at(text, max(position, space - self._longest_head), space)
            if found is None:
                position = space + 1
                continue
            yield found
            position = found[1]

    def _at(self, text: str, first: int, space: int) -> tuple[int, int] | None:
        """The leftmost name starting at or after `first` whose first word ends at `space`."""
        for start in range(first, space):
            if start > 0 and _joins(text[start - 1]):
                continue  # inside a word: no name starts here
            head = text[start:space]
            if head not in self._names:
                continue
            for length in self._lengths[head]:
                end = start + length
                if text[start:end] in self._names[head] and (end == len(text) or not _joins(text[end])):
                    return start, end
        return None


def _joins(char: str) -> bool:
    """Whether `char` continues a name: a word character or `/`."""
    return char.isalnum() or char in "_/"
