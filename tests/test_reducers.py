"""A dict of metric values followed into a project helper that reduces every value the same way
(sources/python/reducers.py, evidence/code_claims.py `Project.handed`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import code_claims, write_project

CALLER = """\
import wandb
from pool import publish


def report(latencies):
    summary = {}
    summary["serve/latency_max"] = latencies.max().item()
    publish(summary)
    summary["serve/late_max"] = latencies.max().item()
    wandb.log(summary)
"""

POOL = """\
import numpy as np
import torch
import wandb
from transport import gather_summaries


def combine(per_rank, {divisor}):
    combined = {{}}
    keys = per_rank[0].keys()
    for key in {loop}:
        values = [one[key] for one in per_rank]
{body}
    return combined


def publish(summary):
    everyone = gather_summaries(summary)
    wandb.log(combine(everyone, len(everyone)))
"""


def _reductions(project: Path) -> dict[str, set[tuple[str, str]]]:
    """Each metric's reduction facts, as (value, origin)."""
    code = code_claims(project)
    found: dict[str, set[tuple[str, str]]] = {}
    for claim in code:
        if claim.fact.facet == "reduction":
            found.setdefault(claim.metric, set()).add((claim.fact.value, claim.fact.origin))
    return found


MEAN = {("mean", "publish")}
MAX = {("max", "latencies.max()")}


@pytest.mark.parametrize(
    ("divisor", "loop", "body", "expected"),
    [
        ("world_size", "per_rank[0]", "        combined[key] = sum(values) / world_size", MEAN),
        ("world_size", "keys", "        combined[key] = sum(values) / len(values)", MEAN),
        ("world_size", "per_rank[0].keys()", "        combined[key] = np.mean(values)", MEAN),
        ("world_size", "per_rank[0]", "        combined[key] = torch.stack(values).mean()", MEAN),
        (
            "world_size",
            "per_rank[0]",
            "        if isinstance(values[0], tuple):\n            combined[key] = 0.0\n        else:\n            combined[key] = np.mean(values)",
            MEAN,
        ),
        # a divisor that need not count the ranks: no mean, and the max is gone too
        ("scale", "per_rank[0]", "        combined[key] = sum(values) / scale", None),
        # the key picks the reduction: unknown
        (
            "world_size",
            "per_rank[0]",
            '        if key.endswith("_max"):\n            combined[key] = max(values)\n        else:\n            combined[key] = np.mean(values)',
            None,
        ),
        (
            "world_size",
            "per_rank[0]",
            '        how = rules.get(key, "mean")\n        if how == "max":\n            combined[key] = max(values)\n        else:\n            combined[key] = np.mean(values)',
            None,
        ),
        # a reduction of the ranks' maxima that is not a mean: unknown
        ("world_size", "per_rank[0]", "        combined[key] = np.mean(np.max(values))", None),
        # not a loop over the first rank's keys: the helper is no reducer, the max stays
        ("world_size", "per_rank", "        combined[key] = np.mean(values)", MAX),
    ],
)
def test_a_value_handed_to_a_per_key_reducer_takes_its_reduction(
    in_tmp: Path, divisor: str, loop: str, body: str, expected: set[tuple[str, str]] | None
) -> None:
    write_project(in_tmp, {"caller.py": CALLER, "pool.py": POOL.format(divisor=divisor, loop=loop, body=body)})
    found = _reductions(in_tmp)
    assert found.get("serve/latency_max") == expected
    assert found.get("serve/late_max") == MAX  # put in the dict after it was handed on


def test_a_dict_handed_to_a_function_that_only_logs_it_keeps_its_values(in_tmp: Path) -> None:
    pool = "import wandb\n\n\ndef publish(summary):\n    wandb.log(summary)\n"
    write_project(in_tmp, {"caller.py": CALLER, "pool.py": pool})
    assert _reductions(in_tmp)["serve/latency_max"] == MAX


def test_a_dict_handed_by_keyword_reaches_the_reducer(in_tmp: Path) -> None:
    caller = CALLER.replace("publish(summary)", "publish(summary=summary)")
    pool = POOL.format(divisor="world_size", loop="per_rank[0]", body="        combined[key] = sum(values) / world_size")
    write_project(in_tmp, {"caller.py": caller, "pool.py": pool})
    assert _reductions(in_tmp)["serve/latency_max"] == MEAN


