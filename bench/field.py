"""Run metriclint on real trees as a user would, and measure its precision against verdicts.

    python bench/field.py --tree radixark/miles@31f1ca9...=/work/trees/radixark+miles \\
                          --tree NVIDIA/Megatron-LM@d98e8a6...=/work/trees/NVIDIA+Megatron-LM
    python bench/field.py --tree ... --only-unjudged        # what is left to judge
    python bench/field.py --tree ... --json run.json        # the whole run, for a later diff

Each `--tree` is `REPO@COMMIT=PATH`; `REPO=PATH` and a bare `PATH` work too (the repository is
then the folder's name with its first "+" read as "/", the commit "-"). For each tree, in two
modes:

- `zero-config`: `metriclint check . --format json` in the tree, with no registry and no
  config. A `metrics.yaml` at the tree's root, or a `metriclint.toml` / `[tool.metriclint]`
  table from the tree upward, would be picked up: it is reported, and the run uses a copy of
  the tree without it.
- `draft`: `metriclint init . -o DRAFT --force` (DRAFT in a temporary folder), then
  `metriclint check . --registry DRAFT --format json`. If that check rejects the draft (exit 2
  with `DRAFT:LINE:COL: message` lines), the rejected entries are dropped, as a user would, and
  the check runs again; the summary then shows the exit as `2->N`.

metriclint runs as `python -m metriclint` with this interpreter, its cache in a temporary folder
(`--cache-dir` to choose one); the trees are never written to. For each tree and mode it prints
the exit code, the files read, the findings by rule, the run time, and every contradiction
(ML001, ML002, ML003, ML006, ML007) with both sides: its own place and phrase, each `related`
place and text, and the source line at each place, read from the tree.

Verdicts come from a tab-separated file (`--verdicts`, default `bench/verdicts.tsv` next to this
script) with a header line and the columns of `COLUMNS`. A finding is matched by repo, path,
line, rule, metric, facet and `related` (its other sides as `path:line`, joined by ";"). A place
in the draft registry, whose lines move whenever the draft does, is `<registry>:FIELD` (the YAML
key on that line: description, a facet name) with line 0. A match prefers a row
with the same commit and mode, else any row with the same key (so a verdict carries over to
another commit where the finding sits on the same line). `verdict` is true, false or
debatable; `mechanism` labels why a false or debatable one is wrong, so they can be grouped;
`reason` is one line in the judge's own words (never text copied from the tree).

Precision = true / (true + false + debatable), over the judged contradictions; unjudged ones
are counted apart. Verdict rows for a (repo, commit, mode) that was run but that match no
finding are listed as stale.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from metriclint.base.toml import tomllib

CONTRADICTIONS = ("ML001", "ML002", "ML003", "ML006", "ML007")
MODES = ("zero-config", "draft")
VERDICTS = ("true", "false", "debatable")
COLUMNS = ("repo", "commit", "mode", "path", "line", "rule", "metric", "facet", "related", "verdict", "mechanism", "reason")
REGISTRY = "<registry>"
DEFAULT_VERDICTS = Path(__file__).resolve().parent / "verdicts.tsv"


@dataclass(frozen=True)
class Tree:
    repo: str
    commit: str
    path: Path


@dataclass
class Verdict:
    repo: str
    commit: str
    mode: str
    path: str
    line: int
    rule: str
    metric: str
    facet: str
    related: str
    verdict: str
    mechanism: str
    reason: str

    @property
    def key(self) -> tuple[str, str, int, str, str, str, str]:
        return (self.repo, self.path, self.line, self.rule, self.metric, self.facet, self.related)


@dataclass
class Finding:
    rule: str
    path: str
    line: int
    column: int
    metric: str
    facet: str
    found: str
    message: str
    related: list[dict[str, Any]]
    related_key: str
    key_path: str  # path and line for matching verdicts (see place)
    key_line: int
    verdict: str = "unjudged"
    mechanism: str = ""
    reason: str = ""
    inherited: bool = False  # judged at another commit or mode


@dataclass
class Run:
    repo: str
    commit: str
    mode: str
    exit_code: int
    seconds: float
    files: int
    by_rule: dict[str, int]
    notes: list[str]
    findings: list[Finding] = field(default_factory=list)
    rejected_draft: int = 0  # draft entries the registry validator rejected, dropped before this run
    stderr: str = ""

    def tally(self) -> Counter[str]:
        return Counter(f.verdict for f in self.findings)


def parse_tree(spec: str) -> Tree:
    """`REPO@COMMIT=PATH`, `REPO=PATH` or `PATH`."""
    name, sep, path = spec.rpartition("=")
    if not sep:
        folder = Path(spec)
        return Tree(folder.resolve().name.replace("+", "/", 1), "-", folder)
    repo, _, commit = name.partition("@")
    return Tree(repo, commit or "-", Path(path))


def read_verdicts(path: Path) -> list[Verdict]:
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    verdicts = []
    for number, row in enumerate(rows, start=2):
        missing = [c for c in COLUMNS if row.get(c) is None]
        if missing or row["verdict"] not in VERDICTS or row["mode"] not in MODES:
            sys.exit(f"{path}:{number}: bad row (missing {missing}, verdict {row.get('verdict')!r}, mode {row.get('mode')!r})")
        verdicts.append(
            Verdict(
                row["repo"],
                row["commit"],
                row["mode"],
                row["path"],
                int(row["line"]),
                row["rule"],
                row["metric"],
                row["facet"],
                row["related"],
                row["verdict"],
                row["mechanism"],
                row["reason"],
            )
        )
    return verdicts


def stray_settings(tree: Path) -> list[Path]:
    """Files that would give a zero-config run a registry or a config."""
    found = [tree / "metrics.yaml"] if (tree / "metrics.yaml").is_file() else []
    for folder in (tree.resolve(), *tree.resolve().parents):
        if (folder / "metriclint.toml").is_file():
            found.append(folder / "metriclint.toml")
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                if "metriclint" in tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}):
                    found.append(pyproject)
            except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                pass
        if (folder / ".git").exists():
            break
    return found


def metriclint(args: list[str], cwd: Path) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "metriclint", *args], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def metriclint_version() -> str:
    """The metriclint that runs: its version, and its git commit when it is installed from a checkout."""
    code, out, _, _ = metriclint(["--version"], Path.cwd())
    shown = out.strip().replace("metriclint, version ", "") if code == 0 else "(no --version)"
    where = subprocess.run([sys.executable, "-c", "import metriclint; print(metriclint.__file__)"], capture_output=True, text=True)
    folder = Path(where.stdout.strip()).parent if where.returncode == 0 else Path.cwd()
    head = subprocess.run(["git", "-C", str(folder), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return f"{shown} at {head.stdout.strip()}" if head.returncode == 0 else shown


def tail(text: str, lines: int = 8) -> str:
    """The last lines of a command's stderr, with how many there were."""
    every = text.strip().splitlines()
    return f"{len(every)} lines, the last {min(lines, len(every))}:\n      " + "\n      ".join(every[-lines:])


