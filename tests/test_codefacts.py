"""Code evidence: the knowledge base, the data flow across modules, explain-metric."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, code_claims, invoke, write_project

from metriclint.knowledge import code_knowledge as knowledge
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import CodeFact, ConfigError, Span
from metriclint.sources.python.call_names import module_name
from metriclint.sources.python.code_reader import CodeReader
from metriclint.sources.python.text import PythonText


def _facts(project: Path, with_says: bool = False) -> list[tuple[str, str, str, str]]:
    code = code_claims(project)
    return [(c.metric, c.fact.facet, c.fact.value, c.fact.origin + (c.fact.says if with_says else "")) for c in code]


KNOWLEDGE_FIXTURES = sorted(p.parent for p in FIXTURES.glob("know_*/expected.txt") if p.read_text(encoding="utf-8"))
CODE_FIXTURES = [FIXTURES / "code_evidence", *KNOWLEDGE_FIXTURES]


def test_every_knowledge_base_entry_is_reached_by_a_fixture() -> None:
    origins = {origin for project in CODE_FIXTURES for _, _, _, origin in _facts(project, with_says=True)}
    known = knowledge.knowledge()
    for entry in [*known.chains.values(), *known.methods.values(), *known.functions.values()]:
        parts = entry.pattern.removesuffix("()").removeprefix("builtins.").split("().")
        assert any(all(part in origin for part in parts) for origin in origins), entry.pattern
    for derivations in known.derivations.values():
        for derivation in derivations:
            assert any(origin.endswith(derivation.says) for origin in origins), derivation.says
    for entries in known.logging.values():
        for logged in entries:
            assert any(origin.endswith(logged.says) for origin in origins), logged.says
    for entry_point in dict.fromkeys(known.entry_points.values()):
        for framework_key in entry_point.keys:
            assert not framework_key.facts or any(framework_key.says in origin for origin in origins), framework_key.says
    for sink in known.unreduced:
        assert any(sink.says in origin for origin in origins), sink.says


@pytest.mark.parametrize("project", KNOWLEDGE_FIXTURES, ids=[p.name for p in KNOWLEDGE_FIXTURES])
def test_every_knowledge_fixture_has_a_silent_twin(project: Path) -> None:
    twin = project.with_name(project.name + "_silent")
    assert (twin / "expected.txt").read_text(encoding="utf-8") == ""


def test_a_broken_knowledge_file_reports_every_problem_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "results:\n"
        "  - call: a.b\n    says: x\n    facts: {clipping: sideways}\n"
        "  - method: m\n    facts: {}\n"
        "  - call: c.d\n    says: y\n    facts: {colour: red}\n    element: one\n",
        encoding="utf-8",
    )
    facets, _, _ = load_builtin()
    with pytest.raises(ConfigError) as error:
        knowledge.load([path], facets)
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:4:13: unknown value 'sideways' for facet 'clipping'",
        "bad.yaml:5:5: an entry needs one of 'call', 'method', 'expression' or 'function', and 'says' and 'facts'",
        "bad.yaml:9:13: unknown facet 'colour'",
        "bad.yaml:10:14: expected a whole number, not one",
    ]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg/mod.py", ("pkg.mod", ["pkg"])),
        ("pkg/__init__.py", ("pkg", ["pkg"])),
        ("./a/b/c.py", ("a.b.c", ["a", "b"])),
    ],
)
def test_module_names_follow_the_path(path: str, expected: tuple[str, list[str]]) -> None:
    assert module_name(path) == expected


def test_absolute_imports_reach_a_project_under_a_source_root(in_tmp: Path) -> None:
    files = {
        "src/app/report.py": 'def report(norm):\n    """Args:\n        norm: After clipping.\n    """\n    return {"train/grad_norm": norm}\n',
        "src/app/train.py": "import torch\nfrom app.report import report\n\n\ndef go(p):\n    report(torch.nn.utils.clip_grad_norm_(p, 1.0))\n",
    }
    write_project(in_tmp, files)
    assert ("train/grad_norm", "clipping", "before", "torch.nn.utils.clip_grad_norm_") in _facts(in_tmp)


def test_self_method_calls_skip_self(in_tmp: Path) -> None:
    source = (
        "import torch\n\n\nclass Trainer:\n"
        "    def log(self, norm, scale):\n        return {'train/grad_norm': norm, 'train/scale': scale}\n\n"
        "    def step(self, p):\n        self.log(torch.nn.utils.clip_grad_norm_(p, 1.0), 2.0)\n"
    )
    write_project(in_tmp, {"trainer.py": source})
    facts = _facts(in_tmp)
    assert ("train/grad_norm", "clipping", "before", "torch.nn.utils.clip_grad_norm_") in facts
    assert not [f for f in facts if f[0] == "train/scale"]


def test_a_project_function_named_like_a_builtin_is_still_followed(in_tmp: Path) -> None:
    """Calls of Python's builtins are skipped as never reaching the project, unless the module
    defines the name itself."""
    source = (
        "import torch\n\n\ndef max(p):\n    return torch.nn.utils.clip_grad_norm_(p, 1.0)\n\n\n"
        "def step(p):\n    return {'train/grad_norm': max(p), 'train/count': len(p)}\n"
    )
    write_project(in_tmp, {"trainer.py": source})
    assert sorted(_facts(in_tmp)) == [
        ("train/grad_norm", "clipping", "before", "torch.nn.utils.clip_grad_norm_"),
        ("train/grad_norm", "norm", "l2", "torch.nn.utils.clip_grad_norm_"),
    ]


def test_a_standard_library_call_is_not_followed_into_a_project_module_of_that_name(in_tmp: Path) -> None:
    """`import logging` imports Python's own module, whatever file of the project ends in
    logging.py: its calls reach no project function (and are not read, which saves time)."""
    helper = "import torch\n\n\ndef info(p):\n    return torch.nn.utils.clip_grad_norm_(p, 1.0)\n"
    source = "import logging\n\n\ndef step(p):\n    return {'train/grad_norm': logging.info(p)}\n"
    write_project(in_tmp, {"tools/logging.py": helper, "tools/train.py": source})
    assert _facts(in_tmp) == []


def test_a_project_package_named_like_a_standard_module_is_followed(in_tmp: Path) -> None:
    helper = "import torch\n\n\ndef norm(p):\n    return torch.nn.utils.clip_grad_norm_(p, 1.0)\n"
    source = "from code.clip import norm\n\n\ndef step(p):\n    return {'train/grad_norm': norm(p)}\n"
    write_project(in_tmp, {"code/clip.py": helper, "code/train.py": source})
    assert ("train/grad_norm", "clipping", "before", "torch.nn.utils.clip_grad_norm_") in _facts(in_tmp)


def test_a_cycle_of_calls_ends(in_tmp: Path) -> None:
    source = "def a(x):\n    return b(x)\n\n\ndef b(x):\n    return a(x)\n\n\ndef c():\n    return {'train/x': a(1)}\n"
    write_project(in_tmp, {"loop.py": source})
    assert _facts(in_tmp) == []


def test_explain_metric_shows_code_facts_with_their_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "code_evidence_registry")
    result = invoke("explain-metric", "train/grad_norm")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "train/grad_norm",
        "registry (metrics.yaml:3):",
        "  clipping=before",
        "  norm=l1",
        "code:",
        "  clipping=before  torch.nn.utils.clip_grad_norm_ (step.py:14) returns the total norm computed before clipping",
        "  norm=l2  torch.nn.utils.clip_grad_norm_ (step.py:14) computes the l2 norm (the default norm_type)",
        "texts:",
        '  clipping=after  docstring (step.py:8) "after clipping"',
        '  norm=l1  docstring (step.py:8) "L1 norm"',
        "findings:",
        "  metrics.yaml:7:7: ML006 train/grad_norm: registry says norm=l1; the value comes from torch.nn.utils.clip_grad_norm_ (step.py:14), "
        "which computes the l2 norm (the default norm_type) [error]",
        '  step.py:8:34: ML001 train/grad_norm: docstring says clipping=after ("after clipping"); registry says before (metrics.yaml:6) [error]',
        '  step.py:8:56: ML006 train/grad_norm: docstring says norm=l1 ("L1 norm"); the value comes from torch.nn.utils.clip_grad_norm_ (step.py:14), '
        "which computes the l2 norm (the default norm_type) [error]",
        "logged:",
        "  step.py:10",
    ]


@pytest.mark.parametrize(
    ("project", "metric", "line"),
    [
        (
            "know_overwritten",
            "actor/penalty",
            '  reduction=last  stats["actor/penalty"] (update.py:10) is stored under the same key in every loop iteration,'
            " so the dict keeps the last iteration's value",
        ),
        (
            "know_boundary",
            "train/loss",
            "  reduction=last  loss.mean().item() * self.accumulation_steps (engine.py:10) is computed from one micro-batch's data"
            " and logged only when the gradient-accumulation window ends, so it is the last micro-batch's value",
        ),
        (
            "know_held",
            "phase/stages",
            '  unit=seconds  timers("stages").elapsed() / 1000.0 (phasekit/engine.py:25) converts milliseconds to seconds'
            " (deepspeed.utils.timer.SynchronizedWallClockTimer()().elapsed sums the intervals a DeepSpeed wall-clock timer ran"
            " since its last reset, in milliseconds (CUDA events, DeepSpeed 0.6.2 on))",
        ),
        (
            "know_hook_lr",
            "optim/lr",
            '  timing=next-step  trainer.optimizers[0].param_groups[0]["lr"] (monitor.py:9) is read in a hook its framework calls'
            " after the training loop has stepped the scheduler, so it is the learning rate of the next step",
        ),
    ],
)
def test_explain_metric_shows_what_loops_gates_and_hooks_make_of_a_value(
    project: str, metric: str, line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 30: a dict item stored in a loop, a value logged where the accumulation window ends,
    a timer group a class keeps on `self` read in a subclass's method, a rate read in a hook the
    framework calls after stepping the scheduler."""
    monkeypatch.chdir(FIXTURES / project)
    result = invoke("explain-metric", metric)
    assert line in result.output.splitlines(), result.output


