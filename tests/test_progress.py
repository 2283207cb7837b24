"""The progress bar: only on a terminal, only after a couple of seconds."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import invoke

from metriclint.report import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_wanted_only_on_a_terminal_outside_ci_without_quiet() -> None:
    assert progress.wanted(Terminal(), quiet=False, environ={})
    assert not progress.wanted(io.StringIO(), quiet=False, environ={})
    assert not progress.wanted(Terminal(), quiet=False, environ={"CI": "true"})
    assert not progress.wanted(Terminal(), quiet=True, environ={})
    assert progress.wanted(Terminal(), quiet=False, environ={"CI": "false"})  # as GitHub's CI=true is one, CI=false is none
    assert progress.wanted(Terminal(), quiet=False, environ={"CI": "0"})


def test_the_time_left_counts_from_the_first_file_not_from_start_up() -> None:
    # 47 s of start-up, then a file every 0.17 s: 98 files left take about 17 s, not 47 minutes.
    now = [0.0]
    stream = Terminal()
    bar = progress.Bar(stream, clock=lambda: now[0], columns=lambda: 80)
    now[0] = 47.0
    bar(1, 100)
    now[0] = 47.17
    bar(2, 100)
    assert stream.getvalue().endswith(" 2/100 files, 0:17 left")


def test_the_bar_is_redrawn_at_most_ten_times_a_second() -> None:
    now = [0.0]
    stream = Terminal()
    bar = progress.Bar(stream, clock=lambda: now[0], columns=lambda: 80)
    now[0] = progress.DELAY
    for done in range(1, 1001):
        now[0] += 0.0001  # a warm run: a thousand files in a tenth of a second
        bar(done, 1000)
    assert stream.getvalue().count("\r") == 1


def test_the_bar_appears_after_the_delay_and_is_cleared() -> None:
    now = [0.0]
    stream = Terminal()
    bar = progress.Bar(stream, clock=lambda: now[0], columns=lambda: 80)
    bar(1, 4)
    assert stream.getvalue() == ""
    now[0] = progress.DELAY + 2.0
    bar(2, 4)
    assert stream.getvalue() == "\r[" + "#" * (progress.WIDTH // 2) + "-" * (progress.WIDTH // 2) + "] 2/4 files, 0:08 left"
    bar.close()
    assert stream.getvalue().endswith("\r")


@pytest.mark.parametrize("columns", [80, 48, 30, 20, 12, 1])
def test_the_bar_never_fills_the_terminal_width(columns: int) -> None:
    """A line as wide as the terminal wraps, and each update then starts a new line."""
    stream, now = Terminal(), [0.0]
    bar = progress.Bar(stream, clock=lambda: now[0], columns=lambda: columns)
    for done in (1, 500, 999):
        now[0] += progress.DELAY + 3600.0
        bar(done, 1000)
        assert all(len(line) < max(columns, 2) for line in stream.getvalue().split("\r")), stream.getvalue()
    assert "left" in stream.getvalue() or columns < 40


def test_check_draws_the_bar_only_where_wanted(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (in_tmp / "a.py").write_text("x = 1\n")
    (in_tmp / "metrics.yaml").write_text("version: 1\nmetrics: {}\n")  # a run without one says so on stderr
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert invoke("check", ".").stderr == ""  # CliRunner's stderr is not a terminal
    monkeypatch.setattr(progress, "wanted", lambda stream, quiet: True)
    result = invoke("check", ".")
    assert "] 1/1 files" in result.stderr
    assert result.stdout == "All checks passed (1 file).\n"


@pytest.mark.parametrize(
    "command", [["audit"], ["fix", "--diff"], ["explain-metric", "train/loss"], ["init", "-o", "draft.yaml", "--force"], ["sources"]]
)
def test_every_analysing_command_draws_the_bar_where_wanted(in_tmp: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    (in_tmp / "a.py").write_text('def log(out: dict, loss: float) -> None:\n    out["train/loss"] = loss\n')
    (in_tmp / "metrics.yaml").write_text("version: 1\nmetrics:\n  train/loss: {}\n")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert "] " not in invoke(*command, ".").stderr
    monkeypatch.setattr(progress, "wanted", lambda stream, quiet: True)
    assert "] 1/1 files" in invoke(*command, ".").stderr
