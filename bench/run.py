"""Time metriclint against its peers on one tree, side by side, and print the ratios.

    pip install -e '.[bench]'
    python bench/run.py                      # on a generated tree
    python bench/run.py /path/to/miles --registry /path/to/metrics.yaml

The tree is copied to a temporary folder first: the runs write caches into it and change
one file. The registry is copied to the copy's root (the runs edit its comments); a tree with
none gets one drafted there by `metriclint init`, so that the runs after a registry edit have
one to edit. Each command runs as a child of a small wrapper that reports the child's peak
resident memory (the largest single process, so a worker pool counts its biggest worker) and
its CPU seconds. On a shared machine both drift (CPU seconds too, by a third within minutes),
so the tools take turns, round after round, and the medians are compared.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_WRAPPER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, done.returncode)\n"
    "sys.stderr.buffer.write(done.stderr[-2000:])\n"
)
_FLOOR = (
    "import ast, pathlib, sys\n"
    "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    try:\n        ast.parse(path.read_bytes())\n"
    "    except (SyntaxError, ValueError):\n        pass\n"
)
_IGNORED = shutil.ignore_patterns(".git", ".ruff_cache", ".metriclint_cache", "__pycache__", "*.pyc")


@dataclass
class Sample:
    seconds: float
    cpu_seconds: float  # user + system of the command and its workers
    peak_mib: float


@dataclass
class Run:
    name: str
    command: list[str]
    before: Callable[[], object] | None = None  # made ready for each run (outside the timing)


def measure(runs: list[Run], repeat: int) -> dict[str, Sample]:
    """The median wall and CPU time of `repeat` runs of each, and the largest peak memory.

    The runs take turns, round after round, so that a machine whose speed drifts (a shared
    one does, by a third within minutes) slows the tools compared alike. Pending writes (a
    cache just filled, a tree just copied) are flushed before each run, so that none pays
    for the write-back of the one before it.
    """
    rounds: dict[str, list[tuple[float, float, float]]] = {run.name: [] for run in runs}
    for _ in range(repeat):
        for run in runs:
            if run.before is not None:
                run.before()
            os.sync()
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _WRAPPER, *run.command], capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - start
            peak, cpu, status = done.stdout.split()
            if int(status) not in (0, 1):  # 1: findings; anything else timed an error, not the work
                sys.exit(f"{run.name}: {' '.join(run.command)} ended with exit {status}:\n{done.stderr}")
            rounds[run.name].append((seconds, float(cpu), int(peak) / 1024))
    return {
        name: Sample(statistics.median(r[0] for r in got), statistics.median(r[1] for r in got), max(r[2] for r in got))
        for name, got in rounds.items()
    }


def byte_compiled() -> None:
    """Compile metriclint's modules to bytecode, as installing it from a wheel does: an
    editable install run under PYTHONDONTWRITEBYTECODE (CI images set it) would compile its
    sources again at every start, a tenth of a second a warm run's users never pay."""
    import compileall

    import metriclint

    compileall.compile_dir(str(Path(metriclint.__file__).parent), quiet=1)


def tool(name: str) -> str:
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} is not installed: pip install -e '.[bench]'")
    return found


def generate(root: Path, modules: int = 600) -> None:
    """A training code base in miniature: mostly code, some docstrings that state semantics."""
    for i in range(modules):
        package = root / f"pkg{i % 12}"
        package.mkdir(parents=True, exist_ok=True)
        lines = [f'"""Module {i}: helpers for stage {i}."""', "", "import math", ""]
        for j in range(12):
            said = "Gradient norm after clipping." if (i + j) % 40 == 0 else "The value to record."
            lines += [
                f"def step_{j}(metrics: dict, value: float, count: int) -> float:",
                '    """Update the metrics of one step.',
                "",
                "    Args:",
                "        metrics: Where the values go.",
                f"        value: {said}",
                "        count: How many items were seen.",
                '    """',
                "    scaled = value * math.sqrt(count + 1)  # keep the scale comparable",
                f'    metrics["stage{i}/value_{j}"] = value',
                f'    metrics["stage{i}/scaled_{j}"] = scaled',
                "    for k in range(count):",
                "        scaled += k / (count + 1)",
                "    return scaled",
                "",
            ]
        (package / f"module_{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "metrics.yaml").write_text(
        "version: 1\nmetrics:\n  stage0/value_0:\n    semantics:\n      clipping: before\n", encoding="utf-8"
    )


