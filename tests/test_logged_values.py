"""Which logged values are measurements (rules/logged_values.yaml)."""

from __future__ import annotations

import ast

import pytest
import yaml

from metriclint.base.builtin import rules_dir
from metriclint.sources.python.values import is_measurement

EXAMPLES = yaml.safe_load((rules_dir() / "logged_values.yaml").read_text(encoding="utf-8"))["examples"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["value"] for e in EXAMPLES])
def test_rule_file_example(example: dict[str, object]) -> None:
    value = ast.parse(str(example["value"]), mode="eval").body
    assert is_measurement(value) is example["measurement"]


def test_the_examples_show_both_sides() -> None:
    assert {e["measurement"] for e in EXAMPLES} == {True, False}
