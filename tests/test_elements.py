"""Values joined, filled and picked element by element (rules/code/elements.yaml): what each
element is survives, how each was reduced does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import code_claims, invoke, write_project

from metriclint.knowledge import code_knowledge as knowledge
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import ConfigError

_SOURCE = """\
import torch
from trl.trainer.utils import selective_log_softmax

PAD = 1.0


def f(logits, ids, mask, base, more, log):
    lp = selective_log_softmax(logits, ids)
{body}
    log({{"actor/value": {expression}}})
"""


def _facts(project: Path) -> list[tuple[str, str]]:
    code = code_claims(project)
    return sorted((c.fact.facet, c.fact.value) for c in code)


LOG_PROB = [("quantity", "log-prob")]


@pytest.mark.parametrize(
    ("body", "expression", "expected"),
    [
        ("    xs = []\n    for i in ids:\n        xs.append(lp)", "torch.cat(xs)", LOG_PROB),
        ("    xs = [lp]\n    xs.append(-lp)", "torch.cat(xs, dim=0)", []),  # a log-prob and an NLL: neither
        ("    xs = [lp]\n    xs.append(more(lp))", "torch.cat(xs)", []),  # an item not known
        ("    xs = []\n    xs.append(more(lp))\n    xs.append(lp)", "torch.cat(xs)", []),  # ... whatever comes after it
        ("    xs = [lp]\n    xs.extend(more)", "torch.cat(xs)", []),
        ("    xs = [lp]\n    xs.insert(0, lp)", "torch.cat(xs)", []),
        ("    xs = [lp, more]\n    xs[1] = lp", "torch.cat(xs)", []),
        ("    xs = [lp]\n    xs = more", "torch.cat(xs)", []),
        ("    xs = []\n    xs.append(lp.mean())", "torch.stack(xs)", LOG_PROB),  # a list of means is no mean
        ("    xs = []\n    xs.append(lp.mean())", "torch.stack(xs).sum()", [*LOG_PROB, ("reduction", "sum")]),
        ("    xs = []\n    xs.append(lp.mean())", "sum(xs)", [*LOG_PROB, ("reduction", "sum")]),
        ("    pass", "torch.stack((lp, lp))", LOG_PROB),
        ("    pass", "torch.stack((lp, base))", []),
        ("    pass", "torch.cat([lp, *more])", []),
        ("    pass", "torch.where(mask, lp, 0.0)", LOG_PROB),
        ("    pass", "torch.where(mask, float('-inf'), lp)", LOG_PROB),
        ("    pass", "torch.where(mask, lp, base)", []),  # two values: either
        ("    pass", "torch.where(mask, lp, other=0.0)", []),
        ("    pass", "torch.where(mask)", []),
        ("    pass", "torch.masked_fill(lp, mask, PAD)", LOG_PROB),  # a module's constant
        ("    pass", "torch.masked_fill(lp, mask, base)", []),
        ("    pass", "lp.masked_fill(mask, -1)", LOG_PROB),
        ("    pass", "lp.masked_fill(mask, value=0)", []),
        ("    pass", "lp.where(mask, 0)", LOG_PROB),
        ("    pass", "lp.to('cpu')", LOG_PROB),
        ("    pass", "self.accelerator.gather_for_metrics(lp)", [*LOG_PROB, ("scope", "global")]),
        ("    pass", "self.accelerator.gather_for_metrics(lp.mean())", [*LOG_PROB, ("scope", "global")]),
    ],
)
def test_what_each_element_is_survives_joins_fills_and_picks(
    in_tmp: Path, body: str, expression: str, expected: list[tuple[str, str]]
) -> None:
    write_project(in_tmp, {"step.py": _SOURCE.format(body=body, expression=expression)})
    assert _facts(in_tmp) == expected


def test_a_finding_shows_each_step_a_fact_passed_through(in_tmp: Path) -> None:
    body = "    xs = []\n    for i in ids:\n        xs.append(lp)\n    joined = torch.cat(xs)\n    filled = torch.masked_fill(joined, mask, PAD)"
    source = _SOURCE.format(body=body, expression="filled.mean()") + "    # actor/value: the mean entropy of the policy\n"
    write_project(in_tmp, {"step.py": source})
    result = invoke("check", ".", "--format", "json")
    assert [f["message"] for f in json.loads(result.stdout)["findings"]] == [
        'actor/value: comment says quantity=entropy ("entropy"); the value comes from selective_log_softmax (step.py:8), which'
        " returns the log-probability of the given tokens; then torch.cat (line 12) joins the tensors, each element still"
        " what it was; then torch.masked_fill (line 13) fills the masked positions with a constant, the others still what they were"
    ]


def test_a_misspelt_facet_or_picks_that_is_no_list_is_reported_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "kept_in_lists: [unit, colour]\nresults:\n  - call: a.b\n    says: x\n    facts: {}\n    keeps: [quantiy]\n    picks: 1\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as error:
        knowledge.load([path], load_builtin()[0])
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:6:13: unknown facet 'quantiy'",
        "bad.yaml:7:12: 'picks' must be a list of whole numbers",
        "bad.yaml:1:23: unknown facet 'colour'",
    ]
