"""Live check: what the texts and the registry claim, held against the values a run logged.

Takes one run of the pipeline (engine.Analysis: its claims, registry, code facts and log
messages) and the run files named by `--run`; gives findings ML011-ML014 (model.Finding), which
the command line filters and reports as `check` does.

`readers/` turn each kind of run file into streams of points (rank, key, step, value, wall
time) and the facts the run records; `facts` adds the project's own and `--fact`; `probes`
are the value tests, one per facet value, as mergeable online accumulators; `judge` routes
the points to them and turns their outcomes into findings; `scale` runs the same probes over
Parquet with DuckDB and over shards on a Dask cluster. Needs the `live` extra (a CRC-32C and a
streaming JSON parser), which nothing below this stage imports.
"""
