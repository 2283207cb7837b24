"""How much of what a real tree logs metriclint sees: its inventory and its `init` draft against
keys labelled by reading the code (bench/inventory/OWNER+NAME.tsv, see its README).

    python bench/inventory.py --tree radixark/miles@31f1ca9...=/work/trees/radixark+miles [--show missed,invented,unjudged]

For each tree it runs `metriclint audit --format json` zero-config (as bench/field.py runs
`check`: a registry or a metriclint config in the tree is left out of a copy) and `metriclint
init`, then prints, per tree:

- labelled: the distinct keys the labels say the code logs;
- found: those the inventory has, as the same key or template (placeholders' names aside), or
  as keys a labelled template covers; `as template`: covered only by a broader template the
  inventory has (`perf/{name}_time` for `perf/rollout_time`), not counted as found;
- missed: the rest;
- invented: keys the inventory says the code logs that a label row judges `not-logged`;
- unjudged: inventoried keys that match no label row either way (to read and label); a
  template found that a labelled template stands for (`narrower`) is judged by that label;
- drafted: the labelled keys `init` drafts, by the same matching.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from field import Tree, metriclint, parse_tree, stray_settings, tail

from metriclint.base import keys

LABELS = Path(__file__).resolve().parent / "inventory"
SHOWN = ("missed", "invented", "unjudged", "templates")


@dataclass(frozen=True)
class Label:
    key: str
    status: str  # logged | not-logged
    path: str
    line: int
    sink: str


@dataclass
class Score:
    tree: Tree
    labelled: list[Label]
    found: list[Label] = field(default_factory=list)
    templates: list[tuple[Label, str]] = field(default_factory=list)
    missed: list[Label] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)
    unjudged: list[tuple[str, str]] = field(default_factory=list)  # key, where it is logged
    drafted: list[Label] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_labels(tree: Tree, folder: Path) -> list[Label]:
    path = folder / (tree.repo.replace("/", "+", 1) + ".tsv")
    if not path.is_file():
        sys.exit(f"{path}: no labels for {tree.repo}")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [Label(r["key"], r["status"], r["path"], int(r["line"] or 0), r["sink"]) for r in rows]


def matches(label: str, found: str) -> bool:
    """The same series, or a labelled template that covers a key found written out."""
    return keys.shape(label) == keys.shape(found) or (keys.is_template(label) and not keys.is_template(found) and keys.covers(label, found))


def broader(label: str, found: str) -> bool:
    """A template found that covers a key the labels write out, and says something of it."""
    return keys.is_template(found) and not keys.is_template(label) and keys.covers(found, label) and not keys.too_generic(found)


def narrower(label: str, found: str) -> bool:
    """A template found that a labelled template stands for, its placeholders read as any text,
    sections included (`{env_id}_rollout/count` of a label `{env_id}_{metric}`): the labelled
    series, read more closely. It is judged by the label, but does not make the label found."""
    if not (keys.is_template(label) and keys.is_template(found)):
        return False
    return re.fullmatch(".*".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", label)), found) is not None


def inventory(checked: Path, cache: Path) -> tuple[dict[str, str], list[str], str]:
    """The keys the code logs (each with where it is first logged), as the audit lists them."""
    code, out, err, _ = metriclint(["audit", ".", "--format", "json", "--cache-dir", str(cache)], checked)
    try:
        document = json.loads(out)
    except json.JSONDecodeError:
        return {}, [], f"audit exit {code}, no JSON; {tail(err)}"
    places = {m["key"]: [p for p in m["logged"] if not p.get("test")] for m in document["metrics"]}  # a test's keys are what it expects
    logged = {key: "{path}:{line}".format(**found[0]) for key, found in places.items() if found}
    with tempfile.TemporaryDirectory() as folder:
        draft = Path(folder) / "metrics.yaml"
        code, _, err, _ = metriclint(["init", ".", "-o", str(draft), "--force", "--cache-dir", str(cache)], checked)
        drafted = list((yaml.safe_load(draft.read_text(encoding="utf-8")) or {}).get("metrics") or {}) if draft.is_file() else []
    return logged, drafted, "" if drafted or code == 0 else f"init exit {code}; {tail(err)}"


def score(tree: Tree, labels: list[Label], logged: dict[str, str], drafted: list[str]) -> Score:
    logged_labels = list({label.key: label for label in labels if label.status == "logged"}.values())
    result = Score(tree, logged_labels)
    for label in logged_labels:
        if any(matches(label.key, key) for key in logged):
            result.found.append(label)
        else:
            wider = next((key for key in logged if broader(label.key, key)), None)
            (result.templates.append((label, wider)) if wider else result.missed.append(label))
        if any(matches(label.key, key) for key in drafted):
            result.drafted.append(label)
    judged_not = [label.key for label in labels if label.status == "not-logged"]
    for key, where in sorted(logged.items()):
        if any(matches(label.key, key) or broader(label.key, key) or matches(key, label.key) for label in logged_labels):
            continue
        if any(keys.shape(key) == keys.shape(other) for other in judged_not):
            result.invented.append(key)
        elif not any(narrower(label.key, key) for label in logged_labels):
            result.unjudged.append((key, where))
    return result


def run(tree: Tree, labels: Path, cache: Path) -> Score:
    stray = stray_settings(tree.path)
    with tempfile.TemporaryDirectory() as scratch:
        checked = tree.path
        if stray:  # a zero-config run must not pick up the tree's own settings
            checked = Path(scratch) / "tree"
            shutil.copytree(tree.path, checked, symlinks=True, ignore=shutil.ignore_patterns("metrics.yaml", "metriclint.toml"))
        logged, drafted, note = inventory(checked, cache)
    result = score(tree, read_labels(tree, labels), logged, drafted)
    result.notes += [note] if note else []
    return result


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def show(result: Score, shown: set[str]) -> None:
    total = len(result.labelled)
    print(f"\n{result.tree.repo}@{result.tree.commit[:9]}")
    print(
        f"  labelled {total}; found {percent(len(result.found), total)}; as template {len(result.templates)}; missed {len(result.missed)}"
    )
    print(f"  invented {len(result.invented)}; unjudged {len(result.unjudged)}; drafted {percent(len(result.drafted), total)}")
    for note in result.notes:
        print(f"  note: {note}")
    if "missed" in shown:
        for label in result.missed:
            print(f"    missed    {label.key}\t{label.path}:{label.line}\t{label.sink}")
    if "templates" in shown:
        for label, wider in result.templates:
            print(f"    template  {label.key}\t{label.path}:{label.line}\tfound as {wider}")
    if "invented" in shown:
        for key in result.invented:
            print(f"    invented  {key}")
    if "unjudged" in shown:
        for key, where in result.unjudged:
            print(f"    unjudged  {key}\t{where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tree", action="append", required=True, help="REPO@COMMIT=PATH (repeatable)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="the folder of label files")
    parser.add_argument("--cache-dir", type=Path, help="metriclint's cache (default: a temporary folder)")
    parser.add_argument("--show", default="", help=f"comma-separated: {', '.join(SHOWN)}")
    parser.add_argument("--json", type=Path, help="write the scores here")
    args = parser.parse_args()
    shown = {part for part in args.show.split(",") if part}
    with tempfile.TemporaryDirectory() as scratch:
        cache = args.cache_dir or Path(scratch) / "cache"
        results = [run(parse_tree(spec), args.labels, cache) for spec in args.tree]
    for result in results:
        show(result, shown)
    if args.json:
        args.json.write_text(
            json.dumps(
                [
                    {
                        "repo": r.tree.repo,
                        "commit": r.tree.commit,
                        "labelled": len(r.labelled),
                        "found": len(r.found),
                        "templates": len(r.templates),
                        "missed": [label.key for label in r.missed],
                        "invented": r.invented,
                        "unjudged": [k for k, _ in r.unjudged],
                        "drafted": len(r.drafted),
                    }
                    for r in results
                ],
                indent=1,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
