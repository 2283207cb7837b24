"""`metriclint audit`: every metric, every statement about it, in four formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, Golden, copy_fixture, invoke, write_project

from metriclint.cli.commands import AUDIT_FORMAT_NAMES
from metriclint.report.audit_formats import AUDIT_FORMATS

PROJECT = "fixtures/markdown_docs"


@pytest.fixture
def repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES.parent)
    return FIXTURES.parent


def test_json_audit_matches_golden(repo_root: Path, golden: Golden) -> None:
    result = invoke("audit", PROJECT, "--format", "json")
    golden("markdown_docs_audit.json", result.output)
    assert result.exit_code == 1  # the docs contradict the registry


def test_audit_puts_every_source_side_by_side(repo_root: Path) -> None:
    document = json.loads(invoke("audit", PROJECT, "--format", "json").output)
    grad_norm = next(m for m in document["metrics"] if m["key"] == "train/grad_norm")
    assert grad_norm["status"] == "contradict"
    assert grad_norm["registry"]["semantics"] == {"clipping": "before"}
    doc = next(s for s in grad_norm["statements"] if s["source"] == "doc" and s["claims"])
    assert (doc["path"], doc["line"], doc["column"], doc["text"]) == (f"{PROJECT}/docs/metrics.md", 8, 17, "Global norm after clipping")
    assert doc["status"] == "contradict"
    clipping = next(f for f in grad_norm["facets"] if f["facet"] == "clipping")
    assert clipping["stated"] == [{"value": "before", "source": "registry"}, {"value": "after", "source": "doc"}]
    assert "unit" in grad_norm["silent_facets"] and "clipping" not in grad_norm["silent_facets"]
    assert [g["metric"] for g in document["gaps"]["unregistered"]] == ["eval/pass_rate", "train/entropy"]
    assert [g["metric"] for g in document["gaps"]["stale"]] == ["eval/old_accuracy"]
    assert document["summary"]["statements"] == {"code": 1, "doc": 9, "registry": 2}


def test_metric_option_narrows_to_one_metric_by_alias(repo_root: Path) -> None:
    document = json.loads(invoke("audit", PROJECT, "--format", "json", "--metric", "step_time").output)
    assert [m["key"] for m in document["metrics"]] == ["perf/step_time"]
    assert document["gaps"] == {"unregistered": [], "stale": [], "undescribed": []}


def test_unknown_metric_is_a_usage_error(repo_root: Path) -> None:
    result = invoke("audit", PROJECT, "--metric", "train/nope")
    assert result.exit_code == 2
    assert result.stderr == "--metric: no metric 'train/nope' is registered, logged or named in the checked files\n"


def test_text_audit_quotes_and_locates(repo_root: Path) -> None:
    output = invoke("audit", PROJECT, "--metric", "reward").output
    assert f"  doc        {PROJECT}/docs/metrics.md:12:21  CONTRADICTS\n" in output
    assert '             "summed over the samples of a group."  -> reduction=sum\n' in output
    assert output.endswith(
        "1 metric in 3 files; statements: code 1, doc 1; 1 contradicted (1 finding), 0 unregistered (ML004), 0 stale (ML005), 0 undescribed\n"
    )


def test_markdown_audit_has_the_matrix(repo_root: Path) -> None:
    output = invoke("audit", PROJECT, "--format", "markdown").output
    assert "| Metric | registry | doc | code |\n|---|---|---|---|\n" in output
    assert "| `train/grad_norm` | contradict (1) | contradict (2) | silent |\n" in output  # logged, nothing computed
    assert "| `eval/pass_rate` | silent | silent | silent |\n" in output  # the docs name it twice and state no facet


def test_what_the_code_computes_is_a_statement_of_the_code_column(repo_root: Path) -> None:
    """A cell says agree or contradict only for what a source states: a key the code merely
    logs leaves its cell silent, and a computing call is quoted with the facts it gives."""
    project = "fixtures/code_evidence_registry"
    output = invoke("audit", project, "--format", "markdown").output
    assert "| `train/grad_norm` | contradict (1) | contradict (1) | contradict (1) |\n" in output
    assert "| `train/update_norm` | contradict (1) | silent | contradict (1) |\n" in output
    document = json.loads(invoke("audit", project, "--format", "json", "--metric", "train/grad_norm").output)
    code = [s for s in document["metrics"][0]["statements"] if s["source"] == "code"]
    assert [(s["path"], s["line"], s["column"], s["status"]) for s in code] == [(f"{project}/step.py", 14, 12, "contradict")]
    assert code[0]["text"] == (
        "torch.nn.utils.clip_grad_norm_: returns the total norm computed before clipping; computes the l2 norm (the default norm_type)"
    )


def test_html_audit_is_self_contained(repo_root: Path) -> None:
    page = invoke("audit", PROJECT, "--format", "html").output
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script src" not in page and "http" not in page and "<link" not in page and page.count("<script>") == 1
    assert (
        '<td class="contradict"><span class="status">contradict</span><div class="stmt contradict"><q>Global norm after clipping</q>'
        in page
    )


def test_a_metric_nobody_describes_is_a_gap(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": 'import wandb\nwandb.log({"train/loss": 1.0})\n'})
    document = json.loads(invoke("audit", ".", "--format", "json").output)
    assert document["gaps"]["undescribed"] == ["train/loss"]
    assert document["metrics"][0]["logged"] == [{"key": "train/loss", "path": "train.py", "line": 2, "column": 12, "test": False}]
    assert document["sources"] == ["code"]


def test_the_audit_says_which_logged_places_are_tests(in_tmp: Path) -> None:
    """A test's key is what the test expects, not what the project logs: a reader (or a
    benchmark) counting the project's keys leaves those places out."""
    logs = 'import wandb\nwandb.log({"train/loss": 1.0})\n'
    write_project(in_tmp, {"train.py": logs, "tests/test_train.py": logs.replace("train/loss", "eval/loss")})
    document = json.loads(invoke("audit", ".", "--format", "json").output)
    assert {m["key"]: [p["test"] for p in m["logged"]] for m in document["metrics"]} == {"eval/loss": [True], "train/loss": [False]}


