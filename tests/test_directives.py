"""A `metriclint: ignore[...]` comment silences a finding in every source kind, written in that
kind's own comment syntax (sources/directives.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, write_project

REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"
LOGGED = 'def log(norm):\n    wandb.log({"train/grad_norm": norm})\n'


def _table(path: str, table: str) -> str:
    return f'[tool.metriclint]\n[[tool.metriclint.tooltips]]\npath = "{path}"\ntable = "{table}"\n'


# kind -> (file name, its text with {comment} where the directive goes, its comment syntax, config)
KINDS = {
    "python": ("train2.py", 'def f(norm):\n    x = {{"train/grad_norm": norm}}  # post-clip{comment}\n', "  # {}", None),
    "javascript": (
        "ui/metrics.js",
        'export const DESCRIPTIONS = {{\n  "train/grad_norm": "norm after clipping",{comment}\n}};\n',
        " // {}",
        _table("ui/*.js", "DESCRIPTIONS"),
    ),
    "javascript block comment": (
        "ui/metrics.js",
        'export const DESCRIPTIONS = {{\n  "train/grad_norm": "norm after clipping",{comment}\n}};\n',
        " /* {} */",
        _table("ui/*.js", "DESCRIPTIONS"),
    ),
    "typescript": (
        "ui/metrics.ts",
        'export const DESCRIPTIONS: Record<string, string> = {{\n  "train/grad_norm": "norm after clipping",{comment}\n}};\n',
        " // {}",
        _table("ui/*.ts", "DESCRIPTIONS"),
    ),
    "json with comments": (
        "ui/metrics.json",
        '{{\n  "descriptions": {{\n    "train/grad_norm": "norm after clipping"{comment}\n  }}\n}}\n',
        " // {}",
        _table("ui/*.json", "/descriptions"),
    ),
    "yaml": (
        "ui/metrics.yaml",
        "descriptions:\n  train/grad_norm: norm after clipping{comment}\n",
        "  # {}",
        _table("ui/*.yaml", "/descriptions"),
    ),
    "markdown": (
        "docs/metrics.md",
        "| Metric | Meaning |\n|---|---|\n| `train/grad_norm` | norm after clipping{comment} |\n",
        " <!-- {} -->",
        None,
    ),
}


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, comment: str) -> list[str]:
    name, text, syntax, config = KINDS[kind]
    files = {"train.py": LOGGED, name: text.format(comment=syntax.format(comment) if comment else "")}
    if config is not None:
        files["pyproject.toml"] = config
    write_project(tmp_path, files, REGISTRY)
    monkeypatch.chdir(tmp_path)
    result = invoke("check", ".", "--no-cache", "--jobs", "1", "--quiet")
    return [line for line in result.output.splitlines() if line.startswith(name)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_directive_in_the_files_own_comment_syntax_silences_its_finding(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [line.split(": ")[1] for line in _check(tmp_path / "plain", monkeypatch, kind, "")] == ["ML001 train/grad_norm"]
    assert _check(tmp_path / "silenced", monkeypatch, kind, "metriclint: ignore[ML001] the changelog quotes it") == []


@pytest.mark.parametrize("kind", KINDS)
def test_a_directive_that_silences_nothing_is_reported_in_every_source_kind(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = _check(tmp_path, monkeypatch, kind, "metriclint: ignore[ML002]")
    assert [line.split(": ")[1] for line in found] == ["ML001 train/grad_norm", "ML010 metriclint"]
