"""The live check of one project against its runs: the entry point the command line and the
editor server call."""

from __future__ import annotations

from dataclasses import dataclass

from metriclint import filters
from metriclint.engine import Analysis
from metriclint.live import judge
from metriclint.live.points import Fact
from metriclint.live.resume import Store
from metriclint.live.statements import KeyMetrics, gathered
from metriclint.live.templates import templates
from metriclint.model import Report
from metriclint.settings import Config


@dataclass(frozen=True)
class Runs:
    """What the command line says about the runs: which, and how to read them."""

    paths: tuple[str, ...]
    facts: tuple[Fact, ...] = ()
    step_key: str | None = None
    rank_key: str = "rank"
    dask: str | None = None  # a Dask scheduler's address, or `local`/`local:N`: read each run's files there (scale.py)


def reads(analysis: Analysis, runs: Runs, store: Store | None = None) -> tuple[list[judge.Read], list[judge.StatedValue], KeyMetrics]:
    """Each run read, its points routed to the probes the statements call for; with a `store`,
    event files are read on from where the last check stopped."""
    statements = gathered(analysis.claims, analysis.registry, analysis.mentions)
    names = KeyMetrics(analysis.registry, {s.metric for s in statements})
    made = templates(analysis.mentions)
    presumed = judge.presumed(analysis.collection.files)
    if runs.dask is not None:
        from metriclint.live import scale

        done = scale.read_runs(
            runs.dask, list(runs.paths), statements, names, list(runs.facts), presumed, made, analysis.code, runs.step_key, runs.rank_key
        )
        return done, statements, names
    done = [
        judge.read_run(path, statements, names, list(runs.facts), presumed, made, analysis.code, runs.step_key, runs.rank_key, store)
        for path in runs.paths
    ]
    return done, statements, names


def check(analysis: Analysis, config: Config, runs: Runs) -> Report:
    """The findings of the runs, filtered as `check` filters its own (selection, suppression
    comments, the baseline)."""
    done, statements, names = reads(analysis, runs, Store(config.cache_dir / "live") if config.cache_dir is not None else None)
    found = judge.findings(statements, done, analysis.registry, names)
    suppressions = [s for e in analysis.collection.extractions for s in e.suppressions]
    kept = filters.reported(found, config, suppressions, "live-check")
    return Report(tuple(sorted(kept, key=lambda f: f.sort_key)), analysis.report.files_checked)