def test_what_the_code_computes_does_not_describe_a_metric(in_tmp: Path) -> None:
    source = "import torch, wandb\n\n\ndef step(p):\n    wandb.log({'train/grad_norm': torch.nn.utils.clip_grad_norm_(p, 1.0)})\n"
    write_project(in_tmp, {"train.py": source})
    document = json.loads(invoke("audit", ".", "--format", "json").output)
    assert [s["source"] for s in document["metrics"][0]["statements"]] == ["code"]
    assert document["gaps"]["undescribed"] == ["train/grad_norm"]


def test_log_functions_setting_adds_logging_helpers(in_tmp: Path) -> None:
    write_project(in_tmp, {"eval.py": 'def f(t):\n    t.emit({"accuracy": 1.0})\n'})
    assert json.loads(invoke("audit", ".", "--format", "json").output)["metrics"] == []
    (in_tmp / "pyproject.toml").write_text('[tool.metriclint]\nlog-functions = ["emit"]\n')
    assert [m["key"] for m in json.loads(invoke("audit", ".", "--format", "json").output)["metrics"]] == ["accuracy"]


def test_log_functions_setting_names_the_projects_own_functions_called_by_name(in_tmp: Path) -> None:
    """A helper the project defines and calls by its name, imported or nested, is a logging
    helper once named, as a method of that name is: `log-functions` takes it by its last name."""
    write_project(
        in_tmp,
        {
            "sink.py": "def emit(name, value):\n    pass\n",
            "train.py": (
                "from sink import emit\n\n\ndef step(loss):\n    emit('train/loss', loss.mean())\n\n\n"
                "def tally(steps):\n    def record(name, value):\n        pass\n\n    record('perf/steps', len(steps))\n"
            ),
        },
    )
    assert json.loads(invoke("audit", ".", "--format", "json").output)["metrics"] == []
    (in_tmp / "pyproject.toml").write_text('[tool.metriclint]\nlog-functions = ["sink.emit", "record"]\n')
    assert [m["key"] for m in json.loads(invoke("audit", ".", "--format", "json").output)["metrics"]] == ["perf/steps", "train/loss"]


