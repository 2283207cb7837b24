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


def test_the_bar_appears_after_the_delay_and_is_cleared() -> None:
    now = [0.0]
    stream = Terminal()
    bar = progress.Bar(stream, clock=lambda: now[0])
    bar(1, 4)
    assert stream.getvalue() == ""
    now[0] = progress.DELAY + 0.1
    bar(2, 4)
    assert stream.getvalue().endswith("] 2/4 files")
    assert "#" * (progress.WIDTH // 2) + "-" * (progress.WIDTH // 2) in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\r")


def test_check_draws_the_bar_only_where_wanted(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (in_tmp / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert invoke("check", ".").stderr == ""  # CliRunner's stderr is not a terminal
    monkeypatch.setattr(progress, "wanted", lambda stream, quiet: True)
    result = invoke("check", ".")
    assert "] 1/1 files" in result.stderr
    assert result.stdout == "All checks passed (1 file).\n"
