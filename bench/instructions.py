"""Count the instructions of a cold `metriclint check` of one tree, for each of several checkouts.

    python bench/instructions.py /path/to/miles /work/wt/base /work/wt/now

On a shared machine a cold run's CPU seconds drift by a fifth; the instructions it executes do
not, so issues 29 and 30's limit on the cold run's growth (10% over its CPU time at ffe5309) is
checked here with valgrind's callgrind (it must be installed). Each checkout's
`python -m metriclint check TREE --no-cache` runs with that checkout first on PYTHONPATH; the
main process, the forked listing process and the workers are each counted, and summed.

A forked child starts with its parent's counters: counted as they are, every worker would count
again all the parent did before the fork (imports, the compiled phrase patterns), about a
seventh of a run on miles. Each child's counters are set to zero where Python's fork handler
runs in it (`--zero-before=PyOS_AfterFork_Child`), so each instruction is counted once.
"""

from __future__ import annotations

import argparse
import os
import site
import subprocess
import sys
import tempfile
from pathlib import Path


def instructions(checkout: Path, tree: Path) -> int:
    """The instructions of every process of one cold check of `tree` with `checkout`'s code."""
    with tempfile.TemporaryDirectory() as out:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--trace-children=yes",
            "--zero-before=PyOS_AfterFork_Child",
            f"--callgrind-out-file={out}/callgrind.%p",
            sys.executable,
            "-S",
            "-c",
            _RUN,
            "check",
            str(tree),
            "--no-cache",
            "-q",
            "--exit-zero",
        ]
        # Run from the empty folder: `python -c` puts the working folder first on sys.path, so
        # run from a checkout it would import that checkout's metriclint whatever PYTHONPATH says.
        done = subprocess.run(command, cwd=out, env=dict(os.environ, PYTHONPATH=str(checkout)), capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{checkout}: exit {done.returncode}\n{done.stderr[-2000:]}")
        return sum(_total(path) for path in Path(out).glob("callgrind.*"))


# `python -m metriclint` without the site module: the environment's `.pth` files run in every
# process and may add folders to the import path (an editable install of another checkout adds
# one), which changed one checkout's count by 3% and another's not at all. The site-packages
# folders are put on the path as they are, their `.pth` files left unread.
_RUN = f"import runpy, sys; sys.path += {site.getsitepackages()!r}; runpy.run_module('metriclint', run_name='__main__', alter_sys=True)"


def _total(path: Path) -> int:
    """A callgrind file's total (its `summary:` or `totals:` line)."""
    with path.open() as lines:
        for line in lines:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("checkouts", type=Path, nargs="+", help="the first is the baseline the others are compared with")
    args = parser.parse_args()
    first = None
    for checkout in args.checkouts:
        count = instructions(checkout.resolve(), args.tree.resolve())
        first = first or count
        print(f"{checkout}: {count / 1e9:.3f} G instructions, {count / first:.3f} x the first")


if __name__ == "__main__":
    main()
