"""What a name states: rules/names.yaml carries examples (name -> facet values); each one is a test."""

from __future__ import annotations

import pytest
import yaml

from metriclint.base.builtin import rules_dir
from metriclint.knowledge.names import custom_parts, stated
from metriclint.knowledge.vocabulary import Facet

EXAMPLES = yaml.safe_load((rules_dir() / "names.yaml").read_text(encoding="utf-8"))["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_name_example(example: dict[str, object]) -> None:
    assert sorted(f"{s.part.facet}={s.part.value}" for s in stated(str(example["name"]))) == sorted(map(str, example["states"]))  # type: ignore[call-overload]


def test_the_examples_show_both_sides() -> None:
    assert any(e["states"] for e in EXAMPLES) and any(not e["states"] for e in EXAMPLES)


def test_a_registry_facet_of_its_own_is_read_from_names_but_not_a_built_in_one() -> None:
    facets = {
        "objective": Facet("objective", "", {"distillation": ("distillation loss", "distill"), "preference": ("dpo",)}),
        "unit": Facet("unit", "", {"seconds": ("wallclock",)}),
    }
    extra = custom_parts(facets)
    assert [f"{s.part.facet}={s.part.value}" for s in stated("train/distill_loss", extra)] == ["objective=distillation"]
    assert stated("train/dpo_loss", extra) == []  # a short word is as often part of another name
    assert stated("step_wallclock", extra) == []  # built-in facets keep names.yaml's curated parts
