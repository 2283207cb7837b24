"""`metriclint init`: a draft registry that validates, keeps templates and names each dispute."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, Golden, copy_fixture, finding_lines, invoke, write_project

from metriclint.knowledge import registry
from metriclint.knowledge.vocabulary import load_builtin

PROJECT = FIXTURES / "init_project"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(PROJECT, tmp_path / "project", "*.expected", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_init_drafts_the_expected_registry(project: Path, golden: Golden) -> None:
    result = invoke("init", ".")
    assert result.exit_code == 0, result.output
    assert result.output == "Wrote metrics.yaml: 4 metrics, 2 with semantics, 1 disagreement to settle.\n"
    golden(PROJECT / "metrics.yaml.expected", (project / "metrics.yaml").read_text())


def test_the_draft_passes_registry_validation(project: Path) -> None:
    invoke("init", ".")
    loaded, _ = registry.load(project / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert list(loaded.metrics) == ["perf/step_time", "train/grad_norm", "train/lr", "train/{role}/entropy"]
    assert loaded.metrics["train/{role}/entropy"].aliases == ("entropy_value",)
    assert {f: s.value for f, s in loaded.metrics["train/grad_norm"].semantics.items()} == {"scope": "global", "clipping": "before"}
    assert loaded.metrics["perf/step_time"].semantics == {}  # disputed: left to a human


def test_init_never_overwrites_without_force(project: Path) -> None:
    (project / "metrics.yaml").write_text("version: 1\n")
    result = invoke("init", ".")
    assert result.exit_code == 2
    assert result.stderr == "metrics.yaml:1:1: a registry already exists; pass --force to overwrite it\n"
    assert (project / "metrics.yaml").read_text() == "version: 1\n"
    assert invoke("init", ".", "--force").exit_code == 0
    assert (project / "metrics.yaml").read_text() == (PROJECT / "metrics.yaml.expected").read_text()


def test_with_the_dispute_settled_the_project_checks_against_the_draft(project: Path) -> None:
    invoke("init", ".")
    (project / "trainer/timing.py").write_text((project / "trainer/timing.py").read_text().replace("in ms", "in seconds"))
    assert invoke("check", ".").exit_code == 0


def test_an_empty_project_gets_an_empty_valid_registry(in_tmp: Path) -> None:
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(in_tmp / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert loaded.metrics == {}


FIELD = FIXTURES / "init_field"


@pytest.fixture
def field_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(FIELD, tmp_path / "project", "*.expected", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_init_drafts_only_measurements_logged_outside_the_tests(field_project: Path, golden: Golden) -> None:
    """Issue 14: no dataset ids, CI globs, configuration fields, labels or test-only keys; keys
    with spaces and templates with named placeholders; the code's value over a wrong text."""
    result = invoke("init", ".")
    assert result.output == "Wrote metrics.yaml: 7 metrics, 3 with semantics, 2 disagreements to settle.\n"
    golden(FIELD / "metrics.yaml.expected", (field_project / "metrics.yaml").read_text())
    loaded, _ = registry.load(field_project / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert list(loaded.metrics) == [
        "lm loss vs samples",
        "rollout/{status}_count",
        "spec/accept_rate_pos{pos}",
        "train/entropy",
        "train/grad_norm",
        "train/loss",
        "{key} validation ppl",
    ]


def test_the_draft_never_takes_the_side_the_code_rules_out(field_project: Path) -> None:
    invoke("init", ".")
    loaded, _ = registry.load(field_project / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    entry = loaded.metrics["train/grad_norm"]
    assert entry.semantics["clipping"].value == "before"
    assert entry.description is None  # the only text about it says "after clipping"
    text = (field_project / "metrics.yaml").read_text()
    assert "#   before at trainer/loop.py:7 (code: torch.nn.utils.clip_grad_norm_)" in text
    assert '#   after at trainer/loop.py:15 (docstring: "after clipping")' in text


def test_a_disagreement_lists_every_side_negated_ones_too(field_project: Path) -> None:
    invoke("init", ".")
    text = (field_project / "metrics.yaml").read_text()
    assert '#   not mean at trainer/loop.py:25 (docstring: "not averaged")' in text
    assert '#   mean at trainer/loop.py:32 (docstring: "Mean over")' in text


def test_checking_against_the_draft_finds_only_the_wrong_text(field_project: Path) -> None:
    invoke("init", ".")
    result = invoke("check", ".")
    assert finding_lines(result) == ["ML001 trainer/loop.py:15"]
    assert result.exit_code == 1


@pytest.mark.parametrize(
    ("fixture", "drafted"),
    [
        # a helper's template, and the keys its callers make by passing names for its placeholder
        ("built_keys", ["perf/rollout_time", "perf/update_time", "perf/{phase}_time"]),
        # a template over names the module never sees: the series the code reads back is known, not drafted
        ("tooltips_read_back", ["perf/step_time", "perf/{name}_time"]),
    ],
)
def test_init_drafts_keys_built_at_calls_beside_their_templates(
    fixture: str, drafted: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy_fixture(FIXTURES / fixture, tmp_path / "project", "metrics.yaml", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(tmp_path / "project" / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert [key for key in loaded.metrics if key.startswith("perf/") and "time" in key] == drafted


def test_a_key_built_at_a_call_is_drafted_with_what_its_template_computes(in_tmp: Path) -> None:
    """The docs call the series the process RSS; the helper that logs its template reads the
    whole system's memory: the draft writes the code's value, with the docs as the other side."""
    write_project(
        in_tmp,
        {
            "memory.py": (
                "import psutil\n\n\ndef log_memory(tracker, label):\n"
                "    used = psutil.virtual_memory().used / 1e9\n"
                '    tracker.log({f"perf/memory_{label}_gb": used})\n\n\n'
                'def after_step(tracker):\n    log_memory(tracker, "after_step")\n'
            ),
            "docs/metrics.md": "| Metric | Meaning |\n|---|---|\n| `perf/memory_after_step_gb` | process RSS after the step, in GB |\n",
        },
    )
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(in_tmp / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert {f: s.value for f, s in loaded.metrics["perf/memory_after_step_gb"].semantics.items()}["memory"] == "system"


def test_init_drafts_the_keys_a_framework_logs_from_its_own_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project trained by the Hugging Face Trainer, Lightning's monitor or DeepSpeed's monitor
    logs what they log: its registry needs those keys, with what the framework computes.
    A test's use of the framework drafts nothing."""
    copy_fixture(FIXTURES / "know_frameworks", tmp_path / "project", "metrics.yaml", "expected.txt")
    (tmp_path / "project" / "tests").mkdir()
    (tmp_path / "project" / "tests" / "test_tuning.py").write_text(
        'from transformers import Trainer\n\n\ndef test_trains(model):\n    Trainer(model=model).train()\n    assert model.name == "org/model"\n'
    )
    monkeypatch.chdir(tmp_path / "project")
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(tmp_path / "project" / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert {"train/grad_norm", "grad_norm", "learning_rate", "loss", "Train/Samples/lr", "lr-{optimizer}"} <= set(loaded.metrics)
    assert {f: s.value for f, s in loaded.metrics["train/grad_norm"].semantics.items()}.get("clipping") == "before"
    assert finding_lines(invoke("check", ".", "--select", "ML001,ML002,ML006")) == []


def test_init_drafts_no_framework_key_only_a_test_logs(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {"tests/test_tuning.py": "from transformers import Trainer\n\n\ndef test_trains(model):\n    Trainer(model=model).train()\n"},
    )
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(in_tmp / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert loaded.metrics == {}


_SAMPLED_NLL = (
    "import torch\nimport wandb\n\n\n"
    "def log_policy(logits, tokens, step):\n"
    "    logprobs = torch.log_softmax(logits, -1).gather(-1, tokens)\n"
    '    wandb.log({"objective/entropy": -logprobs.sum(1).mean()}, step=step)\n'
)


@pytest.mark.parametrize(
    ("page", "drafted", "disputed"),
    [
        # the page calls the negated log-probability of the policy's own samples its entropy,
        # which that value estimates (rules/code/quantities.yaml `also`): the draft says so too
        ("the mean entropy of the policy's samples", "entropy", False),
        # the twin: a page that calls it something the value is not leaves the code's value
        ("the mean log-probability of the sampled tokens", "nll", True),
    ],
)
def test_the_draft_takes_the_texts_word_for_what_the_code_value_estimates(in_tmp: Path, page: str, drafted: str, disputed: bool) -> None:
    write_project(in_tmp, {"policy.py": _SAMPLED_NLL, "docs/metrics.md": f"* `objective/entropy`: {page}.\n"})
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(in_tmp / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert loaded.metrics["objective/entropy"].semantics["quantity"].value == drafted
    assert ("# Sources disagree on quantity" in (in_tmp / "metrics.yaml").read_text()) is disputed
    assert finding_lines(invoke("check", ".", "--select", "ML001,ML006")) == (["ML001 docs/metrics.md:1"] if disputed else [])


def test_the_draft_takes_the_estimate_the_texts_name_among_other_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step's standard deviation, averaged over the steps since the last log: a page that
    calls it the standard deviation (of summed scores) names what that mean estimates, which the
    draft writes; a page that calls a mean of maxima averaged gets the mean."""
    copy_fixture(FIXTURES / "code_facts_logged_means", tmp_path / "project", "expected.txt")
    monkeypatch.chdir(tmp_path / "project")
    assert invoke("init", ".").exit_code == 0
    loaded, _ = registry.load(tmp_path / "project" / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert {key: loaded.metrics[key].semantics["reduction"].value for key in ("best_score", "score_spread")} == {
        "best_score": "mean",
        "score_spread": "std",
    }
    assert finding_lines(invoke("check", ".", "--select", "ML001,ML006,ML007")) == ["ML001 docs/metrics.md:4"]


RECORDERS = FIXTURES / "init_recorders"


def test_init_names_a_helper_handed_metric_names_it_cannot_follow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop records its metrics through `record(name, value)` and logs them through a callback
    handed to a bookkeeping helper, which the inventory does not follow: the draft is empty, and
    `init` says which helper to name in `log-functions`. Not a helper of a name alone (a profiler
    region), one handed paths (`save(path, tensor)`), nor one that hands out an object by name
    (a tracer's `counter(name, categories)`), whatever their strings look like."""
    copy_fixture(RECORDERS, tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    result = invoke("init", ".")
    assert result.exit_code == 0, result.output
    assert result.output == (
        "Wrote metrics.yaml: 0 metrics, 0 with semantics, 0 disagreements to settle.\n"
        'hint: record is handed 3 names shaped like metric keys ("perf/step_seconds", "train/loss", ...) that metriclint does not'
        " see logged; if it logs them, add it to log-functions under [tool.metriclint] and run init again\n"
    )
    (tmp_path / "project" / "pyproject.toml").write_text('[tool.metriclint]\nlog-functions = ["record"]\n', encoding="utf-8")
    result = invoke("init", ".", "--force")
    assert result.output == "Wrote metrics.yaml: 3 metrics, 1 with semantics, 0 disagreements to settle.\n"
    loaded, _ = registry.load(tmp_path / "project" / "metrics.yaml", "metrics.yaml", load_builtin()[0])
    assert list(loaded.metrics) == ["perf/step_seconds", "train/loss", "train/tokens"]


def test_init_names_a_helper_imported_from_a_package_under_src(in_tmp: Path) -> None:
    """A package under `src/` is imported by its own name (`from pkg.rec import record`), not by
    the folders that hold it: the helper is the project's all the same."""
    write_project(
        in_tmp,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/rec.py": "_kept = {}\n\n\ndef record(name, value):\n    _kept[name] = value\n",
            "src/pkg/train.py": (
                "from pkg.rec import record\n\n\ndef step(loss, tokens, seconds):\n    record('train/loss', loss.mean())\n"
                "    record('train/tokens', tokens.sum())\n    record('perf/step_seconds', seconds)\n"
            ),
        },
    )
    result = invoke("init", ".")
    assert result.output.splitlines()[1:] == [
        'hint: record is handed 3 names shaped like metric keys ("perf/step_seconds", "train/loss", ...) that metriclint does not'
        " see logged; if it logs them, add it to log-functions under [tool.metriclint] and run init again"
    ]
