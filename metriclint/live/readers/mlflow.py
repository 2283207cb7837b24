"""MLflow tracking stores: the file store (`mlruns/`) and the SQLite store.

File store (mlflow/store/tracking/file_store.py): `mlruns/<experiment>/<run>/metrics/<key>`,
one line per value, `timestamp value step` (timestamp in milliseconds); a key with `/` is a
folder path; `params/<key>` holds one parameter (a fact). SQLite store
(mlflow/store/tracking/dbmodels/models.py): table `metrics` (key, value, timestamp, step,
is_nan, run_uuid) and `params` (key, value, run_uuid); a NaN is stored as 0 with `is_nan` set.
The database is opened read-only and read in key order of its rows, only the claimed keys
asked of it. Both keep doubles.
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Iterator

from metriclint.live.points import Corrupt, Point, Wanted


def is_file_store_run(folder: Path) -> bool:
    return (folder / "metrics").is_dir() and (folder / "meta.yaml").is_file()


def file_store_runs(folder: Path) -> list[Path]:
    """The run folders under an `mlruns/` folder (or its parent), an experiment folder or a run
    folder: `meta.yaml` beside a `metrics/` folder, up to three levels down."""
    if is_file_store_run(folder):
        return [folder]
    found = [p.parent for depth in ("*/", "*/*/", "*/*/*/") for p in sorted(folder.glob(depth + "meta.yaml"))]
    return [run for run in found if is_file_store_run(run)]


class MetricFile:
    """One metric's file of a file-store run."""

    def __init__(self, path: Path, shown: str, key: str, wanted: Wanted) -> None:
        self.path, self.shown, self.key, self.wanted = path, shown, key, wanted

    def points(self) -> Iterator[Point]:
        if not self.wanted(self.key, self.shown):
            return
        with open(self.path, "rb") as handle:
            for line, raw in enumerate(handle, 1):
                parts = raw.split()
                if not parts:
                    continue
                try:
                    wall, value = float(parts[0]) / 1000, float(parts[1])
                    step = int(parts[2]) if len(parts) > 2 else 0
                except (ValueError, IndexError, OverflowError):
                    raise Corrupt(f"line {line} is not `timestamp value step`", line=line) from None
                yield "", self.key, step, value, wall


def metric_files(run: Path) -> Iterator[tuple[str, Path]]:
    metrics = run / "metrics"
    for path in sorted(metrics.rglob("*")):
        if path.is_file():
            yield path.relative_to(metrics).as_posix(), path


def params(run: Path) -> dict[str, tuple[str, Path]]:
    found = {}
    for path in sorted((run / "params").rglob("*")) if (run / "params").is_dir() else []:
        if path.is_file():
            try:
                found[path.relative_to(run / "params").as_posix()] = (path.read_text("utf-8", "replace")[:200].strip(), path)
            except OSError:
                continue
    return found


def is_database(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise Corrupt(f"cannot open the database: {error}") from None


class Database:
    """An MLflow SQLite store: every run in it, each run's points in step order."""

    def __init__(self, path: Path, shown: str, wanted: Wanted) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted

    def runs(self) -> list[str]:
        connection = _connect(self.path)
        try:
            return [row[0] for row in connection.execute("SELECT DISTINCT run_uuid FROM metrics ORDER BY run_uuid")]
        except sqlite3.Error as error:
            raise Corrupt(f"not an MLflow tracking database: {error}") from None
        finally:
            connection.close()

    def points(self, run: str) -> Iterator[Point]:
        connection = _connect(self.path)
        try:
            keys = [row[0] for row in connection.execute("SELECT DISTINCT key FROM metrics WHERE run_uuid = ?", (run,))]
            wanted = [key for key in keys if self.wanted(key, self.shown)]
            for key in wanted:
                rows = connection.execute(
                    "SELECT step, value, is_nan, timestamp FROM metrics WHERE run_uuid = ? AND key = ? ORDER BY step, timestamp",
                    (run, key),
                )
                for step, value, is_nan, timestamp in rows:
                    if not isinstance(value, (int, float)) or not isinstance(step, int):
                        continue
                    wall = timestamp / 1000 if isinstance(timestamp, (int, float)) else None
                    yield "", key, step, math.nan if is_nan else _infinite(float(value)), wall
        except sqlite3.Error as error:
            raise Corrupt(f"not an MLflow tracking database: {error}") from None
        finally:
            connection.close()

    def params(self, run: str) -> dict[str, str]:
        connection = _connect(self.path)
        try:
            return {k: v for k, v in connection.execute("SELECT key, value FROM params WHERE run_uuid = ?", (run,))}
        except sqlite3.Error:
            return {}
        finally:
            connection.close()


_LARGEST = 1.7976931348623157e308  # how the SQL store writes an infinite value (sqlalchemy_store.py)


def _infinite(value: float) -> float:
    return math.copysign(math.inf, value) if abs(value) == _LARGEST else value