@pytest.mark.parametrize(
    ("divisor", "expected"),
    [("group.size", MEAN), ("world_size", MEAN), ("len(everyone)", MEAN), ("len(summary)", MAX), ("group.rank", MAX)],
)
def test_a_dict_comprehension_over_the_gathered_dicts_is_a_mean_over_the_ranks(
    in_tmp: Path, divisor: str, expected: set[tuple[str, str]]
) -> None:
    pool = (
        "import wandb\nfrom transport import gather_summaries\n\n\n"
        "def publish(summary, group=None, world_size=1):\n"
        "    everyone = gather_summaries(summary)\n"
        f"    wandb.log({{key: sum([one[key] for one in everyone]) / {divisor} for key in summary}})\n"
    )
    write_project(in_tmp, {"caller.py": CALLER, "pool.py": pool})
    assert _reductions(in_tmp)["serve/latency_max"] == expected


@pytest.mark.parametrize(
    ("opening", "depth"),
    [
        ("    with torch.no_grad():\n", 1),
        ("    try:\n        pass\n    except ValueError:\n", 1),
        ("    match per_rank:\n        case _:\n", 2),
    ],
)
def test_a_loop_inside_a_with_an_except_or_a_match_is_read(in_tmp: Path, opening: str, depth: int) -> None:
    """Only the function's statements are walked for the loop: those of every kind of block."""
    loop = "for key in per_rank[0]:\n    values = [one[key] for one in per_rank]\n    combined[key] = sum(values) / world_size\n"
    inner = "".join("    " * (depth + 1) + line + "\n" for line in loop.splitlines())
    pool = POOL.split("    keys = ")[0] + opening + inner + "    return combined\n\n\n" + POOL.split("    return combined\n\n\n")[1]
    write_project(in_tmp, {"caller.py": CALLER, "pool.py": pool.format(divisor="world_size")})
    assert _reductions(in_tmp)["serve/latency_max"] == MEAN


TABLED = """\
import wandb
from transport import gather_summaries


def combine(per_rank, world_size, rules{default}):
    combined = {{}}
    for key in per_rank[0]:
        values = [one[key] for one in per_rank]
        how = rules.get(key, "mean")
        if how == "mean":
            combined[key] = sum(values) / world_size
        else:
{other}
    return combined


def publish(summary, rules=None):
    everyone = gather_summaries(summary)
    wandb.log(combine(everyone, len(everyone), rules))
"""


MAX_OTHERWISE = "            combined[key] = max(values)"


@pytest.mark.parametrize(
    ("default", "passed", "expected", "other"),
    [
        ("=None", '{"serve/latency_max": "max"}', {("max", "publish")}, MAX_OTHERWISE),
        # two reductions for one looked-up value: not known
        (
            "=None",
            '{"serve/latency_max": "max"}',
            None,
            "            if world_size > 1:\n                combined[key] = max(values)\n            else:\n                combined[key] = min(values)",
        ),
        ("=None", "TABLE", {("max", "publish")}, MAX_OTHERWISE),
        ("", "rules=TABLE", {("max", "publish")}, MAX_OTHERWISE),
        # the table names other keys, or none is passed: the lookup's default
        ("=None", '{"serve/other_max": "max"}', MEAN, MAX_OTHERWISE),
        ("=None", "None", MEAN, MAX_OTHERWISE),
        # a table not known, passed through *args, or a default table the function keeps: not known
        ("=None", "make_rules()", None, MAX_OTHERWISE),
        ("=None", "*extra", None, MAX_OTHERWISE),
        ("=TABLE", "TABLE", None, MAX_OTHERWISE),
    ],
)
def test_a_helper_reduces_each_key_as_the_table_its_callers_pass_says(
    in_tmp: Path, default: str, passed: str, expected: set[tuple[str, str]] | None, other: str
) -> None:
    caller = CALLER.replace("publish(summary)", f"publish(summary, {passed})").replace(
        "from pool import publish", 'from pool import publish\n\nTABLE = {"serve/latency_max": "max"}\nextra = ()'
    )
    write_project(in_tmp, {"caller.py": caller, "pool.py": TABLED.format(default=default, other=other)})
    found = _reductions(in_tmp)
    assert found.get("serve/latency_max") == expected
    assert found.get("serve/late_max") == MAX
