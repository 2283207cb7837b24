"""Every rule carries good and bad examples (tiny projects); each one is a test."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project

from metriclint.checks import RULES, Example

CASES = [(rule.code, kind, i, ex) for rule in RULES for kind in ("good", "bad") for i, ex in enumerate(getattr(rule, kind))]


@pytest.mark.parametrize(("code", "kind", "index", "example"), CASES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_rule_example(code: str, kind: str, index: int, example: Example, in_tmp: Path) -> None:
    write_project(in_tmp, example.files, example.registry)
    got = [line for line in finding_lines(invoke("check", ".")) if line.startswith(code)]
    assert got == list(example.expect)
    assert (kind == "bad") == bool(example.expect)


def test_every_rule_has_good_and_bad_examples() -> None:
    for rule in RULES:
        assert rule.good and rule.bad, rule.code
        assert rule.code.startswith("ML") and rule.why and rule.fix
