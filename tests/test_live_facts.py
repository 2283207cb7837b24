"""The facts the live check's tests need: from the run's own files (firm), from the project's
defaults (presumed: never a disproof), from --fact; and rules/live.yaml's examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project
from live_writers import json_lines

pytest.importorskip("google_crc32c")

from metriclint.base.builtin import rules_dir  # noqa: E402
from metriclint.base.marked_yaml import load  # noqa: E402
from metriclint.live import templates  # noqa: E402
from metriclint.live.facts import fact_named  # noqa: E402

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: after\n"
ARGS = 'import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument("--clip-grad", type=float, default=1.0)\n'


def _run(folder: Path, config: str | None = None) -> None:
    json_lines(folder / "run" / "log.jsonl", [{"step": 1, "train/grad_norm": 0.5}, {"step": 2, "train/grad_norm": 2.5}])
    if config is not None:
        (folder / "run" / "config.yaml").write_text(config, encoding="utf-8")


def _check(*args: str) -> str:
    return invoke("live-check", ".", "--run", "run", "--no-cache", "--select", "ML011,ML014", *args).output


def test_a_default_in_the_project_explains_but_never_disproves(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": ARGS}, REGISTRY)
    _run(in_tmp)
    output = _check()
    assert "ML011" not in output
    assert (
        "ML014 train/grad_norm: registry says clipping=after; undetermined by the run: 1 of the 2 values read exceed max_grad_norm's "
        "default 1.0 (train.py:4), but the run does not record its own (pass --fact max_grad_norm=VALUE)" in output
    )


def test_the_runs_own_config_is_a_firm_fact_cited_at_its_line(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": ARGS}, REGISTRY)
    _run(in_tmp, "optimizer:\n  lr: 0.001\n  max_grad_norm: 1.0\n")
    assert "exceed max_grad_norm 1.0 (run/config.yaml:3)" in _check()


def test_two_firm_places_that_disagree_leave_the_fact_unknown(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, REGISTRY)
    _run(in_tmp, "max_grad_norm: 1.0\n")
    (in_tmp / "run" / "args.json").write_text('{"clip_grad": 5.0}\n', encoding="utf-8")
    output = _check()
    assert "ML011" not in output and "max_grad_norm is given differently" in output
    assert "ML011" in _check("--fact", "max_grad_norm=1.0")  # --fact settles it


def test_a_fact_given_overrides_the_runs(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, REGISTRY)
    _run(in_tmp, "max_grad_norm: 1.0\n")
    assert finding_lines(invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=3.0")) == []


def test_the_rules_examples() -> None:
    root, problems = load((rules_dir() / "live.yaml").read_text(encoding="utf-8"), "live.yaml", shipped=True)
    assert root is not None and not problems
    examples = root.entries["examples"][1].elements
    assert examples
    for example in examples:
        entries = {key: value for key, (_, value) in example.entries.items()}
        if "fact" in entries:
            fact = entries["fact"].value
            assert all(fact_named(str(n.value)) == fact for n in entries["matches"].elements), fact
            assert all(fact_named(str(n.value)) != fact for n in entries["not"].elements), fact
        else:
            assert str(entries["step"].value) in templates.step_names()
            assert all(str(n.value) not in templates.step_names() for n in entries["not"].elements)


def test_a_percent_format_handed_to_a_logger_is_inverted(in_tmp: Path) -> None:
    """`logger.info("... %.3f", x)`: the format and its values, as the logger fills them."""
    code = (
        "import logging\n\nlogger = logging.getLogger(__name__)\n\n\n"
        "def report(step, grad_norm):\n"
        '    """Args:\n        grad_norm: The norm after clipping.\n    """\n'
        '    wandb.log({"train/grad_norm": grad_norm})\n'
        '    logger.info("step %d | grad norm %.3f", step, grad_norm)\n'
    )
    registry = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n"
    log = "".join(f"INFO step {s} | grad norm {v:.3f}\n" for s, v in [(7, 0.5), (8, 4.25)])
    write_project(in_tmp, {"train.py": code, "train.log": log}, registry)
    output = invoke("live-check", ".", "--run", "train.log", "--no-cache", "--fact", "max_grad_norm=1.0").output
    assert "first at step 8: 4.25 (train.log)" in output, output


def test_a_suppression_of_a_live_finding_is_stale_in_neither_command(in_tmp: Path) -> None:
    """`check` never reports ML011, `live-check` never reports ML001: a comment that silences one
    is not reported as silencing nothing by the command that does not make it."""
    code = (
        'def log(grad_norm):\n    """Args:\n        grad_norm: Norm after clipping.\n    """  # metriclint: ignore[ML011,ML001]\n'
        '    wandb.log({"train/grad_norm": grad_norm})\n'
    )
    registry = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"
    write_project(in_tmp, {"train.py": code}, registry)
    _run(in_tmp)
    assert finding_lines(invoke("check", ".", "--no-cache")) == []
    assert finding_lines(invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0")) == []
    (in_tmp / "train.py").write_text((in_tmp / "train.py").read_text().replace("ignore[ML011,ML001]", "ignore[ML001]"))
    assert finding_lines(invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0")) == ["ML011 train.py:3"]