def test_a_rate_read_in_a_framework_hook_names_the_hook_as_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook is half the evidence: the same read in on_train_batch_start is the current rate."""
    monkeypatch.chdir(FIXTURES / "know_hook_lr")
    report = json.loads(invoke("check", ".", "--format", "json").stdout)
    related = {(f["path"], f["line"]): [(r["path"], r["line"], r["text"]) for r in f["related"]] for f in report["findings"]}
    assert related[("monitor.py", 10)][-1] == (
        "monitor.py",
        8,
        "on_train_batch_end, which the framework calls after its loop stepped the scheduler",
    )
    assert related[("metrics.yaml", 6)][-1][:2] == ("monitor.py", 14)


def test_a_rate_read_in_a_method_called_after_the_scheduler_stepped_names_the_step_as_evidence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 item 5: the step is in the caller; the read alone is the current rate."""
    monkeypatch.chdir(FIXTURES / "know_stepped_methods")
    report = json.loads(invoke("check", ".", "--format", "json").stdout)
    related = {(f["path"], f["line"]): [(r["path"], r["line"], r["text"]) for r in f["related"]] for f in report["findings"]}
    assert related[("metrics.yaml", 6)][-1] == ("worker.py", 13, "report, which finish_step calls after self.scheduler.step()")
    assert related[("worker.py", 21)][-1] == ("worker.py", 13, "report, which finish_step calls after self.scheduler.step()")


