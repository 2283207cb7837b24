"""Plant one-line metric bugs in a copy of a real tree and measure how many metriclint finds.

    python bench/plant.py --tree radixark/miles@31f1ca9...=/work/trees/radixark+miles \\
                          --tree NVIDIA/Megatron-LM@d98e8a6...=/work/trees/NVIDIA+Megatron-LM
    python bench/plant.py --tree ... --only clipping --check-batching 3 --json run.json

`--tree` is read as bench/field.py reads it. A tree's plants are the accepted rows of
`bench/plants/OWNER+NAME.tsv` (drawn by `plant_draw.py`, each reviewed by reading the code).
A plant edits one line, checked against the line's hash first: a `flip` rewrites the phrase
`from` at column `col` as `to`; an `insert` puts the comment `# TO` above the line, at its
indentation (the lines below move down one).

The tree is copied once (without a registry or settings of its own, as field.py does). In
each mode, `zero-config` and `draft` (the unedited copy's `init`), the unedited copy is checked
once, warming the cache; then each batch of plants (different files, facets and metrics;
`--alone`: one plant a run) is applied, checked with the warm cache, and restored.
`--check-batching N` also runs each plant of N batches alone and reports any difference.

A plant is `found` when a new finding (absent from the unedited run, lines moved by inserts
accounted for) of a contradiction rule or ML008 sits on the planted line or names it as a
related place, about the plant's facet and metric (its key, a template covering it, or the same
last segment); a new finding there about anything else makes it `off-target`; new findings
away from every plant of a run are collateral. bench/README.md says how the plants were chosen.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, astuple, dataclass, field, replace
from pathlib import Path

from field import CONTRADICTIONS, MODES, REGISTRY, Tree, in_tree, metriclint, metriclint_version, parse_tree, repair, stray_settings, tail

HERE = Path(__file__).resolve().parent
PLANTS = HERE / "plants"
COLUMNS = ("id", "kind", "how", "path", "line", "col", "sha", "from", "to", "key", "decision", "reason")
FACETS = {  # kind -> the facet its words state
    "clipping": "clipping",
    "mean-sum": "reduction",
    "max-mean": "reduction",
    "token-sample": "granularity",
    "gib-gb": "unit",
    "s-ms": "unit",
    "global-rank": "scope",
}
HOWS = ("flip", "insert")
DECISIONS = ("accept", "reject", "doubtful", "todo")
FOUND_RULES = (*CONTRADICTIONS, "ML008")
PLACEHOLDER = re.compile(r"\{[^}]*\}")


@dataclass(frozen=True)
class Plant:
    id: str
    kind: str
    how: str
    path: str
    line: int
    col: int  # where a flip's phrase starts on the line (0-based)
    sha: str  # line_hash of the line as drawn
    phrase: str  # `from`: the words a flip replaces ("-" for an insert)
    to: str  # a flip's new words; an insert's comment, without "# "
    key: str  # the logged metric the text is about
    decision: str
    reason: str

    @property
    def identity(self) -> tuple[str, str, int, int, str, str]:
        return (self.how, self.path, self.line, self.col, self.sha, self.phrase)

    @property
    def facet(self) -> str:
        return FACETS[self.kind]

    def edit(self, lines: list[str]) -> list[str]:
        """The file's lines (with their endings) with this plant in; ValueError if the line changed."""
        if not 0 < self.line <= len(lines) or line_hash(lines[self.line - 1]) != self.sha:
            raise ValueError(f"{self.path}:{self.line} is not the line drawn (hash {self.sha})")
        text = lines[self.line - 1]
        if self.how == "flip":
            end = self.col + len(self.phrase)
            if text[self.col : end] != self.phrase:
                raise ValueError(f"{self.path}:{self.line}:{self.col} does not hold {self.phrase!r}")
            return [*lines[: self.line - 1], text[: self.col] + self.to + text[end:], *lines[self.line :]]
        indent = text[: len(text) - len(text.lstrip())]
        ending = text[len(text.rstrip("\r\n")) :] or "\n"
        return [*lines[: self.line - 1], f"{indent}# {self.to}{ending}", *lines[self.line - 1 :]]

    def moved(self, path: str, line: int) -> int:
        """Where line `line` of `path` in the unedited tree is once this plant is in."""
        return line + 1 if self.how == "insert" and path == self.path and line >= self.line else line


