"""The keys a key expression may be, built from strings the module knows (sources/python/strings.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project

from metriclint.evidence.built_keys import read_back
from metriclint.model import KeyUse, Span
from metriclint.sources import python

PRELUDE = 'import wandb\nNAMES = ["actor", "critic"]\nSTATS = {"loss": 0, "kl": 0}\nPREFIX = "train/"\n\n\ndef f(x, name, items):\n'


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('    wandb.log({PREFIX + "loss": x})', ["train/loss"]),
        ('    for role in NAMES:\n        wandb.log({f"perf/{role}_time": x})', ["perf/actor_time", "perf/critic_time"]),
        ('    for k, v in STATS.items():\n        wandb.log({f"eval/{k}": v})', ["eval/loss", "eval/kl"]),
        ('    wandb.log({f"rollout/{k}_mean": v for k, v in STATS.items()})', ["rollout/loss_mean", "rollout/kl_mean"]),
        ('    wandb.log({"perf/%s_tflops" % "fwd": x})', ["perf/fwd_tflops"]),
        ('    wandb.log({"perf/{}_tflops".format(name): x})', ["perf/{name}_tflops"]),
        ('    key = "train/" + "entropy"\n    wandb.log({key: x})', ["train/entropy"]),
        (
            '    p = ""\n    if x:\n        p = "ref_"\n    wandb.log({f"train/{p}log_probs": x})',
            ["train/log_probs", "train/ref_log_probs"],
        ),
        # a name first bound in a branch holds that string where it is bound at all
        ('    if x:\n        key = f"train/{name}"\n        wandb.log({f"{key}/mean": x})', ["train/{name}/mean"]),
        (
            '    for role in NAMES:\n        p = f"perf/{role}"\n        wandb.log({p + "_time": x})',
            ["perf/actor_time", "perf/critic_time"],
        ),
        # ... not a parameter's, nor one bound before to a value not known: either may be logged
        ('    if x:\n        name = "train/loss"\n    wandb.log({f"{name}/mean": x})', ["{name}/mean"]),
        ('    head = items.pop()\n    if x:\n        head = "train"\n    wandb.log({f"{head}/loss": x})', ["{head}/loss"]),
        ('    global HEAD\n    if x:\n        HEAD = "train"\n    wandb.log({f"{HEAD}/loss": x})', ["{HEAD}/loss"]),
        # a conditional between two strings is either; with an unknown side, a placeholder
        ('    head = "eval_" if x else ""\n    wandb.log({f"{head}loss": x})', ["eval_loss", "loss"]),
        ('    head = "eval_" if x else name\n    wandb.log({f"{head}loss": x})', ["{head}loss"]),
        ('    tag = "" if name == "actor" else f"{name}-"\n    wandb.log({f"train/{tag}loss": x})', ["train/loss", "train/{tag}loss"]),
        # ... a side with a placeholder for a name the test does not read is either too
        ('    head = f"{name}/" if x else ""\n    wandb.log({f"eval/{head}score": x})', ["eval/{name}/score", "eval/score"]),
        # a loop over whole numbers written out formats each
        ('    for k in (1, 2, 4):\n        wandb.log({f"eval/pass@{k}": x})', ["eval/pass@1", "eval/pass@2", "eval/pass@4"]),
        ('    for k in (1, 2.5):\n        wandb.log({f"eval/pass@{k}": x})', ["eval/pass@{k}"]),
        # a nested function's key names its parameter: as the enclosing function calls it
        (
            '    stats = {}\n\n    def add(v, tag=""):\n        stats[f"{tag}rate"] = v\n\n    add(x)\n    add(x, tag="kept_")\n    wandb.log(stats)',
            ["rate", "kept_rate"],
        ),
        (
            '    stats = {}\n\n    def add(v, tag=""):\n        stats[f"{tag}rate"] = v\n\n    add(x)\n    add(x, tag=name)\n    wandb.log(stats)',
            ["{tag}rate"],
        ),
        # a list of (key, value, step) records made by a comprehension, as DeepSpeed's monitor takes
        ('    self.monitor.write_events([(f"eig/{n}_block", x, 0) for n in NAMES])', ["eig/actor_block", "eig/critic_block"]),
        # a loop over pairs written out binds each name to its column
        (
            '    for raw, key in (("num_reqs", "reqs"), ("num_hits", "hits")):\n        wandb.log({f"engine/{key}": items[raw]})',
            ["engine/reqs", "engine/hits"],
        ),
        # the loop variable of a comprehension is not known after it
        ('    keys = [k for k in NAMES]\n    wandb.log({f"perf/{k}_time": x})', ["perf/{k}_time"]),
        # an unknown part is a placeholder; a key that is only placeholders after its section is none
        ('    wandb.log({"train/" + name: x})', []),
        ('    for k in items:\n        wandb.log({f"train/{k}": x})', []),
        ('    wandb.log({"perf/%d_steps" % x: x})', []),
    ],
)
def test_built_keys(body: str, expected: list[str]) -> None:
    found = python.extract("t.py", (PRELUDE + body + "\n").encode()).keys
    assert [k.key for k in found] == expected


def test_a_call_passes_strings_for_the_callee_key_template() -> None:
    code = 'def log_time(t, phase, s):\n    t.log({f"perf/{phase}_time": s})\n\n\ndef g(t):\n    log_time(t, "rollout", 1.0)\n'
    extraction = python.extract("t.py", code.encode())
    (flow,) = [f for f in extraction.functions if f.templates]
    assert flow.templates == ("perf/{phase}_time",)
    assert [c.texts for c in extraction.calls if c.callee == "t.log_time"] == [((1, ("rollout",)),)]


def test_a_key_read_back_counts_only_where_a_logged_template_with_a_fixed_section_covers_it() -> None:
    span = Span("t.py", 1, 1, 1, 2)
    logged = [KeyUse(key, span) for key in ("perf/{name}_time", "rollout/{key}", "{section}/{key}", "eval/accuracy")]
    reads = [
        KeyUse(key, span) for key in ("perf/log_probs_time", "perf/log_probs_budget", "rollout/entropy", "train/entropy", "eval/accuracy")
    ]
    assert [use.key for use in read_back(reads, logged)] == ["perf/log_probs_time", "rollout/entropy"]


def test_a_key_read_back_keeps_its_entry_alive_but_is_no_unregistered_metric(in_tmp: Path) -> None:
    """The code shows the series logged only through its template: ML005 keeps quiet about its
    registry entry, and without one ML004 does not ask for it (no value is seen where it is
    read)."""
    code = (
        "def perf(tracker, totals):\n"
        '    stats = {f"perf/{name}_time": s for name, s in totals.items()}\n'
        '    if "perf/log_probs_time" in stats and "perf/ref_time" in stats:\n'
        "        tracker.log(stats)\n"
    )
    write_project(in_tmp, {"perf.py": code}, "version: 1\nmetrics:\n  perf/log_probs_time: {}\n")
    assert finding_lines(invoke("check", ".", "--select", "ML004,ML005")) == []


ATTRIBUTES = """\
import wandb


class Rates:
    KIND = "device"

    def __init__(self, separator: str = "/", scope=None):
        self.separator = separator
        self.scope = scope

    def report(self, x):
        wandb.log({f"{self.KIND}{self.separator}mfu": x, f"{self.scope}/flops": x})
"""


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (ATTRIBUTES, ["device/mfu", "{scope}/flops"]),  # a parameter with no string default is not known
        # assigned something else elsewhere in the class: not known
        (
            ATTRIBUTES.replace("self.scope = scope", "self.scope = scope\n        self.separator = pick()"),
            ["device{separator}mfu", "{scope}/flops"],
        ),
        # assigned as part of a tuple elsewhere: what it holds then is not known either
        (
            ATTRIBUTES.replace("self.scope = scope", "self.scope = scope\n        self.separator, self.width = pick()"),
            ["device{separator}mfu", "{scope}/flops"],
        ),
    ],
    ids=["stored", "reassigned", "unpacked"],
)
def test_a_key_built_from_the_classs_own_attribute(source: str, expected: list[str]) -> None:
    assert [use.key for use in python.extract("t.py", source.encode()).keys] == expected
