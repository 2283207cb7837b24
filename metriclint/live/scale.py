"""The live check over a fleet's runs on a Dask cluster.

Dask rather than Ray: the probes are plain Python objects merged by a reduction, which is what
`dask.distributed` schedules with the least machinery (a pure-Python scheduler and workers, a
`LocalCluster` of processes in the tests, started in about a second), where Ray brings its own
object store and raylet processes, a binary wheel and a gigabyte of memory before the first
task. No scheduler of our own: Dask places the shards, retries a lost worker's, and streams the
results back.

Each shard is one file of a run (an event file, a Parquet file, a rank's log): a worker reads
it with the run's facts (worked out once, on the client) and returns its `judge.Read`, whose
probes the client merges (`Read.merge`) into the run's. Only plain values travel: statements,
facts, the probes' counts and sketches.
"""

from __future__ import annotations

from typing import Any

from metriclint.live import judge
from metriclint.live.points import Fact, Wanted
from metriclint.live.readers.kinds import ReaderOptions, open_run
from metriclint.live.statements import KeyMetrics, StatedValue
from metriclint.live.templates import Template
from metriclint.model import CodeClaim


def client(address: str) -> Any:
    """A client of the scheduler at `address`, or of a new local cluster (`local`, `local:N`
    workers)."""
    from dask.distributed import Client, LocalCluster

    if address == "local" or address.startswith("local:"):
        workers = int(address.partition(":")[2] or 2)
        # ":0": the scheduler's HTTP server on a free port; None still binds 8787, and warns on the
        # user's stderr when another cluster holds it
        return Client(LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0"))
    return Client(address)


def shards(run: str) -> tuple[list[str], list[Fact]]:
    """The files of a run, and its facts, without reading a point."""
    opened = open_run(run, ReaderOptions(Wanted(lambda key: False)))
    files = list(dict.fromkeys(stream.source.path for stream, _ in opened.streams))
    for stream, _ in opened.streams:
        close = getattr(stream.points, "close", None)
        if callable(close):
            close()
    return files, opened.facts


def read_runs(
    address: str,
    runs: list[str],
    statements: list[StatedValue],
    names: KeyMetrics,
    given: list[Fact],
    presumed: list[Fact],
    templates: list[Template],
    code: tuple[CodeClaim, ...],
    step_key: str | None,
    rank_key: str,
) -> list[judge.Read]:
    """Every run read shard by shard on the cluster at `address`, each run's shards merged."""
    with client(address) as dask:
        done = []
        for run in runs:
            files, facts = shards(run)
            if not files:
                done.append(judge.read_run(run, statements, names, given, presumed, templates, code, step_key, rank_key))
                continue
            futures = [
                dask.submit(
                    judge.read_run,
                    file,
                    statements,
                    names,
                    [*given, *facts],
                    presumed,
                    templates,
                    code,
                    step_key,
                    rank_key,
                    None,
                    run,
                    pure=False,
                )
                for file in files
            ]
            reads = dask.gather(futures)
            merged = reads[0]
            for other in reads[1:]:
                merged.merge(other)
            done.append(merged)
        return done