def test_a_last_iteration_value_names_where_it_is_read_after_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The read after the loop is half the evidence: read inside the loop, the same value is each
    iteration's. The finding cites the assignment and the read (issue 30, item 1)."""
    monkeypatch.chdir(FIXTURES / "know_last_read")
    report = json.loads(invoke("check", ".", "--format", "json").stdout)
    related = {(f["path"], f["line"]): [(r["path"], r["line"], r["text"]) for r in f["related"]] for f in report["findings"]}
    assert [place[:2] for place in related[("metrics.yaml", 6)]] == [("sft.py", 8), ("sft.py", 11)]
    assert related[("metrics.yaml", 6)][-1][2] == "loss.item(), which reads it after the loop"


@pytest.mark.parametrize(
    ("where", "known"),
    [
        ("module", True),  # a module's name: its functions read it
        ("class", False),  # a class attribute is no name of the module's functions
    ],
)
def test_an_object_a_module_keeps_resolves_in_its_functions(in_tmp: Path, where: str, known: bool) -> None:
    made = "clock = SynchronizedWallClockTimer()\n"
    source = (
        "from deepspeed.utils.timer import SynchronizedWallClockTimer\n\n"
        + (made if where == "module" else "class Holder:\n    " + made)
        + "\n\ndef report(tracker):\n    tracker.log({'time/step': clock('step').elapsed()})\n"
    )
    write_project(in_tmp, {"report.py": source})
    assert bool(_facts(in_tmp)) == known


def test_explain_metric_of_an_unknown_metric_is_a_usage_error_as_in_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "code_evidence_registry")
    result = invoke("explain-metric", "train/unknown")
    assert (result.exit_code, result.stderr) == (
        2,
        "metriclint: no metric 'train/unknown' is registered, logged or named in the checked files\n",
    )


def test_a_helper_that_returns_its_argument_keeps_each_call_apart(in_tmp: Path) -> None:
    source = (
        "import torch\n\n\ndef same(x):\n    return x.item()\n\n\n"
        "def f(p, log_metrics, count_zeros):\n"
        "    n = same(torch.nn.utils.clip_grad_norm_(p, 1.0))\n"
        "    z = same(count_zeros(p))\n"
        "    log_metrics({'train/grad_norm': n, 'train/zeros': z})\n"
    )
    write_project(in_tmp, {"helpers.py": source})
    facts = _facts(in_tmp)
    assert ("train/grad_norm", "clipping", "before", "torch.nn.utils.clip_grad_norm_") in facts
    assert not [f for f in facts if f[0] == "train/zeros"]


def test_explain_metric_says_when_the_value_depends_on_the_path(in_tmp: Path) -> None:
    source = "import time\n\n\ndef f(fast, log):\n    t = time.time()\n    if fast:\n        t = time.time_ns()\n    log({'perf/t': t})\n"
    write_project(in_tmp, {"clock.py": source})
    result = invoke("explain-metric", "perf/t")
    assert "  unit: depends on the path: seconds, nanoseconds" in result.output.splitlines()


