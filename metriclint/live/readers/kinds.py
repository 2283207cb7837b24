"""Which reader a `--run` path is for, and everything a run holds: its streams and its facts.

A file is read by its kind: a TensorBoard event file (`*tfevents*`), a `trainer_state.json`, a
W&B `.wandb` file, an MLflow SQLite database, a JSON-lines log (`.jsonl`, `.ndjson`), a text
log (`.log`, `.out`, `.txt`, read by the project's templates), a Parquet log (DuckDB). A folder is a run's output: its
event files and logs (every level down), the latest trainer state (hf.py), a W&B run folder, an
MLflow file store, and its config files, read for facts. A path segment `rank<N>` (`rank_1`,
`rank-3`) names the rank of the files under it; other files are rank "".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Protocol

from metriclint.base.paths import display
from metriclint.live import facts as fact_sources
from metriclint.live.points import Corrupt, Fact, Point, RunSource, Stream, Wanted
from metriclint.live.readers import hf, jsonl, mlflow, parquet, textlog, wandb
from metriclint.live.templates import Template

_RANK = re.compile(r"rank[_-]?(\d+)", re.IGNORECASE)
_CONFIGS = (".json", ".yaml", ".yml")
_NOT_CONFIG = frozenset(
    {
        hf.STATE,
        "wandb-summary.json",
        "wandb-metadata.json",
        "meta.yaml",
        "tokenizer.json",
        "vocab.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "trainer_state.json",
        "all_results.json",
        "train_results.json",
        "eval_results.json",
    }
)
MAX_FILES = 10_000  # files looked at under one run folder


class PointReader(Protocol):
    def points(self) -> Iterator[Point]: ...


@dataclass
class ReaderOptions:
    wanted: Wanted
    step_key: str | None = None
    rank_key: str = "rank"
    templates: list[Template] = field(default_factory=list)
    offsets: dict[str, int] = field(default_factory=dict)  # event files' resume offsets (offsets.py)


@dataclass
class Run:
    """A run's streams (lazy: nothing is read until their points are), facts and problems."""

    name: str
    streams: list[tuple[Stream, PointReader]] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    problems: list[tuple[str, Corrupt]] = field(default_factory=list)  # (file shown, what is wrong)
    unread: list[str] = field(default_factory=list)  # text logs left unread: no template


def rank_of(path: Path) -> str:
    found = _RANK.findall(path.as_posix())
    return found[-1] if found else ""


def open_run(run: str, options: ReaderOptions) -> Run:
    path = Path(run)
    opened = Run(run)
    if path.is_dir():
        _folder(path, opened, options)
    else:
        _file(path, opened, options, explicit=True)
    return opened


def _add(opened: Run, path: Path, reader: PointReader, float64: bool, updates: bool = False) -> None:
    source = RunSource(opened.name, display(path), float64, updates)
    opened.streams.append((Stream(source, reader.points()), reader))


def _file(path: Path, opened: Run, options: ReaderOptions, explicit: bool = False) -> None:
    shown, wanted, rank = display(path), options.wanted, rank_of(path)
    name = path.name
    if _lfs_pointer(path):
        opened.problems.append((shown, Corrupt("a Git LFS pointer, not the run file itself: `git lfs pull` fetches it")))
    elif "tfevents" in name:
        from metriclint.live.readers.tfevents import EventFile

        _add(opened, path, EventFile(path, shown, wanted, rank, options.offsets.get(shown, 0)), float64=False)
    elif name == hf.STATE:
        _add(opened, path, hf.History(path, shown, wanted), float64=True, updates=True)
        opened.facts += _state_facts(path)
    elif parquet.is_parquet(path):
        _add(opened, path, parquet.Table(path, shown, wanted), float64=True)
    elif wandb.is_run_file(path):
        _add(opened, path, wandb.RunFile(path, shown, wanted), float64=True)
        opened.facts += fact_sources.from_mapping(((k, v, 1) for k, v in wandb.config(path).items()), shown)
    elif path.suffix in (".jsonl", ".ndjson"):
        _add(opened, path, jsonl.Lines(path, shown, wanted, options.step_key, options.rank_key, rank), float64=True)
    elif path.suffix in (".db", ".sqlite", ".sqlite3") and mlflow.is_database(path):
        database = mlflow.Database(path, shown, wanted)
        try:
            for run_id in database.runs():
                _add(opened, path, _DatabaseRun(database, run_id), float64=True)
                opened.facts += fact_sources.from_mapping(((k, v, 1) for k, v in database.params(run_id).items()), shown)
        except Corrupt as error:
            opened.problems.append((shown, error))
    elif path.suffix in textlog.SUFFIXES or explicit:
        if options.templates:
            _add(opened, path, textlog.TextLog(path, shown, wanted, options.templates, rank), float64=True)
        elif explicit:  # a log found in a folder may be any program's: only one named is worth a word
            opened.unread.append(shown)


