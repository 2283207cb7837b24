"""Runs for the live check's tests, each written by the writer that makes such runs: TensorBoard's
(tensorboardX), W&B's offline mode, MLflow's stores; a trainer state and JSON lines as the
Trainer and trackers write them. Each returns the run's path."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Sequence

import pytest

Points = Sequence[tuple[int, float]]  # (step, value)


def tensorboard(folder: Path, series: dict[str, Points], walls: Sequence[float] | None = None) -> Path:
    writer_module = pytest.importorskip("tensorboardX")
    writer = writer_module.SummaryWriter(str(folder))
    for key, points in series.items():
        for index, (step, value) in enumerate(points):
            writer.add_scalar(key, value, step, walltime=walls[index] if walls else None)
    writer.close()
    return folder


def trainer_state(folder: Path, history: Iterable[dict[str, object]], **state: object) -> Path:
    """A Trainer's output folder: trainer_state.json as `TrainerState.save_to_json` writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    document = {"log_history": list(history), "global_step": 0, "max_steps": 0, **state}
    (folder / "trainer_state.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def json_lines(path: Path, records: Iterable[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def wandb_offline(folder: Path, series: dict[str, Points], config: dict[str, object] | None = None) -> Path:
    wandb = pytest.importorskip("wandb")
    folder.mkdir(parents=True, exist_ok=True)
    run = wandb.init(mode="offline", dir=str(folder), project="fixture", config=config or {}, settings=wandb.Settings(silent=True))
    steps = sorted({step for points in series.values() for step, _ in points})
    for step in steps:
        run.log({key: value for key, points in series.items() for s, value in points if s == step}, step=step)
    run.finish()
    (found,) = (folder / "wandb").glob("offline-run-*")
    return found


def mlflow_sqlite(path: Path, series: dict[str, Points], params: dict[str, object] | None = None) -> Path:
    mlflow = pytest.importorskip("mlflow")
    mlflow.set_tracking_uri(f"sqlite:///{path}")
    with mlflow.start_run():
        for key, value in (params or {}).items():
            mlflow.log_param(key, value)
        for key, points in series.items():
            for step, value in points:
                mlflow.log_metric(key, value, step=step)
    return path


def mlflow_files(folder: Path, series: dict[str, Points], params: dict[str, object] | None = None) -> Path:
    mlflow = pytest.importorskip("mlflow")
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    mlflow.set_tracking_uri(folder.resolve().as_uri())
    with mlflow.start_run():
        for key, value in (params or {}).items():
            mlflow.log_param(key, value)
        for key, points in series.items():
            for step, value in points:
                mlflow.log_metric(key, value, step=step)
    return folder