def test_explain_metric_and_audit_choose_the_same_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    """One builder: an alias finds its metric in both (explain-metric once knew only keys)."""
    monkeypatch.chdir(FIXTURES / "demo")
    by_alias, by_key = invoke("explain-metric", "grad_norm"), invoke("explain-metric", "train/grad_norm")
    assert (by_alias.exit_code, by_alias.output) == (0, by_key.output)
    assert by_key.output.splitlines()[:2] == ["train/grad_norm", "registry (metrics.yaml:3):"]
    audited = invoke("audit", "--metric", "grad_norm").output.splitlines()[0]
    assert audited.startswith("train/grad_norm ")


def test_a_template_names_the_keys_it_covers_in_explain_metric_and_audit(in_tmp: Path) -> None:
    source = "def f(log, a, b):\n    log({'eval/top1': a, 'eval/top5': b, 'train/loss': a})\n"
    write_project(in_tmp, {"evaluate.py": source})
    audit = invoke("audit", "--metric", "eval/{k}").output.splitlines()
    assert [line.split()[0] for line in audit if line.endswith("]") and not line.startswith(" ")] == ["eval/top1", "eval/top5"]
    logged = ["eval/{k}", "logged:", "  evaluate.py:2  by a tracker's log (Lightning, wandb's Run, Accelerate, the Hugging Face Trainer)"]
    assert invoke("explain-metric", "eval/{k}").output.splitlines() == logged


def test_names_of_log_probabilities_name_their_policy_as_the_examples_say() -> None:
    ratios = knowledge.knowledge().log_ratios
    assert {policy for _, policy in ratios.examples} >= {None, "current", "reference", "old"}
    assert [(name, ratios.policy(name)) for name, _ in ratios.examples] == list(ratios.examples)


@pytest.mark.parametrize(
    ("pair", "sampler"),
    [
        (("current", "reference"), 0),
        (("reference", "current"), 1),
        (("current", "old"), 1),
        (("old", "current"), 0),
        (("rollout", "old"), 0),
        (("current", "rollout"), 1),
        (("old", "reference"), 0),
        (("current", "teacher"), None),
        (("teacher", "reference"), None),
    ],
)
def test_the_policy_that_drew_the_tokens_decides_a_log_ratios_sign(pair: tuple[str, str], sampler: int | None) -> None:
    assert knowledge.knowledge().log_ratios.sampler(pair) == sampler


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("log_probs - ref_log_probs", [("estimator", "k1"), ("policy", "reference")]),
        ("old_logp - cur_logp", [("estimator", "k1"), ("policy", "old")]),
        ("ref_log_probs - log_probs", [("estimator", "negative-k1"), ("policy", "reference")]),
        ("cur_logp - old_logp", [("estimator", "negative-k1"), ("policy", "old")]),
        ("rollout_log_probs - old_log_probs", [("estimator", "k1")]),
        ("old_log_probs - rollout_log_probs", [("estimator", "negative-k1")]),
        ("log_probs - teacher_log_probs", [("policy", "teacher")]),  # who drew the tokens is not certain
        ("teacher_log_probs - log_probs", [("policy", "teacher")]),
        ("-r", [("estimator", "negative-k1"), ("policy", "reference")]),
        ("-(ref_log_probs - log_probs)", [("estimator", "k1"), ("policy", "reference")]),
        ("0.5 * r ** 2", [("estimator", "k2"), ("policy", "reference")]),
        ("r.pow(2) / 2", [("estimator", "k2"), ("policy", "reference")]),
        ("r.square() * 0.5", [("estimator", "k2"), ("policy", "reference")]),
        ("0.5 * (ref_log_probs - log_probs) ** 2", [("estimator", "k2"), ("policy", "reference")]),
        ("0.5 * (log_probs - teacher_log_probs) ** 2", []),
        ("torch.exp(-r) - 1 + r", [("estimator", "k3"), ("policy", "reference")]),
        ("(-r).exp() - 1 + r", [("estimator", "k3"), ("policy", "reference")]),
        ("torch.exp(r) - r - 1", []),  # exp of the sampler's minus the other's: no estimator of the KL
        ("torch.exp(-t) - 1 + t", []),
        ("log_probs - log_probs_base", []),
        ("log_probs - log_probs", []),
        ("logits - ref_logits", []),
        ("r ** 2", []),
        ("0.5 * r ** 3", []),
        ("torch.exp(r) - 1", []),
        ("torch.exp(r) + r - 1", []),
        ("torch.exp(r) - 1 - s", []),
        ("torch.exp(r) - r - 2", []),
        ("r * 3", []),
    ],
)
def test_kl_estimators_are_read_only_from_their_whole_formula(in_tmp: Path, expression: str, expected: list[tuple[str, str]]) -> None:
    source = (
        "import torch\n\n\ndef f(log_probs, ref_log_probs, old_logp, cur_logp, old_log_probs, rollout_log_probs,"
        " teacher_log_probs, log_probs_base, logits, ref_logits, s, log):\n"
        f"    r = log_probs - ref_log_probs\n    t = log_probs - teacher_log_probs\n    log({{'kl/value': {expression}}})\n"
    )
    write_project(in_tmp, {"kl.py": source})
    assert sorted((facet, value) for _, facet, value, _ in _facts(in_tmp)) == expected


