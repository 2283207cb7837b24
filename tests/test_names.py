"""What a name states: rules/names.yaml carries examples (name -> facet values); each one is a test."""

from __future__ import annotations

import pytest
import yaml

from metriclint.base.builtin import rules_dir
from metriclint.knowledge.names import stated

EXAMPLES = yaml.safe_load((rules_dir() / "names.yaml").read_text(encoding="utf-8"))["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_name_example(example: dict[str, object]) -> None:
    assert sorted(f"{s.part.facet}={s.part.value}" for s in stated(str(example["name"]))) == sorted(map(str, example["states"]))  # type: ignore[call-overload]


def test_the_examples_show_both_sides() -> None:
    assert any(e["states"] for e in EXAMPLES) and any(not e["states"] for e in EXAMPLES)
