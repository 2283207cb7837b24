"""Every facet carries examples (text -> claims); each one is a test."""

from __future__ import annotations

import re
import sys

import pytest

from metriclint.knowledge.vocabulary import Facet, Vocabulary, load_builtin, merge, phrase_conflicts
from metriclint.language.phrases import read

FACETS, CUES, REACH = load_builtin()
VOCABULARY = Vocabulary(FACETS, CUES, REACH)
EXAMPLES = [(facet.name, example) for facet in FACETS.values() for example in facet.examples]


def test_required_facets_are_built_in() -> None:
    assert {"clipping", "reduction", "granularity", "unit", "scope", "norm"} <= set(FACETS)
    assert set(FACETS["clipping"].values) == {"before", "after"}
    assert {"seconds", "milliseconds", "bytes", "GB", "GiB", "MB", "MiB", "tokens/s"} <= set(FACETS["unit"].values)


def test_the_ml_training_facets_are_built_in() -> None:
    """Names and values are public contract: users write them in registries."""
    assert set(FACETS["policy"].values) == {"current", "old", "reference", "rollout", "teacher"}
    assert set(FACETS["quantity"].values) == {"entropy", "nll", "log-prob", "perplexity", "negative-entropy"}
    assert set(FACETS["timing"].values) == {"current-step", "next-step"}
    assert set(FACETS["estimator"].values) == {"k1", "k2", "k3", "negative-k1"}
    units = {"tokens", "samples", "count", "fraction", "percent", "samples/s", "TFLOP/s", "GFLOP/s", "microseconds"}
    assert units <= set(FACETS["unit"].values)
    assert {"per-rollout", "per-group", "per-batch"} <= set(FACETS["granularity"].values)
    assert {"std", "last"} <= set(FACETS["reduction"].values)
    assert {"per-node", "per-engine"} <= set(FACETS["scope"].values)


def test_every_facet_has_examples_of_both_kinds() -> None:
    for facet in FACETS.values():
        assert any(e.claims for e in facet.examples), facet.name
        assert any(not e.claims for e in facet.examples), facet.name


@pytest.mark.parametrize(("facet", "example"), EXAMPLES, ids=[f"{f}/line{e.line}" for f, e in EXAMPLES])
def test_facet_example(facet: str, example) -> None:  # type: ignore[no-untyped-def]
    got = [("not " if r.negated else "") + r.value for r in read(example.text, VOCABULARY) if r.facet == facet]
    assert got == list(example.claims)


def test_builtin_phrases_do_not_conflict() -> None:
    assert phrase_conflicts(FACETS) == []


def test_conflicting_registry_phrase_is_found() -> None:
    extra = {"clipping": Facet("clipping", "", {"before": ("post-clip",)})}
    assert phrase_conflicts(merge(FACETS, extra)) == [
        ("post-clip", "phrase 'post-clip' is given to both clipping=before and clipping=after")
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Norm in GB.", ["GB"]),
        ("Norm in Gb.", []),  # a capital makes a phrase exact-case
        ("NORM AFTER CLIPPING", ["after"]),  # lower-case phrases match any case
        ("after-clipping norm", ["after"]),
        ("after_clipping_norm is a name", []),  # inside an identifier: not prose
        ("Averaged, but not over tokens.", ["mean"]),  # the negation is in another clause
    ],
)
def test_matching_rules(text: str, expected: list[str]) -> None:
    assert [r.value for r in read(text, VOCABULARY)] == expected


def test_the_screen_lets_through_every_text_the_pattern_matches() -> None:
    """`read` skips what the screen rejects, so a phrase the screen misses is a lost claim."""
    extra = {"odd": Facet("odd", "", {"a": ("-leading dash",), "b": ("(parenthesised)", "_under score"), "c": ("Up Case",)})}
    vocabulary = Vocabulary(merge(FACETS, extra), CUES, REACH)
    texts = [
        f"{before}{variant}{after}"
        for entry in vocabulary.entries
        for variant in (entry.phrase, entry.phrase.upper(), entry.phrase.replace(" ", "_") + "s")
        for before, after in (("", ""), ("it is the ", ", here."), ("x", ""), ("", "y"))
    ]
    assert vocabulary.pattern is not None and vocabulary.screen is not None
    matched = [t for t in texts if vocabulary.pattern.search(t)]
    assert len(matched) > len(vocabulary.entries)  # the variants do match; the check below is not empty
    assert [t for t in matched if not vocabulary.screen.search(t)] == []
    assert [t for t in texts if vocabulary.screen.search(t) and not vocabulary.pattern.search(t) and t.startswith("x")] == []