@pytest.mark.parametrize(
    ("expression", "entropy"),
    [
        ("-(probs * log_probs).sum(-1)", True),
        ("-(log_probs * probs).sum(dim=-1)", True),
        ("-torch.sum(p * torch.log(p), dim=-1)", True),
        ("-(log_probs.exp() * log_probs).sum(-1)", True),
        ("-(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1)", True),
        ("-(ref_probs * ref_log_probs).sum(-1)", True),
        ("-(teacher_probs * log_probs).sum(-1)", False),  # a cross-entropy
        ("-(logits.softmax(-1) * other.log_softmax(-1)).sum(-1)", False),
        ("-(probs * logits).sum(-1)", False),
        ("-(probs * log_probs).mean(-1)", False),
        ("(probs * log_probs).sum(-1)", False),
    ],
)
def test_an_entropy_is_read_only_from_the_negated_sum_of_p_log_p(in_tmp: Path, expression: str, entropy: bool) -> None:
    source = (
        "import torch\n\n\ndef f(logits, other, probs, log_probs, p, ref_probs, ref_log_probs, teacher_probs, log):\n"
        f"    log({{'actor/h': {expression}}})\n"
    )
    write_project(in_tmp, {"h.py": source})
    assert (("actor/h", "quantity", "entropy") in [f[:3] for f in _facts(in_tmp)]) is entropy


def test_a_broken_logging_entry_is_reported_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "logging:\n  - method: log\n    when: {sync_dist: yes please}\n    says: x\n    facts: {scope: everywhere}\n"
        "  - method: log\n    says: y\n    facts: {}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as error:
        knowledge.load([path], load_builtin()[0])
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:3:23: 'sync_dist' must be true or false, not yes please",
        "bad.yaml:5:13: unknown value 'everywhere' for facet 'scope'",
        "bad.yaml:6:5: a logging entry needs 'method', 'when', 'says' and 'facts'",
    ]


def test_broken_rank_entries_are_reported_with_their_positions(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "unreduced:\n  - call: wandb.log\n  - method: log\n    call: x.log\n    says: y\n"
        "alike:\n  - {facet: scope, values: [per-rank]}\n  - {facet: scope, values: [per-rank, per-planet]}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as error:
        knowledge.load([path], load_builtin()[0])
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:2:5: an unreduced logging call needs one of 'call' or 'method', and 'says'",
        "bad.yaml:3:5: an unreduced logging call needs one of 'call' or 'method', and 'says'",
        "bad.yaml:7:5: a pair of alike values needs 'facet' and two 'values'",
        "bad.yaml:8:39: unknown value 'per-planet' for facet 'scope'",
    ]


def test_a_declared_helper_keeps_the_facets_of_its_argument_it_names(in_tmp: Path) -> None:
    registry = (
        "version: 1\ncode:\n  results:\n    - function: masked_mean\n      says: averages over the kept tokens\n"
        "      facts: {reduction: mean}\n      keeps: [estimator, policy]\nmetrics: {}\n"
    )
    source = (
        "from trainkit.ops import masked_mean\n\n\ndef f(log_probs, ref_log_probs, mask, log):\n"
        "    log({'actor/kl': masked_mean(log_probs - ref_log_probs, mask), 'actor/x': masked_mean(mask, mask)})\n"
    )
    write_project(in_tmp, {"metrics.yaml": registry, "kl.py": source})
    assert sorted(f[:3] for f in _facts(in_tmp)) == [
        ("actor/kl", "estimator", "k1"),
        ("actor/kl", "policy", "reference"),
        ("actor/kl", "reduction", "mean"),
        ("actor/x", "reduction", "mean"),
    ]


_STEP = """def step(self, batch, writer, tracker, group):
    start = time.perf_counter()
    tokens = batch["input_ids"].numel()
    elapsed = time.perf_counter() - start
{body}
"""
_HEAD = "import time\nimport torch.distributed as dist\nimport wandb\nfrom trainkit.comm import sync_counts\n\n\n"


