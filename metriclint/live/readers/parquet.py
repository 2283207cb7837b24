"""Parquet logs in long form, read with DuckDB (the `live-scale` extra): one row a point, in
columns `key`, `step`, `value`, and optionally `rank` and `wall` (seconds).

DuckDB reads only those columns, and only the rows of the keys asked for (the filter is pushed
down to the row groups), in the file's order, a batch at a time: memory is one batch whatever
the file's size. A file of several runs' shards is one run here; give each run its own files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from metriclint.live.points import Corrupt, Point, Wanted

BATCH = 100_000


def is_parquet(path: Path) -> bool:
    return path.suffix == ".parquet"


class Table:
    def __init__(self, path: Path, shown: str, wanted: Wanted) -> None:
        self.path, self.shown, self.wanted = path, shown, wanted

    def points(self) -> Iterator[Point]:
        try:
            import duckdb
        except ImportError:
            raise Corrupt("reading Parquet needs duckdb: pip install 'metriclint[live-scale]'") from None
        connection = duckdb.connect()
        try:
            source = f"read_parquet('{_quoted(self.path)}')"
            columns = {row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
            if not {"key", "step", "value"} <= columns:
                raise Corrupt("a Parquet log needs the columns key, step and value")
            keys = [row[0] for row in connection.execute(f"SELECT DISTINCT key FROM {source}").fetchall()]
            kept = [key for key in keys if isinstance(key, str) and self.wanted(key, self.shown)]
            if not kept:
                return
            rank = "CAST(rank AS VARCHAR)" if "rank" in columns else "''"
            wall = "CAST(wall AS DOUBLE)" if "wall" in columns else "NULL"
            result = connection.execute(
                f"SELECT {rank}, key, CAST(step AS BIGINT), CAST(value AS DOUBLE), {wall} FROM {source} WHERE key IN (SELECT unnest(?))",
                [kept],
            )
            while batch := result.fetchmany(BATCH):
                for found_rank, key, step, value, at in batch:
                    if step is not None and value is not None:
                        yield found_rank or "", key, step, value, at
        except duckdb.Error as error:
            raise Corrupt(f"DuckDB cannot read it: {error}") from None
        finally:
            connection.close()


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