def test_log_functions_setting_never_names_a_modules_function(in_tmp: Path) -> None:
    """`log` named in the setting is the project's helper or an object's method, not `math.log`."""
    write_project(
        in_tmp,
        {
            "pyproject.toml": '[tool.metriclint]\nlog-functions = ["log"]\n',
            "a.py": "import math\n\n\ndef f(t):\n    t.log('train/kept', 1.0)\n    math.log('train/math', 2.0)\n",
        },
    )
    assert [m["key"] for m in json.loads(invoke("audit", ".", "--format", "json").output)["metrics"]] == ["train/kept"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("train/grad_norm", True), ("eval/pass@0.5", True), ("scripts/run.py", False), ("http://w1:8000", False), ("a b/c", False)],
)
def test_paths_and_urls_are_not_metric_keys(text: str, expected: bool) -> None:
    from metriclint.base.keys import looks_like_key

    assert looks_like_key(text) is expected


def test_an_english_word_in_prose_is_not_a_registry_key(in_tmp: Path) -> None:
    # miles: "the per-token loss mask" and "per-sample loss weights" are not about `train/loss`.
    registry = "version: 1\nmetrics:\n  train/loss:\n    description: Training loss of the step.\n"
    write_project(in_tmp, {"a.py": "# the per-token loss mask\nx = 1\n\n\n# per-sample loss weights\ny = 2\n"}, registry)
    assert invoke("check", ".").output.count("ML002") == 0
    write_project(in_tmp, {"a.py": "# the per-token `loss` here\nx = 1\n\n\n# per-sample `loss` there\ny = 2\n"}, registry)
    assert invoke("check", ".").output.count("ML002") == 1  # written as a name, it still counts


def test_the_audit_agrees_with_check_on_tooltip_mismatches(in_tmp: Path) -> None:
    # A dashboard shows train/value's tooltip for train/value_loss (ML003), the keys registered
    # through templates and train/value_loss named by no docstring: every finding check reports
    # is in the audit, the metric painted "contradict", the tooltip marked, the summary counting it.
    copy_fixture(FIXTURES / "tooltips_substring", in_tmp / "p")
    registry = "version: 1\nmetrics:\n  train/{name}:\n    description: A training quantity.\n  rollout/{name}:\n    description: A rollout quantity.\n"
    (in_tmp / "p" / "metrics.yaml").write_text(registry, encoding="utf-8")
    trainer = in_tmp / "p" / "trainer.py"
    trainer.write_text(trainer.read_text(encoding="utf-8").replace("        value_loss: Critic regression loss.\n", ""), encoding="utf-8")
    checked = json.loads(invoke("check", "p", "--format", "json").output)["findings"]
    assert sorted(f["rule"] for f in checked) == ["ML002", "ML002", "ML003"]
    document = json.loads(invoke("audit", "p", "--format", "json").output)
    audited = [(f["rule"], f["path"], f["line"]) for m in document["metrics"] for f in m["findings"]]
    assert sorted(audited) == sorted((f["rule"], f["path"], f["line"]) for f in checked)
    train = next(m for m in document["metrics"] if any(f["rule"] == "ML003" for f in m["findings"]))
    assert train["key"] == "train/{name}" and train["status"] == "contradict"
    tooltip = next(s for s in train["statements"] if s["text"] == "mean value-head estimate")
    assert tooltip["status"] == "contradict"
    assert (document["summary"]["contradicted"], document["summary"]["contradictions"], document["gaps"]["undescribed"]) == (2, 3, [])
    one = invoke("audit", "p", "--metric", "train/value_loss")
    assert one.exit_code == 1 and "; 1 contradicted (2 findings)," in one.output


@pytest.mark.parametrize(("fixture", "rows"), [("know_printed", 2), ("know_printed_silent", 0)])
def test_a_printed_only_value_is_a_row_only_with_a_finding(
    fixture: str, rows: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A console value is checked, not inventoried: a real tree prints hundreds of them, and the
    audit lists the metrics a project logs, besides what `check` reports."""
    project = copy_fixture(FIXTURES / fixture, tmp_path / fixture)
    monkeypatch.chdir(project)
    document = json.loads(invoke("audit", ".", "--format", "json").output)
    printed = [m["key"] for m in document["metrics"] if "(printed at " in m["key"]]
    assert len(printed) == rows and all(m["findings"] for m in document["metrics"] if m["key"] in printed)


def test_the_command_line_names_every_audit_format() -> None:
    """`check` does not import the audit's formats, so the command line names them itself."""
    assert AUDIT_FORMAT_NAMES == tuple(AUDIT_FORMATS)
