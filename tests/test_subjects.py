"""Which sentences of a text about one value speak for it (rules/subjects.yaml)."""

from __future__ import annotations

import pytest
import yaml

from metriclint.base.builtin import rules_dir
from metriclint.language.subjects import speaks_for

EXAMPLES = yaml.safe_load((rules_dir() / "subjects.yaml").read_text(encoding="utf-8"))["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["text"] for e in EXAMPLES])
def test_rule_file_example(example: dict[str, object]) -> None:
    assert speaks_for(str(example["text"]), [str(example["value"])]) is example["speaks"]


def test_the_examples_show_both_sides() -> None:
    assert {e["speaks"] for e in EXAMPLES} == {True, False}
