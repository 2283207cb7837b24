"""Names with spaces are found where one regular expression of all of them finds them."""

import re
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from metriclint.base import spaced
from metriclint.base.spaced import SpacedNames

_WORD = st.sampled_from(["lm", "loss", "vs", "samples", "l", "m", "a/b", "é", "x_1", "", ",", "(", ")", "/"])
_NAME = st.lists(_WORD, min_size=2, max_size=4).map(" ".join).filter(lambda n: n.strip() == n and "  " not in n)
_TEXT = st.lists(st.one_of(_WORD, st.sampled_from([" ", "  ", "\n", ".", "lm loss"])), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_NAME, max_size=8), _TEXT)
def test_names_are_found_as_one_alternation_finds_them(names: list[str], text: str) -> None:
    assert list(SpacedNames(names).finditer(text)) == _alternation(names, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(_NAME, max_size=8), _TEXT)
def test_names_are_found_so_without_the_screen_of_first_words(names: list[str], text: str) -> None:
    """Beyond `_SCREENED` first words a text is not screened for them: the same matches."""
    with patch.object(spaced, "_SCREENED", 0):
        assert list(SpacedNames(names).finditer(text)) == _alternation(names, text)


def _alternation(names: list[str], text: str) -> list[tuple[int, int]]:
    """What one regular expression of all the names written with spaces finds."""
    written = sorted({n for n in names if " " in n}, key=len, reverse=True)
    if not written:
        return []
    pattern = re.compile(r"(?<![\w/])(?:" + "|".join(map(re.escape, written)) + r")(?![\w/])")
    return [m.span() for m in pattern.finditer(text)]


def test_a_name_is_found_only_as_a_whole() -> None:
    found = SpacedNames(["lm loss", "lm loss vs samples", "throughput"])
    text = "(lm loss vs samples), lm loss/x, xlm loss, lm loss."
    assert [text[a:b] for a, b in found.finditer(text)] == ["lm loss vs samples", "lm loss"]


def test_a_text_that_ends_inside_a_longer_name_holds_the_shorter_one() -> None:
    found = SpacedNames(["lm loss", "lm loss vs samples"])
    text = "see lm loss"
    assert [text[a:b] for a, b in found.finditer(text)] == ["lm loss"]