def in_tree(path: str, tree: Path) -> bool:
    return (tree / path).resolve().is_relative_to(tree.resolve()) and (tree / path).is_file()


def place(path: str, line: int, tree: Path, registry: Path | None) -> tuple[str, int]:
    """Where a side is, for matching verdicts: a tree file and line; in the draft registry,
    whose lines move whenever the draft changes, `<registry>:FIELD` (the YAML key written on
    that line: description, a facet, ...) and line 0."""
    if in_tree(path, tree):
        return path, line
    try:
        text = (registry or Path(path)).read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, IndexError):
        return f"{REGISTRY}:?", 0
    return f"{REGISTRY}:{text.split(':', 1)[0].strip().strip(chr(34))}", 0


def related_key(related: list[dict[str, Any]], tree: Path, registry: Path | None) -> str:
    return ";".join("{}:{}".format(*place(side["path"], side["line"], tree, registry)) for side in related)


def check(tree: Tree, checked: Path, mode: str, registry: Path | None, cache: Path, jobs: int | None) -> Run:
    args = ["check", ".", "--format", "json", "--cache-dir", str(cache)]
    args += ["--registry", str(registry)] if registry else []
    args += ["--jobs", str(jobs)] if jobs else []
    code, out, err, seconds = metriclint(args, checked)
    notes = []
    try:
        document = json.loads(out)
    except json.JSONDecodeError:
        document = {"findings": [], "summary": {"files": 0, "by_rule": {}}}
        notes.append(f"no JSON on stdout; stderr: {tail(err)}")
    findings = [
        Finding(
            f["rule"],
            f["path"] if in_tree(f["path"], checked) else REGISTRY,
            f["line"],
            f["column"],
            f.get("metric") or "",
            f.get("facet") or "",
            f.get("found") or "",
            f["message"],
            f.get("related") or [],
            related_key(f.get("related") or [], checked, registry),
            *place(f["path"], f["line"], checked, registry),
        )
        for f in document["findings"]
        if f["rule"] in CONTRADICTIONS
    ]
    summary = document["summary"]
    return Run(tree.repo, tree.commit, mode, code, seconds, summary["files"], dict(summary["by_rule"]), notes, findings, stderr=err)