def line_hash(text: str) -> str:
    return hashlib.sha1(text.rstrip("\r\n").encode("utf-8")).hexdigest()[:12]


def plants_file(folder: Path, repo: str) -> Path:
    return folder / f"{repo.replace('/', '+')}.tsv"


def read_plants(path: Path) -> tuple[str, list[Plant]]:
    """The header comment (`repo=... commit=...`) and the rows of a plant list."""
    with path.open(newline="", encoding="utf-8") as handle:
        header = handle.readline().removeprefix("#").strip()
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    plants = []
    for number, row in enumerate(rows, start=3):
        if (
            any(row.get(c) is None for c in COLUMNS)
            or row["kind"] not in FACETS
            or row["how"] not in HOWS
            or row["decision"] not in DECISIONS
        ):
            sys.exit(f"{path}:{number}: bad row {row}")
        plants.append(
            Plant(
                row["id"],
                row["kind"],
                row["how"],
                row["path"],
                int(row["line"]),
                int(row["col"]),
                row["sha"],
                row["from"],
                row["to"],
                row["key"],
                row["decision"],
                row["reason"],
            )
        )
    return header, plants


def write_plants(path: Path, header: str, plants: list[Plant]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["\t".join(COLUMNS)] + ["\t".join(str(value) for value in astuple(p)) for p in plants]
    path.write_text(f"# {header}\n" + "\n".join(rows) + "\n", encoding="utf-8")


@dataclass(frozen=True, order=True)
class Found:
    """A finding, reduced to what tells it apart from another; registry places as `<registry>`."""

    path: str
    line: int
    rule: str
    metric: str
    facet: str
    value: str
    related: tuple[tuple[str, int], ...]
    message: str = field(compare=False)

    def touches(self, path: str, line: int) -> bool:
        return (self.path, self.line) == (path, line) or (path, line) in self.related

    def moved(self, batch: list[Plant]) -> Found:
        def move(path: str, line: int) -> int:
            for plant in batch:
                line = plant.moved(path, line)
            return line

        return replace(self, line=move(self.path, self.line), related=tuple((p, move(p, n)) for p, n in self.related))


def same_metric(found: str, key: str) -> bool:
    """A finding's metric names the plant's key: the same, a template covering it, or the same
    last segment (an alias written without its section)."""

    def norm(text: str) -> str:
        return re.sub(r"[-_ ]", "_", text.lower())

    def covers(template: str, text: str) -> bool:
        return re.fullmatch(".*".join(re.escape(part) for part in PLACEHOLDER.split(norm(template))), norm(text)) is not None

    def last(text: str) -> str | None:  # a last segment with a placeholder names no one metric
        segment = norm(text).rsplit("/", 1)[-1]
        return None if PLACEHOLDER.search(segment) else segment

    return covers(found, key) or covers(key, found) or last(found) == last(key) is not None


def check(copy: Path, registry: Path | None, cache: Path, jobs: int | None) -> tuple[int, set[Found], str]:
    """metriclint's findings on the copy as it is now: exit code, findings, stderr."""
    args = ["check", ".", "--format", "json", "--cache-dir", str(cache)]
    args += ["--registry", str(registry)] if registry else []
    args += ["--jobs", str(jobs)] if jobs else []
    code, out, err, _ = metriclint(args, copy)
    try:
        document = json.loads(out)
    except json.JSONDecodeError:
        return code, set(), err

    def where(path: str) -> str:
        return path if in_tree(path, copy) else REGISTRY

    found = {
        Found(
            where(f["path"]),
            f["line"],
            f["rule"],
            f.get("metric") or "",
            f.get("facet") or "",
            f.get("found") or "",
            tuple((where(r["path"]), r["line"]) for r in f.get("related") or []),
            f["message"],
        )
        for f in document["findings"]
    }
    return code, found, err


@dataclass
class Outcome:
    status: str  # found, off-target, missed, error
    findings: list[Found] = field(default_factory=list)


@dataclass
class Mode:
    """One mode's runs over a tree's plants."""

    name: str
    baseline: int = 0  # findings of the unedited copy
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    collateral: list[list[Found]] = field(default_factory=list)  # per batch
    notes: list[str] = field(default_factory=list)

    def status(self, plant: Plant) -> str:
        return self.outcomes[plant.id].status if plant.id in self.outcomes else "not run"


class Bench:
    """One tree's copy, and its runs with the plants in."""

    def __init__(self, copy: Path, cache: Path, jobs: int | None) -> None:
        self.copy, self.cache, self.jobs = copy, cache, jobs
        self.registry: Path | None = None
        self.base: set[Found] = set()

    def start(self, mode: Mode, draft: Path | None) -> bool:
        """Check the unedited copy (making the draft first in draft mode); False if it cannot run."""
        self.registry = draft
        if draft is not None:
            code, out, err, _ = metriclint(["init", ".", "-o", str(draft), "--force", "--cache-dir", str(self.cache)], self.copy)
            mode.notes.append(f"init: {out.strip()}" if code == 0 else f"init exited {code}: {tail(err)}")
            if code != 0:
                return False
        code, self.base, err = check(self.copy, draft, self.cache, self.jobs)
        if draft is not None and code == 2 and (dropped := repair(draft, err)):
            mode.notes.append(f"dropped the {dropped} draft entries the validator rejected")
            code, self.base, err = check(self.copy, draft, self.cache, self.jobs)
        if code not in (0, 1):
            mode.notes.append(f"the unedited check exited {code}: {tail(err)}")
            return False
        mode.baseline = len(self.base)
        return True

    def run(self, batch: list[Plant]) -> tuple[dict[str, Outcome], list[Found]]:
        """Apply a batch, check, restore; each plant's outcome and the collateral findings."""
        originals = {p.path: (self.copy / p.path).read_bytes() for p in batch}
        try:
            for plant in batch:
                file = self.copy / plant.path
                lines = file.read_bytes().decode("utf-8").splitlines(keepends=True)
                file.write_bytes("".join(plant.edit(lines)).encode("utf-8"))
            code, after, err = check(self.copy, self.registry, self.cache, self.jobs)
        finally:
            for path, data in originals.items():
                (self.copy / path).write_bytes(data)
        if code not in (0, 1):
            return {p.id: Outcome("error", []) for p in batch}, []
        new = after - {f.moved(batch) for f in self.base}
        outcomes, near = {}, set()
        for plant in batch:
            here = sorted(f for f in new if f.touches(plant.path, plant.line))
            hits = [f for f in here if f.rule in FOUND_RULES and f.facet == plant.facet and same_metric(f.metric, plant.key)]
            outcomes[plant.id] = Outcome("found" if hits else "off-target" if here else "missed", hits or here)
            near.update(here)
        return outcomes, sorted(new - near)


def batches(plants: list[Plant], alone: bool) -> list[list[Plant]]:
    """Plants in runs of their own files, facets and metrics (each alone with `alone`)."""
    runs: list[list[Plant]] = []
    for plant in plants:
        home = (
            None
            if alone
            else next(
                (
                    run
                    for run in runs
                    if all(p.path != plant.path and p.facet != plant.facet and not same_metric(p.key, plant.key) for p in run)
                ),
                None,
            )
        )
        if home is None:
            runs.append([plant])
        else:
            home.append(plant)
    return runs


def copy_tree(tree: Tree, scratch: Path) -> Path:
    """A copy of the tree to edit, without the settings that would give zero-config a registry."""
    root = tree.path.resolve()
    stray = {p.name for p in stray_settings(root) if p.parent == root}
    copy = scratch / "tree"
    shutil.copytree(root, copy, symlinks=True, ignore=lambda d, n: [x for x in n if Path(d) == root and x in stray])
    return copy


def percent(found: int, total: int) -> str:
    return f"{found}/{total}" + (f" ({100 * found / total:.0f}%)" if total else "")


Scored = list[tuple[Plant, dict[str, str]]]  # each plant with its status per mode


def table(scored: Scored, modes: list[str], collateral: dict[str, int]) -> None:
    """Found / planted per kind and how, in each mode; then the collateral findings."""
    print(f"   {'kind':13} {'how':7} {'n':>3}  " + "  ".join(f"{m:>13}" for m in modes))
    for kind, how in [*sorted({(p.kind, p.how) for p, _ in scored}), ("all", "")]:
        chosen = [statuses for p, statuses in scored if kind == "all" or (p.kind, p.how) == (kind, how)]
        cells = [percent(sum(s[m] == "found" for s in chosen), len(chosen)) for m in modes]
        print(f"   {kind:13} {how:7} {len(chosen):3}  " + "  ".join(f"{c:>13}" for c in cells))
    print(f"   {'collateral':13} {'':7} {'':3}  " + "  ".join(f"{collateral[m]:>13}" for m in modes))


def show(tree: Tree, counts: Counter[str], plants: list[Plant], modes: list[Mode]) -> Scored:
    """Print a tree's table and its misses; return its plants' statuses for the overall table."""
    drawn = ", ".join(f"{n} {d}" for d, n in sorted(counts.items()))
    print(f"\n== {tree.repo}@{tree.commit[:10]}: {sum(counts.values())} drawn ({drawn}); {len(plants)} planted")
    for mode in modes:
        print("".join(f"   {mode.name}: {note}\n" for note in mode.notes), end="")
    scored = [(p, {m.name: m.status(p) for m in modes}) for p in plants]
    table(scored, [m.name for m in modes], {m.name: sum(map(len, m.collateral)) for m in modes})
    for plant, statuses in scored:
        if any(s != "found" for s in statuses.values()):
            edit = f"{plant.phrase!r} -> {plant.to!r}" if plant.how == "flip" else f"+ '# {plant.to}'"
            print(
                f"   miss {plant.id} {plant.kind}/{plant.how} {plant.path}:{plant.line} [{plant.key}] {edit}: "
                + ", ".join(f"{m} {s}" for m, s in statuses.items() if s != "found")
            )
            for mode in modes:
                for f in mode.outcomes[plant.id].findings if mode.status(plant) == "off-target" else []:
                    print(f"        {mode.name}: {f.rule} {f.metric} {f.facet}={f.value} at {f.path}:{f.line}")
    for mode in modes:
        for f in (f for run in mode.collateral for f in run):
            print(f"   collateral {mode.name}: {f.path}:{f.line}: {f.rule} {f.message}")
    return scored


def differences(bench: Bench, mode: Mode, runs: list[list[Plant]], count: int) -> list[str]:
    """Run each plant of the first `count` batches of several alone: where do the answers differ?"""
    found = []
    for number, batch in [(n, run) for n, run in enumerate(runs) if len(run) > 1][:count]:
        collateral: set[Found] = set()
        for plant in batch:
            outcomes, alone = bench.run([plant])
            collateral.update(alone)
            if outcomes[plant.id] != mode.outcomes[plant.id]:
                found.append(f"{mode.name} {plant.id}: {mode.status(plant)} in a batch, {outcomes[plant.id].status} alone")
        if collateral != set(mode.collateral[number]):
            found.append(f"{mode.name} batch {number}: {len(mode.collateral[number])} collateral, {len(collateral)} when alone")
    return found


def broken(plant: Plant, root: Path) -> str | None:
    """Why a plant cannot go in (its line changed, or the edit would not parse), or None."""
    try:
        edited = "".join(plant.edit((root / plant.path).read_bytes().decode("utf-8").splitlines(keepends=True)))
        if plant.path.endswith(".py"):
            ast.parse(edited)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as error:
        return f"{plant.id} {plant.path}:{plant.line}: {error}"
    return None


def run_tree(tree: Tree, plants: list[Plant], options: argparse.Namespace) -> tuple[list[Mode], list[list[Plant]], list[str]]:
    """Every mode's runs over a tree; the batches; the differences the batching check saw."""
    runs, modes, mismatches = batches(plants, options.alone), [], []
    with tempfile.TemporaryDirectory(prefix="metriclint-plant-") as scratch:
        bench = Bench(copy_tree(tree, Path(scratch)), options.cache_dir or Path(scratch) / "cache", options.jobs)
        for name in options.mode or MODES:
            mode = Mode(name)
            modes.append(mode)
            if bench.start(mode, Path(scratch) / "draft.yaml" if name == "draft" else None):
                for batch in runs:
                    outcomes, collateral = bench.run(batch)
                    mode.outcomes.update(outcomes)
                    mode.collateral.append(collateral)
                mismatches += differences(bench, mode, runs, options.check_batching)
    return modes, runs, mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tree", action="append", required=True, metavar="REPO@COMMIT=PATH")
    parser.add_argument("--plants", type=Path, default=PLANTS, help="the folder of plant lists (OWNER+NAME.tsv)")
    parser.add_argument("--only", choices=sorted(FACETS), action="append", help="only plants of this kind (repeatable)")
    parser.add_argument("--mode", choices=MODES, action="append", help="run only this mode (repeatable; default: both)")
    parser.add_argument("--alone", action="store_true", help="one plant a run, no batches")
    parser.add_argument("--check-batching", type=int, default=0, metavar="N", help="also run the plants of N batches alone")
    parser.add_argument("--cache-dir", type=Path, help="metriclint's cache (default: a temporary folder)")
    parser.add_argument("--jobs", type=int, help="passed to metriclint")
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the whole run as JSON")
    options = parser.parse_args()
    version = metriclint_version()
    print(f"metriclint {version}")
    report: list[dict[str, object]] = []
    everything: Scored = []
    collateral: Counter[str] = Counter()
    for spec in options.tree:
        tree = parse_tree(spec)
        header, every = read_plants(plants_file(options.plants, tree.repo))
        if tree.commit != "-" and f"commit={tree.commit}" not in header.split():
            sys.exit(f"{plants_file(options.plants, tree.repo)} was drawn at another commit ({header})")
        plants = [p for p in every if p.decision == "accept" and (not options.only or p.kind in options.only)]
        if problems := [why for p in plants if (why := broken(p, tree.path))]:
            sys.exit("plants that no longer fit the tree:\n  " + "\n  ".join(problems))
        modes, runs, mismatches = run_tree(tree, plants, options)
        everything += show(tree, Counter(p.decision for p in every), plants, modes)
        collateral.update({m.name: sum(map(len, m.collateral)) for m in modes})
        if options.check_batching:
            print(f"   batching check: {len(mismatches)} differences" + "".join(f"\n     {m}" for m in mismatches))
        report.append(
            {
                "repo": tree.repo,
                "commit": tree.commit,
                "decisions": dict(Counter(p.decision for p in every)),
                "runs_per_mode": len(runs),
                "plants": [asdict(p) for p in plants],
                "batching_differences": mismatches,
                "modes": [asdict(m) for m in modes],
            }
        )
    if len(options.tree) > 1:
        print("\n== all trees")
        table(everything, list(options.mode or MODES), collateral)
    if options.json:
        options.json.write_text(json.dumps({"metriclint": version, "trees": report}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
