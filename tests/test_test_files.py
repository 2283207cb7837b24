"""Test files count for the inventory but state nothing about a metric (the `tests` setting)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES, code_claims, copy_fixture, finding_lines, invoke, write_project

from metriclint.sources.python import test_files, walk

PROJECT = FIXTURES / "attribution_tests"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(PROJECT, tmp_path / "project", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_an_empty_tests_setting_makes_test_files_speak(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.metriclint]\ntests = []\n")
    assert finding_lines(invoke("check", ".")) == [
        "ML001 checks/conftest.py:1",
        "ML001 checks/norm_test.py:2",
        "ML001 tests/unit/test_step.py:6",
        "ML001 trainer/step.py:8",
    ]


def test_the_tests_setting_replaces_the_default(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metriclint]\ntests = ["checks/*"]\n')
    assert finding_lines(invoke("check", ".")) == ["ML001 tests/unit/test_step.py:6", "ML001 trainer/step.py:8"]


def test_a_test_file_keeps_a_metric_from_being_stale(project: Path) -> None:
    """eval/pass_rate is logged only in tests/: no ML005."""
    assert "ML005" not in invoke("check", ".", "--select", "ML005").output


def test_the_tests_setting_must_be_globs(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.metriclint]\ntests = "tests"\n')
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == "pyproject.toml:2:9: 'tests' must be a list of strings, not \"tests\"\n"


def test_the_keys_a_test_writes_out_keep_their_entries_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check = (
        "def test_logged(tracker, logs, rate):\n"
        '    tracker.log({"eval/win_rate": rate})\n'
        '    logs["eval/draw_rate"] = rate\n'
        '    tracker.log("eval/loss_rate", rate)\n'
    )
    entries = "".join(f"  eval/{name}:\n    description: Share of games.\n" for name in ("win_rate", "draw_rate", "loss_rate", "tie_rate"))
    write_project(tmp_path, {"tests/test_games.py": check}, f"version: 1\nmetrics:\n{entries}")
    monkeypatch.chdir(tmp_path)
    assert finding_lines(invoke("check", ".", "--select", "ML005")) == ["ML005 metrics.yaml:9"]


def test_a_test_files_walk_makes_no_code_flows() -> None:
    """What a test's functions compute and call is not followed."""
    source = b'import torch\n\n\ndef total(parts, tracker):\n    tracker.log({"train/loss": torch.stack(parts).sum()})\n    return helper(parts)\n'
    project, test = (walk.extract("t.py", source, test=test) for test in (False, True))
    assert project.functions and project.calls
    assert (test.functions, test.calls) == ((), ())
    assert [use.key for use in test.keys] == [use.key for use in project.keys] == ["train/loss"]


def test_a_test_files_table_and_templates_make_no_keys() -> None:
    """A module's table of texts names no metric, and a key built from a name the walk of a
    test does not bind is left out rather than made a template."""
    source = b'TASKS = {"org/model-a": "fill-mask"}\n\n\ndef test_log(tracker, prefix, rate):\n    tracker.log({f"{prefix}/rate": rate, "eval/rate": rate})\n'
    assert [use.key for use in walk.extract("t.py", source, test=True).keys] == ["eval/rate"]


def test_a_tests_code_computes_nothing_a_metric_is(tmp_path: Path) -> None:
    """A test that logs a project helper's sum says what it expects of the helper, not what
    the project logs under that key."""
    helper = "import torch\n\n\ndef total(parts):\n    return torch.stack(parts).sum()\n"
    check = 'from stats import total\n\n\ndef test_total(tracker, parts):\n    tracker.log({"train/loss": total(parts)})\n'
    write_project(tmp_path, {"stats.py": helper, "tests/test_stats.py": check})
    assert code_claims(tmp_path) == ()


