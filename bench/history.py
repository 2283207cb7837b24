"""Recall on metric bugs the projects really fixed: run metriclint at each fix's parent and at the fix.

    python bench/history.py --mirrors /work/.mirror [--only 6c5e4cdc5] [--work /tmp/history] \\
                            [--cache-dir /tmp/history-cache] [--keep]

Each row of `bench/history.tsv` (tab-separated, with a header: the columns of `COLUMNS`) is one
commit that fixed what a metric means or how it is described. For each row this script extracts
`paths` (space-separated folders or files: enough that the metric's code and texts are both
inside) at the parent and at the fix from a bare mirror, `MIRRORS/OWNER+NAME` (or its `repo`
folder), and runs `python -m metriclint check . --format json` in each, zero-config, then with
`bench/history/<fix_commit>.yaml` as the registry when that file exists (a registry stating what
the fix established).

A contradiction (ML001, ML002, ML003, ML006, ML007) is *on the bug* when one of its places, its
own or a related one, lies on a line the fix changed: a line it removed or rewrote, at the
parent; a line it wrote, at the fix (`git diff -U0` of the row's paths; a pure insertion counts
the line before and after it; a finding in the row's registry is written `<registry>:LINE`). The row is found when the parent has such a finding, and silent
after the fix when the fix has none. Each run prints the findings on the bug, then what it
measured beside what the row records, and exits 1 if they disagree, so a re-run checks the table.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from field import CONTRADICTIONS, metriclint

COLUMNS = (
    "repo",
    "fix_commit",
    "parent_commit",
    "kind",
    "paths",
    "found_zero_config",
    "found_with_registry",
    "silent_after_fix",
    "reason",
)
HERE = Path(__file__).resolve().parent
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)
Lines = dict[str, set[int]]  # path -> the lines the fix touched there
REGISTRY = "<registry>"  # a finding in the row's registry, wherever the checkout and the work folder lie


@dataclass(frozen=True)
class Row:
    repo: str
    fix: str
    parent: str
    paths: list[str]
    found_zero_config: str
    found_with_registry: str
    silent_after_fix: str


def read_rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    for number, row in enumerate(rows, start=2):
        if any(row.get(c) is None for c in COLUMNS):
            sys.exit(f"{path}:{number}: a row needs the columns {', '.join(COLUMNS)}")
    return [
        Row(
            r["repo"],
            r["fix_commit"],
            r["parent_commit"],
            r["paths"].split(),
            r["found_zero_config"],
            r["found_with_registry"],
            r["silent_after_fix"],
        )
        for r in rows
    ]


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, text=True, check=True).stdout


def mirror_of(mirrors: Path, repo: str) -> Path:
    folder = mirrors / repo.replace("/", "+", 1)
    return folder / "repo" if (folder / "repo").is_dir() else folder


def extract(mirror: Path, commit: str, paths: list[str], into: Path) -> None:
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(mirror), "archive", commit, "--", *paths], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def touched(mirror: Path, row: Row) -> tuple[Lines, Lines]:
    """The lines the fix changed: at the parent (removed or rewritten) and at the fix (written)."""
    before: Lines = {}
    after: Lines = {}
    diff = git(mirror, "diff", "-U0", "--no-renames", row.parent, row.fix, "--", *row.paths)
    for part in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
        old = re.search(r"^--- (?:a/(.*)|/dev/null)$", part, re.M)
        new = re.search(r"^\+\+\+ (?:b/(.*)|/dev/null)$", part, re.M)
        for hunk in HUNK.finditer(part):
            start, count, begin, length = (int(g) if g is not None else 1 for g in hunk.groups())
            if old and old.group(1):
                before.setdefault(old.group(1), set()).update(span(start, count))
            if new and new.group(1):
                after.setdefault(new.group(1), set()).update(span(begin, length))
    return before, after


def span(start: int, count: int) -> range:
    """A hunk's lines; an empty side (a pure insertion or deletion) sits between two lines: both count."""
    return range(start, start + count) if count else range(start, start + 2)


