"""bench/history.py decides found or missed by the lines a fix touched: those lines must be the right ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import history  # noqa: E402  (bench/ is a folder of scripts, not a package)


def _commit(repo: Path, text: str) -> str:
    (repo / "f.txt").write_text(text, encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "f.txt"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def test_a_rewritten_line_counts_on_both_sides_and_an_insertion_counts_the_lines_around_it(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    parent = _commit(tmp_path, "a\nb\nc\nd\n")
    fix = _commit(tmp_path, "a\nB\nc\nd\ne\n")
    row = history.Row("o/r", fix, parent, ["f.txt"], "missed", "-", "yes")
    before, after = history.touched(tmp_path, row)
    assert before == {"f.txt": {2, 4, 5}}
    assert after == {"f.txt": {2, 5}}


def test_every_row_is_complete_and_every_registry_belongs_to_a_row() -> None:
    rows = history.read_rows(ROOT / "bench" / "history.tsv")
    fixes = {row.fix for row in rows}
    assert len(fixes) == len(rows) >= 10
    assert all(len(row.fix) == len(row.parent) == 40 and row.paths for row in rows)
    registries = {path.stem for path in (ROOT / "bench" / "history").glob("*.yaml")}
    assert registries <= fixes
    assert {row.fix for row in rows if row.found_with_registry != "-"} == registries