def repair(draft: Path, errors: str) -> int:
    """Drop the entries of a draft that its validator rejected (exit 2), as a user would; how many."""
    lines = draft.read_text(encoding="utf-8").splitlines(keepends=True)
    reported = {int(m.group(1)) for m in re.finditer(rf"(?:^|/){re.escape(draft.name)}:(\d+):\d+: ", errors, re.M)}
    doomed: set[int] = set()
    for number in reported:  # a metric entry: its key line (indented 2) and everything indented deeper below it
        start = number - 1
        if not 0 <= start < len(lines) or not re.match(r"  \S", lines[start]):
            return 0  # not a metric entry: leave the draft as it is
        end = start + 1
        while end < len(lines) and (lines[end].startswith("   ") or not lines[end].strip()):
            end += 1
        doomed.update(range(start, end))
    draft.write_text("".join(line for i, line in enumerate(lines) if i not in doomed), encoding="utf-8")
    return len(reported)


def judge(run: Run, verdicts: list[Verdict]) -> list[Verdict]:
    """Attach verdicts to the run's findings; return the rows for this run's commit and mode that matched none."""
    exact = {(v.commit, v.mode, *v.key): v for v in verdicts}
    loose = {v.key: v for v in verdicts}
    used: set[int] = set()
    for finding in run.findings:
        key = (run.repo, finding.key_path, finding.key_line, finding.rule, finding.metric, finding.facet, finding.related_key)
        chosen = exact.get((run.commit, run.mode, *key))
        if chosen is None and (chosen := loose.get(key)) is not None:
            finding.inherited = True
        if chosen is not None:
            finding.verdict, finding.mechanism, finding.reason = chosen.verdict, chosen.mechanism, chosen.reason
            used.add(id(chosen))
    return [v for v in verdicts if (v.repo, v.commit, v.mode) == (run.repo, run.commit, run.mode) and id(v) not in used]


def source_line(checked: Path, registry: Path | None, path: str, line: int) -> str:
    file = Path(path) if Path(path).is_absolute() else checked / path
    if not file.is_file() and registry is not None:
        file = registry
    try:
        lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "<unreadable>"
    text = lines[line - 1].strip() if 0 < line <= len(lines) else "<no such line>"
    return text if len(text) <= 200 else text[:197] + "..."


def precision(tally: Counter[str]) -> str:
    judged = sum(tally[v] for v in VERDICTS)
    return f"{tally['true'] / judged:.2f}" if judged else "n/a"


def describe(tally: Counter[str]) -> str:
    return (
        f"true {tally['true']}, false {tally['false']}, debatable {tally['debatable']}, "
        f"unjudged {tally['unjudged']}; precision {precision(tally)}"
    )


