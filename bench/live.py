"""How fast the live check reads a run, and in how much memory.

    python bench/live.py                      # a 10^6-point event file, checked by `metriclint live-check`
    python bench/live.py --points 100000000 --form parquet   # 10^8 points streamed from Parquet (DuckDB)

Writes the run under --folder (default /tmp/metriclint-live-bench), with a small project whose
registry states what the run's keys are (a clip bound, a definition's bound, a scope, a running
peak: probes that read every point to the end), then runs the check in a child process and
prints its wall time, CPU time, peak resident memory and points per second. Needs the `live`
extra (and `live-scale` for Parquet). Run it twice with different --points to see that memory
does not grow with the run.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import live_runs  # noqa: E402

REGISTRY = """version: 1
metrics:
  train/k0:
    semantics:
      clipping: after
  train/k1:
    description: The peak since the start.
    semantics:
      reduction: max
  train/k2:
    semantics:
      unit: fraction
  train/k3:
    semantics:
      scope: global
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10**6)
    parser.add_argument("--form", choices=["events", "parquet"], default="events")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/metriclint-live-bench"))
    arguments = parser.parse_args()
    folder: Path = arguments.folder / f"{arguments.form}-{arguments.points}"
    run = folder / "run"
    written = time.perf_counter()
    if not run.exists():
        if arguments.form == "events":
            live_runs.event_file(run / "events.out.tfevents.1", arguments.points)
        else:
            live_runs.parquet_file(run / "points.parquet", arguments.points)
    written = time.perf_counter() - written
    (folder / "metrics.yaml").write_text(REGISTRY, encoding="utf-8")
    (folder / "train.py").write_text("x = 1\n", encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "metriclint",
        "live-check",
        ".",
        "--run",
        "run",
        "--no-cache",
        "--fact",
        "max_grad_norm=1.0",
        "--exit-zero",
        "--quiet",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path.cwd())})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    size = sum(p.stat().st_size for p in run.rglob("*") if p.is_file())
    print(
        f"{arguments.points:,} points ({arguments.form}, {size / 2**20:,.0f} MiB{f', written in {written:.1f} s' if written > 0.01 else ''})"
    )
    print(
        f"live-check: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {after.ru_maxrss / 1024:.0f} MiB, "
        f"{arguments.points / wall:,.0f} points/s; exit {result.returncode}"
    )
    print(result.stdout.strip()[-2000:] or "(no findings)", result.stderr.strip()[-2000:], sep="\n")


if __name__ == "__main__":
    main()