def on_bug(tree: Path, registry: Path | None, lines: Lines, cache: Path) -> list[str]:
    """The contradictions with a place on a touched line, as `RULE path:line metric facet`."""
    args = ["check", ".", "--format", "json", "--cache-dir", str(cache)] + (["--registry", str(registry)] if registry else [])
    code, out, err, _ = metriclint(args, tree)
    try:
        findings = json.loads(out)["findings"]
    except (json.JSONDecodeError, KeyError):
        sys.exit(f"metriclint exited {code} in {tree} with no JSON report: {err.strip()[-400:]}")
    hits = []
    for f in findings:
        places = [(f["path"], f["line"])] + [(r["path"], r["line"]) for r in f.get("related") or []]
        if f["rule"] in CONTRADICTIONS and any(line in lines.get(path, ()) for path, line in places):
            where = REGISTRY if registry is not None and (tree / f["path"]).resolve() == registry.resolve() else f["path"]
            hits.append(f"{f['rule']} {where}:{f['line']} {f.get('metric') or ''} {f.get('facet') or ''}={f.get('found') or ''}")
    return hits


def verdict(hits: list[str]) -> str:
    return hits[0].split(" ")[0] + " " + hits[0].split(" ")[1] if hits else "missed"


def measure(row: Row, mirrors: Path, work: Path, cache: Path, keep: bool) -> tuple[str, str, str]:
    mirror = mirror_of(mirrors, row.repo)
    before, after = touched(mirror, row)
    registry = HERE / "history" / f"{row.fix}.yaml"
    registry_or_none = registry if registry.is_file() else None
    base = work / row.repo.replace("/", "+", 1) / row.fix[:12]
    parent, fixed = base / "parent", base / "fix"
    extract(mirror, row.parent, row.paths, parent)
    extract(mirror, row.fix, row.paths, fixed)
    zero = on_bug(parent, None, before, cache)
    with_registry = on_bug(parent, registry_or_none, before, cache) if registry_or_none else []
    after_fix = on_bug(fixed, None, after, cache) + (on_bug(fixed, registry_or_none, after, cache) if registry_or_none else [])
    for label, hits in (("parent", zero), ("parent+registry", with_registry), ("fix", after_fix)):
        for hit in hits:
            print(f"    {label}: {hit}")
    if not keep:
        shutil.rmtree(base)
    return verdict(zero), verdict(with_registry) if registry_or_none else "-", "no" if after_fix else "yes"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mirrors", type=Path, required=True, help="folder of bare mirrors named OWNER+NAME")
    parser.add_argument("--tsv", type=Path, default=HERE / "history.tsv")
    parser.add_argument("--work", type=Path, default=Path("/tmp/history"), help="where the commits are extracted")
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/history-cache"))
    parser.add_argument("--only", action="append", help="a fix commit (prefix) to run; repeatable")
    parser.add_argument("--keep", action="store_true", help="keep the extracted trees")
    options = parser.parse_args()
    disagree = 0
    for row in read_rows(options.tsv):
        if options.only and not any(row.fix.startswith(prefix) for prefix in options.only):
            continue
        print(f"== {row.repo} {row.fix[:12]} (parent {row.parent[:12]})")
        got = measure(row, options.mirrors, options.work, options.cache_dir, options.keep)
        recorded = (row.found_zero_config, row.found_with_registry, row.silent_after_fix)
        same = [g.split(" ")[0] == r.split(" ")[0] for g, r in zip(got, recorded)]
        disagree += not all(same)
        print(
            f"   zero-config {got[0]}, with registry {got[1]}, silent after fix {got[2]}"
            + ("" if all(same) else f"  (recorded: {', '.join(recorded)})")
        )
    sys.exit(1 if disagree else 0)


if __name__ == "__main__":
    main()