@pytest.mark.parametrize(
    ("body", "owner", "scopes"),
    [
        ('wandb.log({"perf/tps": tokens / elapsed})', "", ["per-rank"]),
        ('wandb.run.log({"perf/tps": float(tokens)})', "", ["per-rank"]),
        ('writer.add_scalar("perf/tps", tokens / elapsed, 1)', "", ["per-rank"]),
        ('writer.add_scalars("perf", {"perf/tps": tokens}, 1)', "", ["per-rank"]),
        ('self.log("perf/tps", tokens)', "pl.LightningModule", ["per-rank"]),
        ('self.log_dict({"perf/tps": tokens}, sync_dist=False)', "LightningModule", ["per-rank"]),
        ('self.log("perf/tps", tokens)', "Base", []),  # a project's own log method
        ('self.log("perf/tps", tokens, sync_dist=multi)', "LightningModule", []),
        ('self.add_scalar("perf/tps", tokens, 1)', "", []),
        ('tracker.log({"perf/tps": tokens})', "", []),  # a logging helper that may reduce
        ('metrics = {"perf/tps": tokens}\nwandb.log(metrics)', "", []),  # a dict handed on
        ('sync_counts(tokens)\nwandb.log({"perf/tps": tokens})', "", []),
        ('dist.all_reduce(tokens, group=group)\nwandb.log({"perf/tps": tokens})', "", []),
        ('dist.all_reduce(tokens)\nwandb.log({"perf/tps": tokens})', "", ["global"]),
        ('if group:\n    dist.all_reduce(tokens)\nwandb.log({"perf/tps": tokens})', "", ["global", "per-rank"]),  # ML006: no one value
        ('wandb.log({"perf/tps": tokens * dist.get_world_size() / elapsed})', "", []),
        ('wandb.log({"perf/tps": tokens + 1})', "", []),
        ("return tokens", "", []),  # its caller may reduce it
        ('wandb.log({"perf/tps": self.seen["input_ids"].numel()})', "", []),
        ('every = sync_counts(batch["input_ids"])\nwandb.log({"perf/tps": every.numel()})', "", []),
    ],
)
def test_a_value_of_this_ranks_batch_is_per_rank_only_up_to_a_logging_call_that_does_not_reduce(
    in_tmp: Path, body: str, owner: str, scopes: list[str]
) -> None:
    function = _STEP.format(body=textwrap.indent(body, "    "))
    source = _HEAD + (f"class M({owner}):\n" + textwrap.indent(function, "    ") if owner else function)
    caller = (
        "from trainkit.loop import step\n\n\ndef run(batch, tracker):\n    tracker.log({'perf/tps': step(None, batch, None, None, None)})\n"
    )
    write_project(in_tmp, {"trainkit/__init__.py": "", "trainkit/loop.py": source, "trainkit/run.py": caller})
    found = sorted((value, origin) for _, facet, value, origin in _facts(in_tmp) if facet == "scope")
    assert [value for value, _ in found] == scopes, source
    assert all(origin == 'batch["input_ids"].numel()' for value, origin in found if value == "per-rank")


@pytest.mark.parametrize(
    ("loop", "per_rank"),
    [
        ("for batch in loader:", True),
        ("for step, batch in enumerate(tqdm(self.train_dataloader())):", True),
        ("for batch in batches:", False),  # not named as a data loader: it may hold every rank's batches
        ("for step, batch in enumerate(loader):\n    batch = gather(batch)", False),
        ("for batch, step in enumerate(loader):", False),
        ("for step, pair in enumerate(loader):\n    batch, labels = pair", True),
        ("for pair in batches:\n    batch, labels = pair", False),
    ],
)
def test_the_batch_of_a_loop_over_a_data_loader_is_this_ranks_own(in_tmp: Path, loop: str, per_rank: bool) -> None:
    source = (
        "import wandb\nfrom tqdm import tqdm\n\n\ndef train(self, loader, batches, gather):\n"
        + textwrap.indent(loop, "    ")
        + '\n        wandb.log({"perf/tokens": batch["input_ids"].numel()})\n'
    )
    write_project(in_tmp, {"train.py": source})
    assert (("perf/tokens", "scope", "per-rank") in [f[:3] for f in _facts(in_tmp)]) is per_rank, source


def test_a_declared_helper_may_say_its_value_is_this_ranks_own(in_tmp: Path) -> None:
    registry = (
        "version: 1\ncode:\n  results:\n    - function: count_tokens\n      says: counts the tokens of a batch\n"
        "      facts: {unit: tokens}\n      local: counts the tokens of this rank's batch\nmetrics: {}\n"
    )
    source = (
        "import wandb\nfrom trainkit.counts import count_tokens\n\n\ndef f(batch, tracker):\n"
        "    wandb.log({'perf/tokens': count_tokens(batch)})\n    tracker.log({'perf/seen': count_tokens(batch)})\n"
    )
    write_project(in_tmp, {"metrics.yaml": registry, "loop.py": source})
    assert sorted(f[:3] for f in _facts(in_tmp)) == [
        ("perf/seen", "unit", "tokens"),
        ("perf/tokens", "scope", "per-rank"),
        ("perf/tokens", "unit", "tokens"),
    ]


@pytest.mark.parametrize(("policy", "also"), [("current", ("entropy",)), ("reference", ()), ("teacher", ())])
def test_a_negated_log_probability_estimates_the_entropy_of_the_policy_that_drew_the_tokens(policy: str, also: tuple[str, ...]) -> None:
    """-log p of sampled tokens is an NLL, and of the policy's own samples an entropy estimate
    (rules/code/quantities.yaml `also`); a reference's or a teacher's log-probabilities did not
    draw the tokens."""
    source = "-token_logps\n"
    tree = ast.parse(source)
    reader = CodeReader("t.py", tree, PythonText(source.encode()), knowledge.knowledge())
    span = Span("t.py", 1, 2, 1, 13)
    operand = frozenset({CodeFact("quantity", "log-prob", span, "x", "y"), CodeFact("policy", policy, span, "x", "y")})
    (made,) = [f for f in reader.derived("negation", tree.body[0].value, operand) if isinstance(f, CodeFact)]  # type: ignore[attr-defined]
    assert (made.value, made.also) == ("nll", also)