def test_a_test_files_texts_name_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's comment says what the test expects, not that the metric exists: a registry key
    it names but no code logs is stale. Its silent twin, a key the test writes out, is above."""
    check = (
        'def test_rates(tracker, rate):\n    """Checks eval/win_rate."""\n    tracker.log({"eval/draw_rate": rate})  # and eval/win_rate\n'
    )
    entries = "".join(f"  eval/{name}:\n    description: Share of games.\n" for name in ("win_rate", "draw_rate"))
    write_project(tmp_path, {"tests/test_games.py": check}, f"version: 1\nmetrics:\n{entries}")
    monkeypatch.chdir(tmp_path)
    assert finding_lines(invoke("check", ".", "--select", "ML005")) == ["ML005 metrics.yaml:3"]


def test_a_test_file_that_writes_no_key_is_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a test that may write a key is parsed (test_files.py), so one that cannot be parsed
    is reported only then; a suppression comment is read in any test."""
    broken = "def test_broken(:\n"
    files = {
        "tests/test_plain.py": broken,
        "tests/test_keyed.py": broken + 'LOGGED = {"eval/acc": 0}\n',
        "tests/test_logging.py": broken + "wandb.log(stats)\n",
        "tests/test_suppressed.py": broken + "x = 1  # metriclint: ignore[ML001]\n",
    }
    write_project(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    assert finding_lines(invoke("check", ".", "--select", "ML900")) == [
        "ML900 tests/test_keyed.py:1",
        "ML900 tests/test_logging.py:1",
        "ML900 tests/test_suppressed.py:1",
    ]


@pytest.mark.parametrize(
    "source",
    [
        'logs["eval/acc"] = acc',  # a key stored, or read back
        'logs[\n    "eval/acc"\n]',
        'logs[("eval/acc")]',
        'logs["eval/" "acc"]',
        "'eval/acc' in logs",
        '"eval/acc" not in logs',
        '("eval/acc") \\\n  in logs',
        'logs.get("eval/acc", 0.0)',
        'logs.get(\n  "eval/acc")',
        '{"eval/acc": acc}',  # a dict's key
        '{"eval/acc"\n : acc}',
        '{"""eval/acc""": acc}',
        '{"eval/win" if won else "eval/loss": 1}',
        '{"eval/" + "acc": acc}',  # a key's start, or its end, built whole
        '{"eval" + "/acc": acc}',
        '{"eval/%s" % "acc": acc}',
        '{"eval/{}".format("acc"): acc}',
        '{f"eval/acc": acc}',
        'if"eval/{k}" in logs: pass',  # a keyword before the quote is no f-string's prefix
        'logs["eval\\x2facc"]',  # an escaped slash
        "tracker.log(stats)",  # a sink's call: its keys may have no slash
        "writer.add_scalar ('loss', loss)",
        "x = 1  # metriclint: ignore[ML001]",
        "from prometheus_client import Gauge",
    ],
)
def test_a_test_that_may_write_a_key_is_parsed(source: str) -> None:
    assert test_files.may_hold_keys(source.encode(), frozenset())


@pytest.mark.parametrize(
    "source",
    [
        'DATA = "fixtures/batch.json"',  # a file
        'model = load("org/model-7b")',  # a slashed literal where no key is read: a model, a path
        'KEY = "eval/acc"',  # a name's string: the walk of a test binds none
        'LOGGED = ["eval/acc", "eval/loss"]',
        'key = "eval/" + name',  # a key with a part the walk of a test cannot know
        'logs["eval/" + name] = acc',
        'key = f"{split}/acc"',
        'logs[f"{split}/acc"] = acc',
        'logs[rf"{split}/acc"] = acc',
        'logs[f"{split}/acc" if split else "acc"] = acc',
        'assert path == "/tmp/run"',
        'URL = "https://example.org/a/b"',
        "ratio = hits / total",
        "half = n/2  # n/2 steps",
        'name = "logits"',
        "logger.info(x)",
        "self.logged = log_prob",
    ],
)
def test_a_test_that_cannot_write_a_key_is_skipped(source: str) -> None:
    assert not test_files.may_hold_keys(source.encode(), frozenset())


def test_a_projects_own_logging_function_is_a_sink_in_tests_too() -> None:
    assert test_files.may_hold_keys(b"record_metric(stats)", frozenset({"pkg.metrics.record_metric"}))
    assert not test_files.may_hold_keys(b"record_metric(stats)", frozenset())


def test_a_sink_call_is_found_where_pythons_engine_finds_it() -> None:
    """The search for a sink's call runs on RE2; it must find what Python's bytes pattern
    finds, at the same place: spaces RE2's `\\s` leaves out, bytes that are no UTF-8, a name
    inside a longer one."""
    found = test_files._sink_calls(frozenset())
    same = re.compile(found.pattern)
    sources = [
        b"wandb.log\x0b({})",
        b"wandb.log\x0c ({})",
        b"\xe9wandb.log(x)",
        b"\xff\xfe writer.add_scalar (k, v)",
        b"mywandb_log(x)",
        b"wandb.logs(x)",
    ]
    assert [found.search(s) is not None for s in sources] == [True, True, True, True, False, False]
    assert [m.span() if (m := found.search(s)) else None for s in sources] == [m.span() if (m := same.search(s)) else None for s in sources]