@dataclass
class _DatabaseRun:
    database: mlflow.Database
    run: str

    def points(self) -> Iterator[Point]:
        return self.database.points(self.run)


def _folder(folder: Path, opened: Run, options: ReaderOptions) -> None:
    state = hf.latest_state(folder)
    if state is not None:
        _file(state, opened, options)
    for run in mlflow.file_store_runs(folder):
        for key, path in mlflow.metric_files(run):
            _add(opened, path, mlflow.MetricFile(path, display(path), key, options.wanted), float64=True)
        params = mlflow.params(run)
        opened.facts += [f for key, (value, path) in params.items() for f in fact_sources.from_mapping([(key, value, 1)], display(path))]
    for path in _walk(folder):
        if path.name == hf.STATE or "mlruns" in path.parts or mlflow.is_file_store_run(path.parent.parent):
            continue
        if path.name == "README.md" and (path.parent / "config.json").is_file():
            opened.facts += fact_sources.model_card(path)
        elif path.suffix in _CONFIGS and path.name not in _NOT_CONFIG and "tfevents" not in path.name:
            opened.facts += fact_sources.config_file(path)
        elif path.name == "wandb-metadata.json":
            opened.facts += _wandb_metadata(path)
        elif path.name == "wandb-summary.json" and not _has_history(path.parent):
            _add(opened, path, wandb.WandbSummary(path, display(path), options.wanted), float64=True)
        elif path.name == "wandb-history.jsonl":
            _add(opened, path, jsonl.Lines(path, display(path), options.wanted, "_step", options.rank_key, rank_of(path)), float64=True)
        elif path.suffix not in (".txt",) or "tfevents" in path.name:
            _file(path, opened, options)


def _lfs_pointer(path: Path) -> bool:
    """A file Git LFS left as its pointer (event files in a repository often are)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_LFS)) == _LFS
    except OSError:
        return False


_LFS = b"version https://git-lfs.github.com/spec/"


def _has_history(files: Path) -> bool:
    """Whether a W&B run's `files/` folder (or the run folder) has the history its summary ends."""
    return (files / "wandb-history.jsonl").is_file() or any(files.glob("run-*.wandb")) or any(files.parent.glob("run-*.wandb"))


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith(".") and not f.startswith("checkpoint-"))
        found += [Path(root) / name for name in sorted(files) if not name.startswith(".") and not os.path.islink(Path(root) / name)]
        if len(found) > MAX_FILES:
            break
    return found[:MAX_FILES]


def _state_facts(path: Path) -> list[Fact]:
    numbers = hf.state_numbers(path)
    return fact_sources.from_mapping(((key, value, line) for key, (value, line) in numbers.items()), display(path))


def _wandb_metadata(path: Path) -> list[Fact]:
    """A W&B run's device memory: every GPU's `memory_total`, when they are all the same."""
    import json

    try:
        meta = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return []
    gpus = meta.get("gpu_nvidia") or meta.get("gpu_devices") if isinstance(meta, dict) else None
    if not isinstance(gpus, list):
        return []
    totals = {str(g.get("memory_total")) for g in gpus if isinstance(g, dict) and g.get("memory_total") is not None}
    if len(totals) != 1:
        return []
    return fact_sources.from_mapping([("device_memory", totals.pop(), 1)], display(path))
