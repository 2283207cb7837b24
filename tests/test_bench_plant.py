"""bench/plant.py and plant_draw.py: a plant edits only the line it was drawn on, batches keep
plants apart, and a planted contradiction metriclint reports counts as found."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import plant  # noqa: E402  (bench/ is a folder of scripts, not a package)
import plant_draw  # noqa: E402

STEP = """import torch


def clip_and_step(model, optimizer):
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return norm.item()
"""
REPORT = '''def report(tracker, grad_norm, step):
    """Send one step's numbers to the tracker.

    Args:
        grad_norm: Gradient norm before clipping.
    """
    stats = {}
    stats["train/grad_norm"] = float(grad_norm)
    tracker.log(stats, step=step)
'''
CLI = """def options(parser, tracker):
    parser.add_argument("--log-norm", action="store_true", help=(
        "Also log the grad norm before clipping."
    ))
    tracker.log({"train/flags": 1})
"""
LOOP = """from pkg.report import report
from pkg.step import clip_and_step


def train(model, optimizer, tracker, batches):
    for step, batch in enumerate(batches):
        model(batch)
        report(tracker, clip_and_step(model, optimizer), step)
"""


def project(folder: Path) -> Path:
    (folder / "pkg").mkdir(parents=True)
    for name, text in {"step.py": STEP, "report.py": REPORT, "loop.py": LOOP, "cli.py": CLI, "__init__.py": ""}.items():
        (folder / "pkg" / name).write_text(text, encoding="utf-8")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_report.py").write_text("# grad norm before clipping is logged\n", encoding="utf-8")
    return folder


def line_of(text: str, words: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if words in line)


def flip(path: str = "pkg/report.py", line: int = 0, kind: str = "clipping", key: str = "train/grad_norm") -> plant.Plant:
    line = line or line_of(REPORT, "before clipping")
    text = REPORT.splitlines()[line - 1]
    column = text.index("before clipping") if "before clipping" in text else 0
    return plant.Plant(
        "001", kind, "flip", path, line, column, plant.line_hash(text), "before clipping", "after clipping", key, "accept", ""
    )


def test_a_flip_rewrites_its_phrase_and_refuses_a_changed_line() -> None:
    lines = REPORT.splitlines(keepends=True)
    edited = flip().edit(lines)
    assert [n for n, (a, b) in enumerate(zip(lines, edited)) if a != b] == [line_of(REPORT, "before clipping") - 1]
    assert "Gradient norm after clipping.\n" in edited[line_of(REPORT, "before clipping") - 1]
    changed = [*lines]
    changed[line_of(REPORT, "before clipping") - 1] = "        grad_norm: Gradient norm, before clipping.\n"
    with pytest.raises(ValueError, match="not the line drawn"):
        flip().edit(changed)


def test_a_plant_that_no_longer_fits_its_tree_is_named(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert plant.broken(flip(), root) is None
    (root / "pkg" / "report.py").write_text(REPORT.replace("Gradient norm before", "Norm before"), encoding="utf-8")
    assert "001 pkg/report.py" in (plant.broken(flip(), root) or "")


def test_an_insert_goes_above_its_line_at_its_indentation_and_moves_the_lines_below() -> None:
    line = line_of(REPORT, 'stats["train/grad_norm"]')
    text = REPORT.splitlines()[line - 1]
    insert = plant.Plant(
        "002",
        "clipping",
        "insert",
        "pkg/report.py",
        line,
        0,
        plant.line_hash(text),
        "-",
        "train/grad_norm: gradient norm after clipping",
        "train/grad_norm",
        "accept",
        "",
    )
    edited = insert.edit(REPORT.splitlines(keepends=True))
    assert edited[line - 1] == "    # train/grad_norm: gradient norm after clipping\n"
    assert edited[line] == text + "\n"
    assert (insert.moved("pkg/report.py", line - 1), insert.moved("pkg/report.py", line), insert.moved("pkg/loop.py", line)) == (
        line - 1,
        line + 1,
        line,
    )
    found = plant.Found("pkg/loop.py", 3, "ML006", "m", "clipping", "after", (("pkg/report.py", line),), "")
    assert found.moved([insert]).related == (("pkg/report.py", line + 1),)


def test_a_batch_never_holds_two_plants_of_one_file_facet_or_metric() -> None:
    a = flip()
    same_file = replace(a, id="002", kind="s-ms", key="perf/step_time")
    same_facet = replace(a, id="003", path="pkg/other.py", key="perf/step_time")
    same_metric = replace(a, id="004", path="pkg/other.py", kind="s-ms", key="grad_norm")
    apart = replace(a, id="005", path="pkg/other.py", kind="s-ms", key="perf/step_time")
    runs = plant.batches([a, same_file, same_facet, same_metric, apart], alone=False)
    assert [[p.id for p in run] for run in runs] == [["001", "005"], ["002"], ["003"], ["004"]]
    for run in runs:
        assert len({p.path for p in run}) == len({p.facet for p in run}) == len(run)
        assert not any(plant.same_metric(p.key, q.key) for p in run for q in run if p is not q)
    assert all(len(run) == 1 for run in plant.batches([a, apart], alone=True))


@pytest.mark.parametrize(
    ("found", "key", "same"),
    [
        ("train/{tag}grad_norm", "train/grad_norm", True),
        ("grad_norm", "train/grad_norm", True),
        ("grad-norm", "grad_norm", True),
        ("train/loss", "train/grad_norm", False),
        ("perf/{name}_time", "perf/step_time", True),
        ("train/{x}", "eval/accuracy", False),
        ("agent/compute_score/max", "{prefix}_max", False),
        ("rollout/{prefix}_max", "{prefix}_max", True),
    ],
)
def test_a_finding_names_the_plant_key_by_key_template_or_last_segment(found: str, key: str, same: bool) -> None:
    assert plant.same_metric(found, key) is same


def test_the_drawer_finds_the_phrase_and_the_key_but_not_in_tests_nor_help_texts(tmp_path: Path) -> None:
    every = plant_draw.candidates(project(tmp_path))
    flips = [p for p in every if p.how == "flip" and p.kind == "clipping"]
    assert [(p.path, p.line, p.phrase, p.to) for p in flips] == [
        ("pkg/report.py", line_of(REPORT, "before clipping"), "before clipping", "after clipping")
    ]
    assert ("pkg/report.py", line_of(REPORT, 'stats["train/grad_norm"]'), "train/grad_norm") in {
        (p.path, p.line, p.key) for p in every if p.how == "insert"
    }
    assert flips[0].edit(REPORT.splitlines(keepends=True))  # the drawn hash and column are the file's


def test_a_planted_contradiction_is_found_and_the_tree_is_left_as_it_was(tmp_path: Path) -> None:
    tree = plant.Tree("o/r", "-", project(tmp_path / "tree"))
    options = argparse.Namespace(alone=False, mode=["zero-config"], cache_dir=tmp_path / "cache", jobs=1, check_batching=0)
    modes, runs, mismatches = plant.run_tree(tree, [flip()], options)
    assert modes[0].outcomes["001"].status == "found"
    assert {(f.rule, f.path, f.line) for f in modes[0].outcomes["001"].findings} == {
        ("ML006", "pkg/report.py", line_of(REPORT, "before clipping"))
    }
    assert modes[0].collateral == [[]] and mismatches == []
    assert (tmp_path / "tree" / "pkg" / "report.py").read_text(encoding="utf-8") == REPORT
