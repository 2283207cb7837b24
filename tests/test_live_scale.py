"""The live check at scale: the same probes over Parquet logs read with DuckDB, and over a run's
shards on a local Dask cluster, merged into the verdict one process reaches."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import finding_lines, invoke, write_project
from live_writers import json_lines, tensorboard

pytest.importorskip("google_crc32c")
duckdb = pytest.importorskip("duckdb")

REGISTRY = (
    "version: 1\nmetrics:\n  train/loss:\n    semantics:\n      scope: global\n  train/grad_norm:\n    semantics:\n      clipping: after\n"
)


def _parquet(path: Path, rows: list[tuple[str, int, float, str]]) -> None:
    connection = duckdb.connect()
    connection.execute("CREATE TABLE points (key VARCHAR, step BIGINT, value DOUBLE, rank VARCHAR)")
    connection.executemany("INSERT INTO points VALUES (?, ?, ?, ?)", rows)
    connection.execute(f"COPY points TO '{path}' (FORMAT parquet)")
    connection.close()


@pytest.mark.parametrize("bad", [True, False])
def test_parquet_logs_are_read_with_duckdb(bad: bool, in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "x = 1\n"}, REGISTRY)
    rows = [("train/loss", s, 2.0 - s / 10, r) for s in range(50) for r in ("0", "1")]
    rows += [("train/grad_norm", s, 0.5, "0") for s in range(50)] + [("other", 1, 1.0, "0")]
    if bad:
        rows[11] = ("train/loss", 5, 9.9, "1")  # rank 1 disagrees at step 5
    (in_tmp / "run").mkdir()
    _parquet(in_tmp / "run" / "points.parquet", rows)
    result = invoke("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0", "--ignore", "ML013")
    assert finding_lines(result) == (["ML011 metrics.yaml:5"] if bad else []), result.output
    if bad:
        assert "ranks log different values at 1 of the 50 steps compared (step 5: rank 0: 1.5, rank 1: 9.9)" in result.output


@pytest.mark.slow
def test_a_runs_shards_are_read_on_a_dask_cluster_and_merged(in_tmp: Path) -> None:
    """Two ranks' event files and a JSON-lines log are three shards: each worker sees one rank,
    so only the merged sketches can find the ranks disagreeing; the clip bound's counts add up."""
    pytest.importorskip("dask.distributed")
    write_project(in_tmp, {"train.py": "x = 1\n"}, REGISTRY)
    tensorboard(in_tmp / "run" / "rank0", {"train/loss": [(1, 2.0), (2, 1.5)], "train/grad_norm": [(1, 3.0), (2, 0.5)]})
    tensorboard(in_tmp / "run" / "rank1", {"train/loss": [(1, 2.0), (2, 1.7)], "train/grad_norm": [(1, 4.0), (2, 0.5)]})
    json_lines(in_tmp / "run" / "extra.jsonl", [{"step": 3, "train/grad_norm": 5.0}])
    args = ("live-check", ".", "--run", "run", "--no-cache", "--fact", "max_grad_norm=1.0", "--ignore", "ML013")
    alone = invoke(*args)
    spread = invoke(*args, "--dask", "local:2")
    assert finding_lines(spread) == finding_lines(alone) == ["ML011 metrics.yaml:5", "ML011 metrics.yaml:8"], spread.output
    assert spread.output == alone.output
    assert "3 of the 5 values read exceed max_grad_norm 1.0" in spread.output