def quietly(command: list[str]) -> None:
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def touch_one(tree: Path) -> None:
    """Change one file the way an edit does: its bytes change (again at every call), so its
    cache entry misses."""
    files = sorted(tree.rglob("*.py"))
    target = files[len(files) // 2]
    target.write_text(target.read_text(encoding="utf-8", errors="replace") + "\n# edited\n", encoding="utf-8")


def comment_registry(registry: Path) -> None:
    """Edit the registry the way a person adds a note: a new comment line (new bytes at every
    call), no change to what it says."""
    with registry.open("a", encoding="utf-8") as stream:
        stream.write(f"# note {time.time_ns()}\n")


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def registry_growth(check: list[str], cache: Path, registry: Path) -> float:
    """How much larger the cache is after five registry edits (each followed by a run) than
    after one, from an empty cache."""
    shutil.rmtree(cache, ignore_errors=True)
    quietly(check)
    sizes = []
    for _ in range(5):
        comment_registry(registry)
        quietly(check)
        sizes.append(folder_bytes(cache))
    return sizes[-1] / sizes[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", help="A tree to check (default: a generated one).")
    parser.add_argument("--registry", help="The registry to check against.")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per measurement (the median is shown).")
    parser.add_argument("--no-growth", action="store_true", help="Skip the four-copies run.")
    args = parser.parse_args()
    byte_compiled()

    with tempfile.TemporaryDirectory(prefix="metriclint-bench-") as scratch:
        work = Path(scratch)
        tree = work / "tree"
        if args.tree:
            shutil.copytree(args.tree, tree, ignore=_IGNORED, symlinks=True)
        else:
            generate(tree)
        # The registry sits at the tree's root, as a project keeps it, so the tree is the project
        # (a registry beside it made the scratch folder the project: its caches and copies too).
        registry_file = tree / "metrics.yaml"
        if args.registry:
            shutil.copyfile(args.registry, registry_file)
        elif not registry_file.is_file():
            quietly([sys.executable, "-m", "metriclint", "init", str(tree), "--no-cache", "-o", str(registry_file)])
        cache = work / "cache"
        registry = ["--registry", str(registry_file), "--cache-dir", str(cache)]
        metriclint = [sys.executable, "-m", "metriclint", "check", str(tree), "-q", *registry]
        audit = [sys.executable, "-m", "metriclint", "audit", str(tree), *registry]
        ruff = [tool("ruff"), "check", "--select", "D", "--exit-zero", str(tree)]
        files = len(list(tree.rglob("*.py")))
        print(f"tree: {args.tree or 'generated'} ({files} .py files), python {sys.version.split()[0]}", flush=True)

        cold = [
            Run("pydoclint", [tool("pydoclint"), "--quiet", str(tree)]),
            Run("floor (read + ast.parse)", [sys.executable, "-c", _FLOOR, str(tree)]),
            Run("ruff --select D --no-cache", [*ruff, "--no-cache"]),
            Run("metriclint cold (--no-cache)", [*metriclint, "--no-cache"]),
        ]
        if not args.no_growth:
            copies = work / "copies"
            for i in range(4):
                shutil.copytree(tree, copies / f"copy{i}", ignore=_IGNORED, symlinks=True)
            cold.append(
                Run("metriclint cold, 4 copies", [sys.executable, "-m", "metriclint", "check", str(copies), "-q", "--no-cache", *registry])
            )
        quietly(metriclint)  # fill the cache
        warm = [
            Run("ruff --select D (warm)", ruff, before=lambda: quietly(ruff)),  # after the edit below, ruff's cache is fresh too
            Run("metriclint warm", metriclint),
            Run("metriclint one file changed", metriclint, before=lambda: touch_one(tree)),
            Run("metriclint registry comment", metriclint, before=lambda: comment_registry(registry_file)),
            Run("metriclint audit warm", audit, before=lambda: quietly(audit)),
        ]
        print(f"\n{'run':32} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
        samples = {**measure(cold, args.repeat), **measure(warm, args.repeat)}
        for name, sample in samples.items():
            print(f"{name:32} {sample.seconds:8.2f} {sample.cpu_seconds:8.2f} {sample.peak_mib:9.1f}")
        growth = registry_growth(metriclint, cache, registry_file)
    s = {name: sample.seconds for name, sample in samples.items()}
    cpu = {name: sample.cpu_seconds for name, sample in samples.items()}
    rows = [  # issue 33's targets for the first four
        ("cold CPU / pydoclint CPU", cpu["metriclint cold (--no-cache)"] / cpu["pydoclint"], 0.45),
        ("cold / pydoclint", s["metriclint cold (--no-cache)"] / s["pydoclint"], 0.3),
        ("warm / ruff warm", s["metriclint warm"] / s["ruff --select D (warm)"], 1.2),
        ("one changed / warm", s["metriclint one file changed"] / s["metriclint warm"], 1.2),
        ("registry comment / warm", s["metriclint registry comment"] / s["metriclint warm"], 2.0),
        ("warm audit / warm check", s["metriclint audit warm"] / s["metriclint warm"], 2.0),
        ("cache, 5 registry edits / 1", growth, 1.2),
        ("peak MiB (cold)", samples["metriclint cold (--no-cache)"].peak_mib, 250.0),
    ]
    if "metriclint cold, 4 copies" in s:
        rows.append(("4 copies / 1 copy (cold)", s["metriclint cold, 4 copies"] / s["metriclint cold (--no-cache)"], 4.4))
    print(f"\n{'target':28} {'measured':>9} {'limit':>7}  ok")
    for name, value, limit in rows:
        print(f"{name:28} {value:9.2f} {limit:7.2f}  {'yes' if value <= limit else 'NO'}")
    print(f"\ncold / floor: {s['metriclint cold (--no-cache)'] / s['floor (read + ast.parse)']:.1f}x wall")


if __name__ == "__main__":
    main()
