"""Each value test of the live check on a run written by the writer that makes such runs
(tests/live_writers.py): a run whose values disprove the statement gives its finding, and its
silent twin, whose values agree, gives none."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pytest
from conftest import finding_lines, invoke, write_project
from live_writers import json_lines, mlflow_files, mlflow_sqlite, tensorboard, trainer_state, wandb_offline

pytest.importorskip("google_crc32c")

Writer = Callable[[Path, bool], Path]  # (folder, bad) -> the run


def _registry(key: str, **semantics: str) -> str:
    lines = "".join(f"      {facet}: {value}\n" for facet, value in semantics.items())
    return f"version: 1\nmetrics:\n  {key}:\n    description: A metric.\n    semantics:\n{lines}"


def _clip(folder: Path, bad: bool) -> Path:
    return tensorboard(folder, {"train/grad_norm": [(1, 0.5), (2, 2.5 if bad else 0.9), (3, 0.7)]})


def _fraction(folder: Path, bad: bool) -> Path:
    return trainer_state(folder, [{"step": 10, "mfu": 31.0 if bad else 0.31, "epoch": 0.1}], max_steps=10)


def _k3(folder: Path, bad: bool) -> Path:
    return wandb_offline(folder, {"actor/kl": [(1, 0.02), (2, -0.2 if bad else 0.03)]})


def _k1(folder: Path, bad: bool) -> Path:
    sign = -1 if bad else 1
    return json_lines(folder / "log.jsonl", [{"step": s, "actor/kl": sign * (0.5 + 0.1 * math.sin(s))} for s in range(40)])


def _perplexity(folder: Path, bad: bool) -> Path:
    folder.mkdir()
    return mlflow_sqlite(folder / "mlflow.db", {"val/ppl": [(1, 3.0), (2, 0.5 if bad else 2.5)]})


def _entropy(folder: Path, bad: bool) -> Path:
    return mlflow_files(folder / "mlruns", {"actor/entropy": [(1, 5.0), (2, 20.0 if bad else 6.0)]}, {"vocab_size": 1000})


def _peak(folder: Path, bad: bool) -> Path:
    values = [10.0, 12.0, 11.0 if bad else 12.5, 13.0]
    return json_lines(folder / "log.jsonl", [{"step": s, "mem/peak_gb": v} for s, v in enumerate(values)])


def _ranks(folder: Path, bad: bool) -> Path:
    tensorboard(folder / "rank0", {"train/loss": [(1, 2.0), (2, 1.5)]})
    tensorboard(folder / "rank1", {"train/loss": [(1, 2.0), (2, 1.7 if bad else 1.5)]})
    return folder


def _gib(folder: Path, bad: bool) -> Path:
    divisor = 1e9 if bad else 2**30
    sizes = [12_345_678_848, 23_456_789_504, 34_567_890_432, 45_678_901_248]
    return json_lines(folder / "log.jsonl", [{"step": s, "mem/allocated": b / divisor} for s, b in enumerate(sizes)])


def _capacity(folder: Path, bad: bool) -> Path:
    return json_lines(folder / "log.jsonl", [{"step": 1, "mem/reserved": 70.0}, {"step": 2, "mem/reserved": 85.0 if bad else 75.0}])


def _seconds(folder: Path, bad: bool) -> Path:
    values = [1500.0, 1480.0, 1510.0, 1490.0] if bad else [1.5, 1.48, 1.51, 1.49]
    return tensorboard(folder, {"perf/step_time": list(enumerate(values))}, walls=[1000.0 + 1.5 * i for i in range(4)])


def _timing(folder: Path, bad: bool) -> Path:
    """Linear warmup over 10 updates to 1e-3, then linear decay to 100: the rate logged at step s
    is the schedule at s (read after the scheduler stepped) or at s-1 (before)."""

    def rate(step: int) -> float:
        return 1e-3 * (step / 10 if step < 10 else (100 - step) / 90)

    offset = 0 if bad else 1
    state = trainer_state(folder, [{"step": s, "learning_rate": rate(s - offset), "loss": 1.0} for s in range(1, 31)], max_steps=100)
    (folder / "config.json").write_text('{"vocab_size": 100}\n', encoding="utf-8")
    (folder / "README.md").write_text(
        "### Training hyperparameters\n\n- learning_rate: 0.001\n- lr_scheduler_type: linear\n- lr_scheduler_warmup_steps: 10\n",
        encoding="utf-8",
    )
    return state


CASES: list[tuple[str, str, Writer, tuple[str, ...]]] = [
    ("clip-tensorboard", _registry("train/grad_norm", clipping="after"), _clip, ("--fact", "max_grad_norm=1.0")),
    ("fraction-trainer-state", _registry("mfu", unit="fraction"), _fraction, ()),
    ("k3-wandb", _registry("actor/kl", estimator="k3"), _k3, ()),
    ("k1-mean-jsonl", _registry("actor/kl", estimator="k1"), _k1, ()),
    ("perplexity-mlflow-sqlite", _registry("val/ppl", quantity="perplexity"), _perplexity, ()),
    ("entropy-mlflow-files", _registry("actor/entropy", quantity="entropy"), _entropy, ()),
    ("running-peak-jsonl", _registry("mem/peak_gb", reduction="max").replace("A metric.", "Peak memory since the start."), _peak, ()),
    ("ranks-tensorboard", _registry("train/loss", scope="global"), _ranks, ()),
    ("gib-exact-jsonl", _registry("mem/allocated", unit="GiB"), _gib, ()),
    ("capacity-jsonl", _registry("mem/reserved", unit="GiB", scope="per-device"), _capacity, ("--fact", "device_memory=85899345920")),
    ("seconds-tensorboard", _registry("perf/step_time", unit="seconds", granularity="per-step"), _seconds, ()),
    ("timing-trainer-state", _registry("learning_rate", timing="current-step"), _timing, ()),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "registry", "write", "args"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("bad", [True, False], ids=["finding", "silent-twin"])
def test_value_test(name: str, registry: str, write: Writer, args: tuple[str, ...], bad: bool, in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, registry)
    write(in_tmp / "run", bad)
    result = invoke("live-check", ".", "--run", "run", "--no-cache", "--ignore", "ML012,ML013", *args)
    # the running peak's registry description says "Peak memory" too: a statement of its own
    expected = ["ML011 metrics.yaml:4", "ML011 metrics.yaml:6"] if name.startswith("running-peak") else ["ML011 metrics.yaml:6"]
    assert finding_lines(result) == (expected if bad else []), result.output
    assert result.exit_code == (1 if bad else 0)


@pytest.mark.parametrize("paired", [True, False])
def test_a_perplexity_is_paired_with_the_loss_it_is_the_exponential_of(paired: bool, in_tmp: Path) -> None:
    """perplexity = exp(loss) at the same step proves which loss it is of; the twin's perplexity
    is of another loss than the one logged, and is paired with none (which disproves nothing)."""
    from metriclint import engine, settings
    from metriclint.live import check, judge

    registry = (
        "version: 1\nmetrics:\n  val/loss:\n    semantics:\n      quantity: nll\n  val/ppl:\n    semantics:\n      quantity: perplexity\n"
    )
    write_project(in_tmp, {"train.py": "x = 1\n"}, registry)
    losses = [2.0, 1.5, 1.25]
    json_lines(
        in_tmp / "run" / "log.jsonl",
        [{"step": s, "val/loss": loss, "val/ppl": math.exp(loss if paired else loss + 0.5)} for s, loss in enumerate(losses)],
    )
    analysis = engine.analyse(settings.with_speed(settings.load((".",), None, None), None, None, True))
    (read,), _, _ = check.reads(analysis, check.Runs(("run",)))
    assert judge.exp_pairs(read) == ({"val/ppl": ["equals exp(val/loss) at all 3 steps both logged"]} if paired else {})
    assert finding_lines(invoke("live-check", ".", "--run", "run", "--no-cache")) == []
