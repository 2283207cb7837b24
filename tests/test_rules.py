"""Every rule carries good and bad examples (tiny projects); each one is a test.

A bad example's findings are pinned whole, message and all, in tests/golden/rules/, with the
text `metriclint fix` leaves where the rule has a fix, as Fixit pins its INVALID cases' messages
and replacements. `python -m pytest --update-golden` rewrites them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Golden, finding_lines, invoke, write_project

from metriclint.checks import RULES, Example

CASES = [(rule.code, kind, i, ex) for rule in RULES for kind in ("good", "bad") for i, ex in enumerate(getattr(rule, kind))]


@pytest.mark.parametrize(("code", "kind", "index", "example"), CASES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_rule_example(code: str, kind: str, index: int, example: Example, in_tmp: Path) -> None:
    write_project(in_tmp, example.files, example.registry)
    got = [line for line in finding_lines(invoke(*example.command)) if line.startswith(code)]
    assert got == list(example.expect)
    assert (kind == "bad") == bool(example.expect)


BAD = [(code, index, example) for code, kind, index, example in CASES if kind == "bad"]


@pytest.mark.parametrize(("code", "index", "example"), BAD, ids=[f"{c}-bad-{i}" for c, i, _ in BAD])
def test_rule_example_messages_and_fixes_match_golden(code: str, index: int, example: Example, in_tmp: Path, golden: Golden) -> None:
    write_project(in_tmp, example.files, example.registry)
    before = _contents(in_tmp)
    reported = [line for line in invoke(*example.command).output.splitlines() if line.split(": ", 1)[-1].startswith(code)]
    invoke("fix", ".")
    fixed = [f"--- {name} after `metriclint fix`\n{text}" for name, text in _contents(in_tmp).items() if before.get(name) != text]
    golden(f"rules/{code}-bad-{index}.txt", "\n".join(reported) + "\n" + "".join(fixed))


def _contents(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_rule_has_good_and_bad_examples() -> None:
    for rule in RULES:
        assert rule.good and rule.bad, rule.code
        assert rule.code.startswith("ML") and rule.why and rule.fix
