"""Time metriclint on generated trees of growing size and print each step's ratio against
linear growth (issue 19: every step within 2x of linear).

    python bench/scaling.py                         # every scenario at the issue's sizes
    python bench/scaling.py registry docstrings     # some of them
    python bench/scaling.py --scale 0.1             # every size a tenth: a quick look

Scenarios (sizes in metrics, docstrings or bytes):

- registry:   a registry of N metrics, each logged by a function whose docstring and comment
              describe it, and a docs page listing them
- docstrings: N docstrings about one metric, one of which disagrees with the rest
- js:         a minified (one-line) JS tooltip table of N bytes
- json:       a one-line JSON dict of N bytes, mapping keys to texts
- python:     one Python file of N bytes

Each size is checked cold (an empty cache) and warm (the same run again). A step's ratio
is the growth of the run's CPU seconds (its own and its workers'), net of the fixed cost
(interpreter, imports, built-in rules, workers: the same scenario at size 0, the median of
three runs), over the growth of the size: 1.0 is linear, and 2.0 the most the issue allows.
Peak memory is the largest process's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from run import Run, Sample, measure


def _registry(root: Path, n: int) -> None:
    """N metrics in 100 sections, each logged by its own function in files of 100, each with
    an alias written with spaces."""
    entries = ["version: 1", "metrics:" if n else "metrics: {}"]  # `metrics:` alone is null, which the registry refuses
    for i in range(n):
        entries += [
            f"  sec{i % 100}/metric_{i}:",
            f'    aliases: [metric_alias_{i}, "batch {i} loss vs samples"]',  # one with spaces, as TensorBoard tags have
            f"    description: Mean of the loss per token in batch {i}.",
            "    semantics:",
            "      reduction: mean",
        ]
    (root / "metrics.yaml").write_text("\n".join(entries) + "\n", encoding="utf-8")
    if n > 50_000:  # its registry (18 MB at 100k) is past the default max-file-size of 16 MiB
        (root / "metriclint.toml").write_text("max-file-size = 67_108_864\n", encoding="utf-8")
    for start in range(0, n, 100):
        lines = []
        for i in range(start, min(n, start + 100)):
            lines += [
                f"def log_{i}(metrics: dict, metric_alias_{i}: float) -> None:",
                '    """Record one value.',
                "",
                "    Args:",
                f"        metric_alias_{i}: The mean loss per token.",
                '    """',
                f'    metrics["sec{i % 100}/metric_{i}"] = metric_alias_{i}  # averaged over tokens',
                "",
            ]
        _write(root / f"pkg{start // 10_000}" / f"logging_{start}.py", lines)
    rows = ["# Metrics", "", "| Metric | Meaning |", "|---|---|"]
    rows += [f"| `sec{i % 100}/metric_{i}` | Mean loss per token. |" for i in range(0, n, 10)]
    _write(root / "docs" / "metrics.md", rows)


def _docstrings(root: Path, n: int) -> None:
    """N functions documenting the value they log as train/grad_norm; the first disagrees."""
    (root / "metrics.yaml").write_text("version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n", encoding="utf-8")
    for start in range(0, n, 100):
        lines = []
        for i in range(start, min(n, start + 100)):
            said = "after" if i == 0 else "before"
            lines += [
                f"def record_{i}(out: dict, grad_norm: float) -> None:",
                f'    """Args:\n        grad_norm: Gradient norm {said} clipping.\n    """',
                '    out["train/grad_norm"] = grad_norm',
                "",
            ]
        _write(root / f"pkg{start // 10_000}" / f"record_{start}.py", lines)