def test_an_ascii_text_is_screened_as_the_screen_screens_it() -> None:
    """`may_state` screens an ASCII text lower-cased, with case: it must answer as the screen
    does, also where a phrase holds a character case-insensitive matching takes for an ASCII
    one (the long s for s), which the lower-cased text would not match."""
    odd = Vocabulary(merge(FACETS, {"odd": Facet("odd", "", {"a": ("\u017ftep total",), "b": ("Up Case", "\u00b5s")})}), CUES, REACH)
    texts = ["the step total here", "STEP TOTAL", "up case", "in \u00b5s", "in \u03bcs", "in ms", "steps", "xstep total", "nothing to see"]
    texts += [variant for entry in VOCABULARY.entries[::7] for variant in (entry.phrase.upper(), f"a {entry.phrase}s.", f"x{entry.phrase}")]
    # the separators and word boundaries Python's engine knows and RE2 spells otherwise
    texts += [f"{space}".join(entry.phrase.split()) for entry in VOCABULARY.entries if " " in entry.phrase for space in "\v\x1c\x1f\t"]
    texts += [f"{entry.phrase}_x" for entry in VOCABULARY.entries[::5]] + [f"_{entry.phrase}" for entry in VOCABULARY.entries[::5]]
    assert VOCABULARY.compiled()[2] is not None and odd.compiled()[2] is None  # both ways are tried (the ASCII screen)
    for vocabulary in (VOCABULARY, odd):
        assert vocabulary.screen is not None
        assert [vocabulary.may_state(t) for t in texts] == [vocabulary.screen.search(t) is not None for t in texts]
    assert odd.may_state("the step total here") and not VOCABULARY.may_state("nothing to see")


def test_phrases_finds_what_the_pattern_finds() -> None:
    """`phrases` skips ahead with the screen; it must find exactly what a full scan finds,
    including where the screen accepts a case the pattern refuses ("Gb" for "GB")."""
    assert VOCABULARY.pattern is not None
    texts = [example.text for _, example in EXAMPLES] + [
        "Memory in Gb, not GB; 3 gb. Norm before clipping and after-clipping norms, per token, mean per-step.",
        "xbefore clipping beforeclipping post-clip, POST-CLIP (mean)",
        "PROCESS RSS, then process RSS",  # the screen takes all of it at 0; the pattern only "RSS" at 8
    ]
    windows = [
        (text, start, end) for text in texts for start, end in ((0, len(text)), (1, len(text) - 1), (len(text) // 3, len(text) // 2))
    ]
    found = [[(m.start(), m.end(), m.lastgroup) for m in VOCABULARY.phrases(*window)] for window in windows]
    assert found == [[(m.start(), m.end(), m.lastgroup) for m in VOCABULARY.pattern.finditer(*window)] for window in windows]
    assert sum(map(len, found)) > len(texts)  # the texts do hold phrases: the comparison is not empty


def test_a_phrase_that_matches_the_empty_string_cannot_stall_reading() -> None:
    """The registry refuses such a phrase; the reading loop must still move on if one gets
    through another way (it spun for ever on one)."""
    extra = {"clipping": Facet("clipping", "", {"before": (" ",)})}
    vocabulary = Vocabulary(merge(FACETS, extra), CUES, REACH)
    assert [r.value for r in read("The norm after clipping.", vocabulary)] == ["after"]


def test_phrases_are_tried_only_where_they_can_start_and_found_as_the_whole_pattern_finds_them() -> None:
    """`phrases` tries at a place only the phrases that start with the character there (and the
    few that start with no letter or digit): it must find what the whole pattern finds, the
    first phrase of the pattern's order where several match, also where case-insensitive
    matching takes a character outside ASCII for an ASCII letter (the Kelvin sign for k)."""
    extra = {"odd": Facet("odd", "", {"a": ("-leading dash", "\u00b5s"), "b": ("(parenthesised)", "kelvin step"), "c": ("Up Case",)})}
    vocabulary = Vocabulary(merge(FACETS, extra), CUES, REACH)
    texts = [
        f"{before}{variant}{after}"
        for entry in vocabulary.entries
        for variant in (entry.phrase, entry.phrase.upper(), entry.phrase.replace(" ", "_") + "s", entry.phrase.replace("k", "\u212a"))
        for before, after in (("", ""), ("it is the ", ", here."), ("x", ""))
    ]
    texts += ["\u212aELVIN STEP in \u00b5s", "\u017fum over tokens", "-leading dash (parenthesised) Up Case up case"]

    def whole(text: str) -> list[tuple[int, int, str | None]]:
        assert vocabulary.pattern is not None and vocabulary.screen is not None
        found, start = [], 0
        while (hit := vocabulary.screen.search(text, start)) is not None:
            match = vocabulary.pattern.match(text, hit.start())
            if match is not None and match.end() > match.start():
                found.append((match.start(), match.end(), match.lastgroup))
                start = match.end()
            else:
                start = hit.start() + 1
        return found

    found = [[(m.start(), m.end(), m.lastgroup) for m in vocabulary.phrases(text, 0, len(text))] for text in texts]
    assert found == [whole(text) for text in texts] and sum(map(len, found)) > len(vocabulary.entries)


def test_the_characters_taken_for_ascii_ones_are_all_known() -> None:
    """`phrases` looks a character outside ASCII up in `_ASCII_FOLDS` to find the phrases that
    may start with it: every character that case-insensitive matching takes for an ASCII
    letter or digit must be there."""
    from metriclint.knowledge.vocabulary import _ASCII_FOLDS

    alike = re.compile("(?i)[a-z0-9]")
    assert {chr(c) for c in range(128, sys.maxunicode + 1) if alike.fullmatch(chr(c))} == _ASCII_FOLDS.keys()
    assert all(re.fullmatch(f"(?i){letter}", character) for character, letter in _ASCII_FOLDS.items())