def test_explain_metric_of_a_key_a_template_registers(in_tmp: Path) -> None:
    # The template's entry, the metric's findings, and the project's logging sites before the tests'.
    registry = "version: 1\nmetrics:\n  train/{name}:\n    description: A training quantity.\n    semantics: {clipping: before}\n"
    source = (
        'def f(grad_norm, log):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n    log({"train/grad_norm": grad_norm})\n'
    )
    test = 'def test_f(log):\n    log({"train/grad_norm": 1.0})\n    log({"train/grad_norm": 2.0})\n'
    write_project(in_tmp, {"loop.py": source, "tests/test_loop.py": test}, registry)
    assert invoke("explain-metric", "train/grad_norm").output.splitlines() == [
        "train/grad_norm",
        "registry train/{name} (metrics.yaml:3):",
        "  clipping=before",
        "texts:",
        '  clipping=after  docstring (loop.py:3) "after clipping"',
        "findings:",
        '  loop.py:3:25: ML001 train/{name}: docstring says clipping=after ("after clipping"); registry says before (metrics.yaml:5) [error]',
        "logged:",
        "  loop.py:5  by a tracker's log (Lightning, wandb's Run, Accelerate, the Hugging Face Trainer)",
        "  and 2 places in test files",
    ]


_KEPT = """import time

import torch.distributed as dist
import lightning.pytorch as pl


class Counted(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.count += batch["input_ids"].numel()
        return batch

    def on_before_optimizer_step(self, optimizer):
        self.log("perf/tokens", self.count)
        self.count = 0
"""


@pytest.mark.parametrize(
    ("edit", "facts"),
    [
        ((), {("perf/tokens", "scope", "per-rank"), ("perf/tokens", "unit", "tokens")}),
        # another method all-reduces the count in place: no longer this rank's own, still tokens
        (
            (
                "        self.count = 0\n",
                "        self.count = 0\n\n    def on_train_epoch_end(self):\n        dist.all_reduce(self.count)\n",
            ),
            {("perf/tokens", "unit", "tokens")},
        ),
        # read above a write the walk has not met: what that write puts there is not known
        (("    def training_step(self, batch, batch_idx):", "    def training_step(self, batch, batch_idx, count=0):"), set()),
        # a write of something not known: nothing is
        (("        self.count = 0\n", "        self.count = len(optimizer.param_groups) * 2\n"), set()),
    ],
    ids=["kept", "all-reduced elsewhere", "read above a write", "written otherwise"],
)
def test_what_a_class_keeps_in_an_attribute_is_known_in_its_other_methods(
    in_tmp: Path, edit: tuple[str, str] | tuple[()], facts: set[tuple[str, str, str]]
) -> None:
    """Issue 30 item 5: a count added up on `self` in one method and logged in another."""
    source = _KEPT.replace(*edit) if edit else _KEPT
    if "count=0" in source:  # the hook that logs the count first, the method that adds it up below it
        step, hook = source.split("    def on_before_optimizer_step")
        head, step = step.split("    def training_step")
        source = head + "    def on_before_optimizer_step" + hook + "\n    def training_step" + step
    write_project(in_tmp, {"counted.py": source})
    found = {(metric, facet, value) for metric, facet, value, _ in _facts(in_tmp)}
    assert found == facts


@pytest.mark.parametrize(
    ("bound", "local"),
    [
        ('labels = batch.pop("labels").to(self.device)\n        labels = labels.view(-1)', True),
        ('labels = batch["labels"]', True),
        ("labels = self.collect(batch)", False),  # a call of the project's own may gather every rank's
    ],
)
def test_a_name_bound_to_a_part_of_the_batch_counts_this_ranks_own_tokens(in_tmp: Path, bound: str, local: bool) -> None:
    source = (
        "import lightning.pytorch as pl\n\n\nclass Step(pl.LightningModule):\n"
        "    def training_step(self, batch, batch_idx):\n"
        f"        {bound}\n"
        '        self.log("train/tokens", labels.numel())\n'
    )
    write_project(in_tmp, {"step.py": source})
    found = {(facet, value) for _, facet, value, _ in _facts(in_tmp)}
    assert (("scope", "per-rank") in found) is local


