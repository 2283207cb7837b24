"""Every analysing command takes the same project options, the cache options among them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, invoke

# Each command on fixtures/demo, with what it exits with there (the demo holds one ML001).
COMMANDS = {
    "check": (("check", "demo"), 1),
    "audit": (("audit", "demo"), 1),
    "fix": (("fix", "--diff", "demo"), 1),
    "explain-metric": (("explain-metric", "train/grad_norm", "demo"), 0),
    "sources": (("sources", "demo"), 0),
    "init": (("init", "--output", "draft.yaml", "demo"), 0),
}


def _entries(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file() and len(p.name) == 64]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_analysing_command_keeps_its_cache_where_told(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("METRICLINT_CACHE_DIR", raising=False)
    args, status = COMMANDS[command]
    result = invoke(*args, "--cache-dir", "elsewhere", "--jobs", "1")
    assert result.exit_code == status, result.output
    assert _entries(tmp_path / "elsewhere")
    assert not (tmp_path / "demo" / ".metriclint_cache").exists()

    again = invoke(*args, "--no-cache", "--jobs", "1") if command != "init" else invoke(*args, "--no-cache", "--force")
    assert again.exit_code == status, again.output
    assert not (tmp_path / "demo" / ".metriclint_cache").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_analysing_command_refuses_a_bad_job_count(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path)
    result = invoke(*COMMANDS[command][0], "--jobs", "0")
    assert result.exit_code == 2
    assert "--jobs: must be at least 1, not 0" in result.output