def show(run: Run, checked: Path, registry: Path | None, only_unjudged: bool) -> None:
    rules = ", ".join(f"{rule} {n}" for rule, n in sorted(run.by_rule.items())) or "none"
    print(f"\n== {run.repo}@{run.commit[:12]} {run.mode}: exit {run.exit_code}, {run.files} files, {run.seconds:.1f} s")
    print(f"   findings: {rules}")
    for note in run.notes:
        print(f"   note: {note}")
    for f in run.findings:
        if only_unjudged and f.verdict != "unjudged":
            continue
        judged = f.verdict + (" (from another commit/mode)" if f.inherited else "")
        print(f"  {f.rule} {f.metric} {f.facet}={f.found}  [{judged}{': ' + f.mechanism if f.mechanism else ''}]")
        print(f"    {f.message}")
        print(f"    > {f.path}:{f.line}: {source_line(checked, registry, f.path, f.line)}")
        for side in f.related:
            shown = side["path"] if in_tree(side["path"], checked) else REGISTRY
            print(f"    < {shown}:{side['line']} ({side.get('text', '')}): {source_line(checked, registry, side['path'], side['line'])}")
        if f.reason:
            print(f"    why: {f.reason}")
    print(f"   verdicts: {describe(run.tally())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tree", action="append", required=True, metavar="REPO@COMMIT=PATH")
    parser.add_argument("--verdicts", type=Path, default=DEFAULT_VERDICTS)
    parser.add_argument("--mode", choices=MODES, action="append", help="run only this mode (repeatable; default: both)")
    parser.add_argument("--cache-dir", type=Path, help="metriclint's cache (default: a temporary folder)")
    parser.add_argument("--jobs", type=int, help="passed to metriclint check")
    parser.add_argument("--only-unjudged", action="store_true", help="print only findings without a verdict")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the whole run as JSON")
    options = parser.parse_args()
    verdicts = read_verdicts(options.verdicts)
    version = metriclint_version()
    print(f"metriclint {version}")
    modes = options.mode or list(MODES)
    runs: list[Run] = []
    stale: list[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="metriclint-field-") as scratch:
        cache = options.cache_dir or Path(scratch) / "cache"
        for number, tree in enumerate(parse_tree(spec) for spec in options.tree):
            checked, stray = tree.path.resolve(), stray_settings(tree.path.resolve())
            if stray:  # zero-config must not pick these up: run on a copy without them
                checked = Path(scratch) / f"tree{number}"
                root, names = tree.path.resolve(), {p.name for p in stray if p.parent == tree.path.resolve()}
                shutil.copytree(root, checked, symlinks=True, ignore=lambda d, n: [x for x in n if Path(d) == root and x in names])
            for mode in modes:
                notes = [f"ignored {p} (the runs read a copy without it)" for p in stray]
                registry = Path(scratch) / f"draft{number}.yaml" if mode == "draft" else None
                if registry is not None:
                    code, out, err, seconds = metriclint(["init", ".", "-o", str(registry), "--force"], checked)
                    notes.append(f"init ({seconds:.1f} s): {out.strip()}" if code == 0 else f"init exited {code}: {tail(err)}")
                if registry is None or code == 0:
                    run = check(tree, checked, mode, registry, cache, options.jobs)
                    if registry is not None and run.exit_code == 2 and (dropped := repair(registry, run.stderr)):
                        notes.append(f"check exited 2 on the draft: {run.notes[0]}")
                        notes.append(f"dropped the {dropped} entries the validator rejected, and checked again")
                        run = check(tree, checked, mode, registry, cache, options.jobs)
                        run.rejected_draft = dropped
                else:
                    run = Run(tree.repo, tree.commit, mode, code, seconds, 0, {}, [])
                run.notes[:0] = notes
                stale += judge(run, verdicts)
                show(run, checked, registry, options.only_unjudged)
                runs.append(run)
    print("\n== summary")
    for run in runs:
        contradictions = sum(n for rule, n in run.by_rule.items() if rule in CONTRADICTIONS)
        print(
            f"  {run.repo + '@' + run.commit[:9]:42} {run.mode:11}  exit {('2->' if run.rejected_draft else '') + str(run.exit_code):4}  files {run.files:5}  "
            f"contradictions {contradictions:3}  ML900 {run.by_rule.get('ML900', 0):3}  {run.seconds:5.1f} s  {describe(run.tally())}"
        )
    for mode in modes:
        print(f"  {'overall':42} {mode:11}  {describe(sum((r.tally() for r in runs if r.mode == mode), Counter()))}")
    print(f"  {'overall':42} {'both modes':11}  {describe(sum((r.tally() for r in runs), Counter()))}")
    gone = Counter(f"{v.repo}@{v.commit[:9]} {v.mode} {v.path}:{v.line} {v.rule} {v.metric} {v.facet} ({v.verdict})" for v in stale)
    if gone:
        print(f"  {len(stale)} stale verdicts (their findings are gone):")
    for what, n in sorted(gone.items()):
        print(f"    {n} x {what}")
    if options.json:
        document = {"metriclint": version, "runs": [asdict(r) for r in runs], "stale": [asdict(v) for v in stale]}
        options.json.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