def _entries(size: int) -> tuple[list[tuple[str, str]], list[str]]:
    """Key -> text pairs filling about `size` bytes, and the keys (one in five) the registry lists."""
    pairs = [(f"train/metric_{i}", f"Mean of the loss per token, batch {i}.") for i in range(size // 60)]
    return pairs, [key for i, (key, _) in enumerate(pairs) if i % 5 == 0]


def _known(root: Path, keys: list[str]) -> None:
    lines = ["version: 1", "metrics:"] + [f"  {key}:\n    semantics:\n      reduction: mean" for key in keys]
    (root / "metrics.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _js(root: Path, size: int) -> None:
    pairs, keys = _entries(size)
    body = ",".join(f"{json.dumps(key)}:{json.dumps(text)}" for key, text in pairs)
    _write(root / "static" / "tooltips.min.js", [f"export const METRIC_DESCRIPTIONS={{{body}}};"])
    _known(root, keys)


def _json(root: Path, size: int) -> None:
    pairs, keys = _entries(size)
    _write(root / "static" / "tooltips.json", [json.dumps(dict(pairs), separators=(",", ":"))])
    _known(root, keys)


def _python(root: Path, size: int) -> None:
    """One module of functions that each document and log a value, about `size` bytes."""
    lines = ["import math", ""]
    for i in range(size // 293):  # about 293 bytes a function
        lines += [
            f"def step_{i}(metrics: dict, value: float, count: int) -> float:",
            f'    """Update the metrics of step {i}.\n\n    Args:\n        value: The mean loss per token.\n    """',
            "    scaled = value * math.sqrt(count + 1)  # keep the scale comparable",
            f'    metrics["big/value_{i % 1000}"] = value',
            "    return scaled",
            "",
        ]
    _write(root / "big.py", lines)
    _known(root, ["big/value_0"])


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


SCENARIOS: dict[str, tuple[Callable[[Path, int], None], tuple[int, ...], str]] = {
    "registry": (_registry, (1_000, 10_000, 100_000), "metrics"),
    "docstrings": (_docstrings, (1_000, 3_000, 10_000), "docstrings"),
    "js": (_js, (1_000_000, 10_000_000), "bytes"),
    "json": (_json, (500_000, 5_000_000), "bytes"),
    "python": (_python, (1_600_000, 16_000_000), "bytes"),
}


def timed(tree: Path, repeat: int) -> tuple[Sample, Sample]:
    """The cold (empty cache) and warm (cache filled by the cold run) check of `tree`."""
    cache = tree / ".metriclint_cache"
    command = [sys.executable, "-m", "metriclint", "check", str(tree), "-q", "--exit-zero"]
    cold = Run("cold", command, before=lambda: shutil.rmtree(cache, ignore_errors=True))
    samples = measure([cold], repeat)
    samples |= measure([Run("warm", command)], repeat)
    return samples["cold"], samples["warm"]


def scenario(name: str, scale: float, repeat: int) -> None:
    generate, sizes, unit = SCENARIOS[name]
    print(f"\n{name} ({unit})")
    print(f"{'size':>10} {'cold s':>7} {'CPU s':>7} {'ratio':>6} {'warm s':>7} {'CPU s':>7} {'ratio':>6} {'peak MiB':>9}")
    rows: list[tuple[int, Sample, Sample]] = []
    for size in (0, *(int(s * scale) for s in sizes)):
        with tempfile.TemporaryDirectory(prefix=f"metriclint-scaling-{name}-") as scratch:
            tree = Path(scratch)
            generate(tree, size)
            cold, warm = timed(tree, max(repeat, 3) if size == 0 else repeat)  # the base of every ratio
        rows.append((size, cold, warm))
        cells = []
        for sample, ratio in ((cold, _ratio(rows, lambda r: r[1])), (warm, _ratio(rows, lambda r: r[2]))):
            cells.append(f"{sample.seconds:7.2f} {sample.cpu_seconds:7.2f} " + (f"{ratio:6.2f}" if ratio is not None else " " * 6))
        shown = "(empty)" if size == 0 else str(size)
        print(f"{shown:>10} {' '.join(cells)} {max(cold.peak_mib, warm.peak_mib):9.1f}", flush=True)


def _ratio(rows: list[tuple[int, Sample, Sample]], pick: Callable[[tuple[int, Sample, Sample]], Sample]) -> float | None:
    """The last step's growth in CPU seconds, net of the size-0 run's, over its growth in size
    (None for the first two rows). CPU seconds, since wall time on a shared machine drifts
    with the load more than they do."""
    if len(rows) < 3:
        return None
    base = pick(rows[0]).cpu_seconds
    (size_a, *_), (size_b, *_) = rows[-2], rows[-1]
    before, after = pick(rows[-2]).cpu_seconds - base, pick(rows[-1]).cpu_seconds - base
    return (after / max(before, 0.05)) / (size_b / size_a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="*", help=f"Which to run, of {', '.join(SCENARIOS)} (default: all).")
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply every size by this.")
    parser.add_argument("--repeat", type=int, default=1, help="Runs per measurement (the median is shown).")
    args = parser.parse_args()
    unknown = set(args.scenarios) - SCENARIOS.keys()
    if unknown:
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}; choose from {', '.join(SCENARIOS)}")
    print(f"python {sys.version.split()[0]}; ratio: CPU time growth net of the size-0 run / size growth (1.0 = linear)")
    for name in args.scenarios or SCENARIOS:
        scenario(name, args.scale, args.repeat)


if __name__ == "__main__":
    main()
