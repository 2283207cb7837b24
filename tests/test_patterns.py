"""Regex tooltip tables run patterns from the checked files against keys from the checked
files: they are matched in linear time, and a pattern that would need backtracking is an
ML900 for its table, never a hang."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import invoke, write_project

from metriclint.base import patterns

CONFIG = '[tool.metriclint]\n\n[[tool.metriclint.tooltips]]\npath = "ui.js"\nmatch = "regex"\n'


def test_a_catastrophic_pattern_is_matched_in_linear_time() -> None:
    started = time.process_time()  # CPU: a loaded host must not fail it
    assert not patterns.search("(x+x+)+y", "x" * 10_000)
    assert patterns.search("(x+x+)+y", "x" * 40 + "y")
    assert time.process_time() - started < 1  # Python's re: over 300 s for 40 x's


@pytest.mark.parametrize("pattern", ["(?=loss)loss", "(a)\\1", "(?<!x)y"])
def test_a_pattern_only_backtracking_runs_is_refused(pattern: str) -> None:
    with pytest.raises(patterns.Unsafe, match="needs a backtracking regex engine"):
        patterns.search(pattern, "train/loss")


def test_a_pattern_that_is_no_regex_matches_nothing() -> None:
    assert not patterns.search("[", "train/[loss")


def test_a_pattern_utf_8_cannot_spell_is_refused_by_re2_not_raised() -> None:
    """Lone surrogates (a registry phrase written `"\\ud83d\\ude00"` in YAML) have no UTF-8
    bytes for RE2 to compile: RE2 refuses such a pattern, so Python's engine reads it (`engine`),
    or it matches nothing (`search`); the run had ended in an internal error (found by
    tests/test_fuzz.py)."""
    assert patterns.engine("grad|\ud83d\ude00") is None
    assert not patterns.search("\ud83d", "train/loss")


def test_a_registry_phrase_of_lone_surrogates_is_read_like_any_other(in_tmp: Path) -> None:
    registry = (
        'version: 1\nfacets:\n  policy:\n    values:\n      grad_norm: ["\\ud83d\\ude00"]\n'
        'metrics:\n  "train/grad_norm":\n    description: ""\n'
    )
    write_project(in_tmp, {"metrics.yaml": registry, "train.py": ""})
    result = invoke("check", ".", "--no-cache", "--jobs", "1")
    assert "internal error" not in result.output and result.exit_code == 0, result.output


def test_a_slow_key_and_pattern_in_a_regex_table_finish_at_once(in_tmp: Path) -> None:
    key = "train/" + "x" * 40
    write_project(
        in_tmp,
        {
            "pyproject.toml": CONFIG,
            "ui.js": 'const HELP = [["(x+x+)+y", "never"], ["x+$", "the norm after clipping"]];\n',
            "log.py": f'def f(n):\n    return {{"{key}": n, "train/grad_norm": n}}\n',
        },
    )
    started = time.perf_counter()
    result = invoke("sources", ".")
    assert time.perf_counter() - started < 30
    assert "ui.js\tjavascript\tHELP\tregex" in result.output


def test_a_regex_table_with_a_backtracking_pattern_is_ml900_at_that_pattern(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "pyproject.toml": CONFIG,
            "ui.js": 'const HELP = [\n  ["loss$", "training loss"],\n  ["(?=grad)grad_norm", "the norm after clipping"],\n];\n',
            "log.py": 'def f(n):\n    return {"train/grad_norm": n, "train/loss": n}\n',
        },
    )
    result = invoke("check", ".", "--format", "json", "--no-cache")
    found = [(f["rule"], f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)["findings"]]
    message = "tooltip table 'HELP' not read: pattern '(?=grad)grad_norm' needs a backtracking regex engine"
    assert [(rule, path, line) for rule, path, line, _ in found] == [("ML900", "ui.js", 3)]
    assert found[0][3].startswith(message)