@pytest.mark.parametrize(
    ("reads", "logs", "last"),
    [
        ("self.trainer.accumulate_grad_batches", 'self.log("train/loss", loss)', True),
        ("self.trainer.max_steps", 'self.log("train/loss", loss)', False),  # no sign of accumulation: the micro-batch is the step
        ("self.trainer.accumulate_grad_batches", 'self.log("train/loss", loss, on_step=False, on_epoch=True)', False),
        ("self.trainer.accumulate_grad_batches", 'wandb.log({"train/loss": loss})', False),  # written at every micro-batch
    ],
    ids=["accumulating", "not accumulating", "per epoch", "another logger"],
)
def test_a_value_logged_per_micro_batch_is_the_windows_last(in_tmp: Path, reads: str, logs: str, last: bool) -> None:
    """Issue 30 item 6: Lightning writes a training_step's step values where the accumulation window ends."""
    source = (
        "import wandb\n\n\nclass Model(Base):\n"
        "    def training_step(self, batch, batch_idx):\n"
        '        loss = self.net(batch["input_ids"]).loss\n'
        f"        {logs}\n"
        "        return loss\n\n"
        "    def window(self):\n"
        f"        return {reads}\n"
    )
    write_project(in_tmp, {"model.py": source})
    assert (("train/loss", "reduction", "last") in {f[:3] for f in _facts(in_tmp)}) is last


@pytest.mark.parametrize(
    ("expression", "norm"),
    [
        ("g.norm()", "l2"),
        ("g.norm(2)", "l2"),
        ("g.norm(p=1)", "l1"),
        ("g.norm(float('inf'))", "inf"),
        ("g.detach().norm(2, dim=-1).cpu()", "l2"),
        ("rows[0]", "l2"),  # one of a tensor of norms, one per row
        ("g.data.norm(1).item()", "l1"),
        ("torch.norm(g)", "l2"),
        ("torch.norm(g, 1)", "l1"),
        ("torch.linalg.vector_norm(g, ord=math.inf)", "inf"),
        ("torch.linalg.vector_norm(g)", "l2"),
        ("g.norm(order)", "lp"),  # of an order the caller chooses: a p-norm, which one the code does not say
        ("g.norm(2) ** 0.5", "not-a-norm"),
        ("g.norm(order) ** (1 / order)", "not-a-norm"),
        ("round(norm.data.cpu().numpy().flatten()[0] ** (1.0 / order), 3)", "not-a-norm"),
        ("g.norm(2) ** 2", ""),  # a squared norm is no norm either, but nothing names it so
        ("g.norm(2) ** (1 / order)", ""),  # order 1 would leave the L2 norm as it is
        ("(g.norm(2) ** 2 + h.norm(2) ** 2) ** 0.5", ""),  # the L2 norm of both: no root of a norm
        ("torch.linalg.norm(g, 2)", ""),  # of a matrix, its largest singular value
        ("numpy.linalg.norm(g)", ""),
        ("g.norm('fro')", ""),
        ("self.norm(g)", ""),  # the project's own method, or a normalization layer it holds
    ],
)
def test_a_norm_is_read_from_its_order_and_a_root_of_a_norm_is_no_norm(in_tmp: Path, expression: str, norm: str) -> None:
    source = (
        "import math\n\nimport numpy\nimport torch\n\n\nclass Probe:\n    def f(self, g, h, order, log):\n"
        "        rows = g.norm(dim=1)\n        norm = g.norm(order)\n"
        f"        log({{'grad/size': {expression}}})\n"
    )
    write_project(in_tmp, {"sizes.py": source})
    assert [value for _, facet, value, _ in _facts(in_tmp) if facet == "norm"] == ([norm] if norm else [])


def test_a_root_of_a_norm_of_any_order_may_still_be_called_an_l1_norm() -> None:
    """`n ** (1 / p)` of `n = x.norm(p)` is the L1 norm when p is 1: a text saying so is not ruled out."""
    derived = [d for d in knowledge.knowledge().derivations["norm-root"] if d.given == ("norm", "lp")]
    assert [d.also for d in derived] == [(("norm", "l1"),)]


@pytest.mark.parametrize(
    ("shown", "facts"),
    [
        # a function that logs: its parameter named like a metric may reach that metric's value
        # through arithmetic the walk does not follow, so what its callers pass speaks for it
        ('wandb.log({"show/count": len(logs)})', {"reduction=min"}),
        # the twin: a helper that only prints; its parameter's name is all it shares with the metric
        ("print(len(logs))", set()),
    ],
)
def test_a_parameter_named_like_a_metric_speaks_for_it_only_in_a_function_that_logs(tmp_path: Path, shown: str, facts: set[str]) -> None:
    project = write_project(
        tmp_path / "project",
        {
            "pkg/__init__.py": "",
            "pkg/env.py": 'import wandb\n\n\ndef report(batch, step):\n    wandb.log({"env/num_samples": len(batch)}, step=step)\n',
            "pkg/validate.py": "from pkg.show import show_samples\n\n\ndef validate(logs, limit):\n    show_samples(logs, num_samples=min(limit, len(logs)))\n",
            "pkg/show.py": f"import wandb\n\n\ndef show_samples(logs, num_samples):\n    {shown}\n    print(logs[:num_samples])\n",
        },
    )
    found = {
        f"{c.fact.facet}={c.fact.value}" for c in code_claims(project) if c.metric == "env/num_samples" and c.fact.facet == "reduction"
    }
    assert found == facts
