"""The live check on the real runs kept under bench/live/ (see bench/live/README.md): for each
statement, what the run proves, disproves or leaves undetermined.

    python bench/live_real.py

Prints one block per run: each probe's outcome per metric (consistent, ruled out, or why
undetermined), then the findings `metriclint live-check` reports for it.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from metriclint import engine, settings
from metriclint.cli import main
from metriclint.live import check, judge
from metriclint.live.facts import given
from metriclint.live.probes import Series

HERE = Path(__file__).parent / "live"
# (project folder, run path relative to it, --fact options: each from the run's own log, as cited)
CASES = [
    ("whisper-ja", "run", ()),
    ("tinyllama-sft", "run", ()),
    ("grpo-wandb", "run", ()),
    ("megatron-project", "../megatron-gpt2-4dp/run/train.log", ("max_grad_norm=1.0",)),  # clip_grad, train.log:29
    ("megatron-project", "../megatron-gpt2-4tp/run/train.log", ("max_grad_norm=1.0",)),  # clip_grad, train.log:29
    ("megatron-project", "../megatron-gpt2-4pp/run/train.log", ("max_grad_norm=1.0",)),  # clip_grad, train.log:29
]


def main_() -> None:
    for folder, run, facts in CASES:
        os.chdir(HERE / folder)
        print(f"== {folder} <- {run}")
        config = settings.with_speed(settings.load((".",), None, None), None, None, True)
        analysis = engine.analyse(config)
        facts_given, problems = given(facts)
        assert not problems
        reads, _, _ = check.reads(analysis, check.Runs((run,), tuple(facts_given)))
        for read in reads:
            print(f"   {read.points} points of claimed keys read; {len(read.seen)} keys logged")
            for metric, probes in sorted(read.plan.probes.items()):
                for probe in probes:
                    if isinstance(probe, Series):
                        continue  # paired below
                    outcome = probe.outcome()
                    verdict = (
                        f"rules out {', '.join(outcome.ruled_out)}: {next(iter(outcome.ruled_out.values()))}"
                        if outcome.ruled_out
                        else f"undetermined: {outcome.undetermined}"
                        if outcome.undetermined
                        else f"consistent: {outcome.consistent}"
                    )
                    print(f"   {metric} [{type(probe).__name__} {probe.facet}]: {verdict}")
            for metric, pairs in sorted(judge.exp_pairs(read).items()):
                print(f"   {metric} [perplexity pair]: proved: {'; '.join(pairs)}")
            for (metric, facet, value), why in sorted(read.plan.open.items()):
                print(f"   {metric} [{facet}={value}]: no probe: {why}")
        result = CliRunner().invoke(
            main, ["live-check", ".", "--run", run, "--no-cache", *[f"--fact={f}" for f in facts], "--ignore", "ML013"]
        )
        print("   " + "\n   ".join(result.output.strip().splitlines()))
        print()


if __name__ == "__main__":
    main_()
