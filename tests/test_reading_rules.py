"""The rules for reading a phrase in its noun phrase and sentence carry examples; each is a test."""

from __future__ import annotations

import pytest
from test_vocabulary import VOCABULARY

from metriclint.knowledge import reading_rules
from metriclint.language.phrases import read, sentences

CASES = [(name, example) for name in reading_rules.FILES for example in reading_rules.examples(name)]


@pytest.mark.parametrize(("name", "example"), CASES, ids=[f"{n}/line{e.line}" for n, e in CASES])
def test_reading_example(name: str, example) -> None:  # type: ignore[no-untyped-def]
    if name == "sentences.yaml":
        got = [example.text[start:end] for start, end in sentences(example.text)]
    else:
        got = [("not " if r.negated else "") + r.value for r in read(example.text, VOCABULARY)]
    assert got == list(example.claims)


def test_every_file_has_examples() -> None:
    for name in reading_rules.FILES:
        assert len(reading_rules.examples(name)) >= 2, name


@pytest.mark.parametrize("name", ["selection.yaml", "combined.yaml", "heads.yaml", "conditions.yaml", "wholes.yaml"])
def test_rules_that_take_readings_away_show_both_sides(name: str) -> None:
    """A rule that silences a phrase shows where it does and where the phrase still counts."""
    examples = reading_rules.examples(name)
    assert any(e.claims for e in examples) and any(not e.claims for e in examples)


def test_reductions_over_ranks_name_built_in_values() -> None:
    """`after` and `states` are `facet=value` texts: each must be a value the vocabulary has,
    or the rule would never fire, or state a value no check knows."""
    rules = reading_rules.builtin()
    pairs = rules.over_ranks_after | set(rules.over_ranks_states)
    assert pairs
    for facet, value in pairs:
        assert facet in VOCABULARY.facets and value in VOCABULARY.facets[facet].values, (facet, value)
