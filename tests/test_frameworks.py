"""Keys a framework logs itself (rules/code/frameworks.yaml): the examples, and the facts that
reach the metrics at the entry point's use."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import TRAINER_FACT_KEYS, fixture_project, invoke, write_project
from test_codefacts import _facts

from metriclint.knowledge.code_knowledge import knowledge, load
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import ConfigError
from metriclint.sources.python import extract

ENTRY_POINTS = list(dict.fromkeys(knowledge().entry_points.values()))
EXAMPLES = [(entry.paths[0], code, logs) for entry in ENTRY_POINTS for code, logs in entry.examples]
LOGGED_RETURNS = list(dict.fromkeys(hook for hooks in knowledge().logged_returns.values() for hook in hooks))
RETURN_EXAMPLES = [(f"{hook.bases[0]}.{hook.method}", code, logs) for hook in LOGGED_RETURNS for code, logs in hook.examples]


def test_every_entry_point_has_examples_that_must_and_must_not_match() -> None:
    for entry in ENTRY_POINTS:
        assert any(logs for _, logs in entry.examples) and any(not logs for _, logs in entry.examples), entry.paths[0]


ALL = TRAINER_FACT_KEYS


@pytest.mark.parametrize(("entry", "code", "logs"), EXAMPLES, ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(EXAMPLES)])
def test_an_entry_point_logs_its_keys_as_its_examples_say(entry: str, code: str, logs: tuple[str, ...]) -> None:
    extraction = extract("train.py", textwrap.dedent(code).encode())
    assert [use.key for use in extraction.keys if not use.measured] == list(logs)


def test_every_logged_return_has_examples_that_must_and_must_not_match() -> None:
    assert LOGGED_RETURNS
    for hook in LOGGED_RETURNS:
        assert any(logs for _, logs in hook.examples) and any(not logs for _, logs in hook.examples), hook.method


@pytest.mark.parametrize(("hook", "code", "logs"), RETURN_EXAMPLES, ids=[f"{h}-{i}" for i, (h, _, _) in enumerate(RETURN_EXAMPLES)])
def test_a_method_whose_return_a_framework_logs_logs_its_keys_as_its_examples_say(hook: str, code: str, logs: tuple[str, ...]) -> None:
    """Keys a sink logs, less the framework's own (the Trainer's `loss`), logged by its loop."""
    extraction = extract("train.py", textwrap.dedent(code).encode())
    assert sorted(use.key for use in extraction.keys if use.sink and not use.framework) == sorted(logs)


def test_a_framework_key_carries_its_facts_with_the_use_and_the_source(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"})
    facts = _facts(in_tmp, with_says=True)
    facets = {
        "grad_norm": [("clipping", "before"), ("norm", "l2")],
        "loss": [("reduction", "mean"), ("scope", "global")],
        "train_loss": [("reduction", "mean")],
        "train_runtime": [("unit", "seconds")],
        "train_samples_per_second": [("unit", "samples/s")],
    }
    expected = [(spelling, *fact) for key, facts_of in facets.items() for spelling in (key, f"train/{key}") for fact in facts_of]
    assert sorted({(metric, facet, value) for metric, facet, value, _ in facts}) == sorted(expected)
    assert all(origin.startswith("transformers.Trainer") and "src/transformers/trainer.py" in origin for *_, origin in facts)


def test_a_framework_value_is_left_out_under_every_spelling_when_the_project_logs_it_itself(in_tmp: Path) -> None:
    trainer = "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"
    own = "import wandb\n\n\ndef report(norm):\n    wandb.log({'train/grad_norm': norm.recomputed()})\n"
    write_project(in_tmp, {"train.py": trainer, "report.py": own})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL - {"grad_norm", "train/grad_norm"}


def test_a_broken_entry_point_is_reported_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "entry_points:\n"
        "  - entry: [pkg.Loop]\n    says: x\n    source: pkg 1.0\n    overrides: log\n"
        "    keys:\n      - keys: [loss]\n        says: y\n        facts: {reduction: median}\n      - keys: [lr]\n"
        "    examples:\n      - code: 'pkg.Loop()'\n"
        "  - entry: [pkg.Other]\n    says: z\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as error:
        load([path], load_builtin()[0])
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:5:16: 'overrides' must be a list of text, not log",
        "bad.yaml:9:17: unknown value 'median' for facet 'reduction'",
        "bad.yaml:10:9: a framework key needs 'keys', 'says' and 'facts'",
        "bad.yaml:12:9: an example needs 'code' and 'logs'",
        "bad.yaml:13:5: an entry point needs 'entry', 'says', 'source' and 'keys'",
    ]


def test_the_audit_quotes_each_framework_key_with_its_own_reason(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"})
    audit = json.loads(invoke("audit", ".", "--format", "json").stdout)
    texts = {m["key"]: [s["text"] for s in m["statements"] if s["source"] == "code"] for m in audit["metrics"]}
    assert len(texts["grad_norm"]) == 1 and "before clipping" in texts["grad_norm"][0] and "logs loss" not in texts["grad_norm"][0]
    assert len(texts["loss"]) == 1 and "logs loss" in texts["loss"][0] and "clipping" not in texts["loss"][0]


def test_explain_metric_shows_a_framework_key_with_its_use_and_source(in_tmp: Path) -> None:
    write_project(in_tmp, {"train.py": "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"})
    lines = invoke("explain-metric", "train/grad_norm", ".").output.splitlines()
    assert lines[:2] == ["train/grad_norm", "code:"]
    assert any(
        line.strip().startswith("clipping=before  transformers.Trainer (train.py:3)") and "src/transformers/trainer.py" in line
        for line in lines
    )
    assert lines[-2:] == ["logged:", "  train.py:3  by Hugging Face transformers' Trainer, from its own loop"]


def test_a_subclass_that_logs_a_framework_key_itself_keeps_only_the_others(in_tmp: Path) -> None:
    trainer = "from transformers import Trainer\n\n\nclass Own(Trainer):\n    def training_step(self, model, inputs, n=None):\n        self.log({'grad_norm': model.weight_size()})\n"
    write_project(in_tmp, {"train.py": trainer})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL - {"grad_norm", "train/grad_norm"}


@pytest.mark.parametrize(
    ("callback", "silenced"),
    [
        (
            "from transformers import TrainerCallback\n\n\nclass Rewrite(TrainerCallback):\n    def on_log(self, args, state, control, logs=None, **kw):\n        logs['grad_norm'] = 0.0\n",
            True,
        ),
        (
            "from transformers.integrations import WandbCallback\n\n\nclass Quiet(WandbCallback):\n    def on_log(self, args, state, control, logs=None, **kw):\n        logs.update(self.extra)\n",
            True,
        ),
        (
            "from transformers import TrainerCallback\n\n\nclass Stop(TrainerCallback):\n    def on_step_end(self, args, state, control, **kw):\n        control.should_training_stop = True\n",
            False,
        ),
        ("class Rewrite:\n    def on_log(self, logs):\n        logs.clear()\n", False),
    ],
)
def test_a_callback_of_the_project_that_may_rewrite_the_logs_silences_the_entry_point_everywhere(
    in_tmp: Path, callback: str, silenced: bool
) -> None:
    trainer = "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"
    write_project(in_tmp, {"train.py": trainer, "callbacks.py": callback, "tests/test_callbacks.py": callback})
    assert (_facts(in_tmp) == []) is silenced


def test_a_test_files_callback_silences_nothing(in_tmp: Path) -> None:
    trainer = "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"
    callback = "from transformers import TrainerCallback\n\n\nclass Rewrite(TrainerCallback):\n    def on_log(self, args, state, control, logs=None, **kw):\n        logs.clear()\n"
    write_project(in_tmp, {"train.py": trainer, "tests/test_callbacks.py": callback})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL


BASE = "from transformers import Trainer\n\n\nclass Base(Trainer):\n    def _save_checkpoint(self, model, trial):\n        return None\n"


def _code_lines(project: Path, key: str) -> list[str]:
    lines = invoke("explain-metric", key, str(project)).output.splitlines()
    return [line.strip() for line in lines[lines.index("code:") + 1 : lines.index("logged:")]] if "code:" in lines else []


def test_a_subclass_of_a_project_trainer_logs_the_framework_keys_where_it_names_its_base(in_tmp: Path) -> None:
    tuned = "from base import Base\n\n\nclass Tuned(Base):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n"
    write_project(in_tmp, {"base.py": BASE, "tuned.py": tuned})
    lines = _code_lines(in_tmp, "grad_norm")
    assert [line.split("  ", 1)[0] for line in lines] == ["clipping=before", "norm=l2"]
    assert all(line.split("  ", 1)[1].startswith("transformers.Trainer (tuned.py:4)") for line in lines)


@pytest.mark.parametrize(
    ("files", "metrics"),
    [
        (
            {
                "tuned.py": "from base import Base\n\n\nclass Tuned(Base):\n    def log(self, logs, start_time=None):\n        super().log(logs)\n"
            },
            [],
        ),
        (
            {
                "tuned.py": "from base import Base\n\n\nclass Tuned(Base):\n    def _nested_gather(self, tensors, name=None):\n        return tensors\n"
            },
            sorted(ALL - {"loss", "train/loss"}),
        ),
        (
            {
                "mixins.py": "class Rounded:\n    def log(self, logs, start_time=None):\n        super().log({k: round(v, 2) for k, v in logs.items()})\n",
                "tuned.py": "from base import Base\nfrom mixins import Rounded\n\n\nclass Tuned(Rounded, Base):\n    pass\n",
            },
            [],
        ),
        (
            {
                "tuned.py": "from base import Base\n\n\nclass Tuned(Base):\n    def __init__(self, *a, **k):\n        super().__init__(*a, **k)\n        self.add_callback(make())\n"
            },
            [],
        ),
    ],
    ids=["log-in-subclass", "gather-in-subclass", "log-in-mixin", "callback-added-in-subclass"],
)
def test_a_method_a_class_along_the_way_overrides_silences_the_keys_it_makes(
    in_tmp: Path, files: dict[str, str], metrics: list[str]
) -> None:
    write_project(in_tmp, {"base.py": BASE, **files})
    assert sorted({metric for metric, *_ in _facts(in_tmp)}) == metrics


def test_a_mixin_that_extends_the_trainer_is_no_trainer_of_its_own(in_tmp: Path) -> None:
    mixin = "from transformers import Trainer\n\n\nclass StepMixin(Trainer):\n    def create_scheduler(self, steps, optimizer=None):\n        return None\n"
    full = (
        "from transformers import Trainer\nfrom mixins import StepMixin\n\n\n"
        "class Full(StepMixin, Trainer):\n    def log(self, logs, start_time=None):\n        super().log(logs)\n"
    )
    write_project(in_tmp, {"mixins.py": mixin, "full.py": full})
    assert _facts(in_tmp) == []


def test_a_base_re_exported_by_its_package_is_found(in_tmp: Path) -> None:
    tuned = "from pkg import Base\n\n\nclass Tuned(Base):\n    def log(self, logs, start_time=None):\n        super().log(logs)\n"
    write_project(in_tmp, {"pkg/__init__.py": "from pkg.base import Base\n", "pkg/base.py": BASE, "run.py": tuned})
    assert _facts(in_tmp) == []


def test_a_test_files_subclass_leaves_the_projects_trainer_a_trainer(in_tmp: Path) -> None:
    fake = "from base import Base\n\n\nclass Fake(Base):\n    def log(self, logs, start_time=None):\n        pass\n"
    write_project(in_tmp, {"base.py": BASE, "tests/test_base.py": fake})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL
    assert all(line.split("  ", 1)[1].startswith("transformers.Trainer (base.py:4)") for line in _code_lines(in_tmp, "loss"))


def test_a_broken_switch_is_reported_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "entry_points:\n"
        "  - entry: [pkg.start]\n    says: x\n    source: pkg 1.0\n"
        "    switched_on_by: {keywords: [config], flag: enabled}\n"
        "    keys:\n      - keys: [lr]\n        says: y\n        facts: {}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as error:
        load([path], load_builtin()[0])
    assert [str(p).removeprefix(str(tmp_path) + "/") for p in error.value.problems] == [
        "bad.yaml:5:21: 'switched_on_by' needs 'keywords', 'sections' and 'flag'",
    ]


def test_a_base_of_another_package_may_override_anything(in_tmp: Path) -> None:
    """`class Tuned(Mixin, ORPOTrainer)`, where the mixin extends the Trainer: the other
    package's trainer comes first and its methods are not known."""
    mixin = "from transformers import Trainer\n\n\nclass StepMixin(Trainer):\n    pass\n"
    tuned = (
        "from mixins import StepMixin\nfrom trl.experimental.orpo import ORPOTrainer\n\n\nclass Tuned(StepMixin, ORPOTrainer):\n    pass\n"
    )
    write_project(in_tmp, {"mixins.py": mixin, "tuned.py": tuned})
    assert _facts(in_tmp) == []


def test_a_mixin_of_the_project_with_no_base_is_no_foreign_class(in_tmp: Path) -> None:
    mixins = "class Seeded:\n    def seed(self):\n        return 0\n"
    tuned = "from base import Base\nfrom mixins import Seeded\n\n\nclass Tuned(Seeded, Base):\n    pass\n"
    write_project(in_tmp, {"base.py": BASE, "mixins.py": mixins, "tuned.py": tuned})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL


REPLACED = "from transformers import Trainer\n\nTrainer._maybe_log_save_evaluate = patched_log_save_evaluate\n"


@pytest.mark.parametrize(
    ("files", "metrics"),
    [
        ({"patches.py": REPLACED}, set()),
        ({"patches.py": "import transformers\n\nsetattr(transformers.Trainer, 'log', rounded_log)\n"}, set()),
        ({"patches.py": "from transformers import Trainer\n\nTrainer._nested_gather = gather_nothing\n"}, set()),
        ({"patches.py": "from transformers import Trainer\n\nTrainer.tag_names = ['project']\n"}, ALL),
        ({"tests/test_patches.py": REPLACED}, ALL),
    ],
    ids=["method-replaced", "method-set", "one-keys-method-replaced", "other-attribute", "in-a-test"],
)
def test_a_framework_method_the_project_replaces_in_place_silences_the_entry_point_everywhere(
    in_tmp: Path, files: dict[str, str], metrics: set[str]
) -> None:
    """A monkeypatch (`Trainer._maybe_log_save_evaluate = ...`, as axolotl patches it) changes
    the framework's own class for every use in the project, not only in its file; a test
    file's patch changes no training run."""
    write_project(in_tmp, {"train.py": "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n", **files})
    assert {metric for metric, *_ in _facts(in_tmp)} == metrics


def _evaluation_keys(project: Path) -> list[str]:
    """The keys the audit says the code logs, less those the Trainer's training loop logs."""
    result = invoke("audit", str(project), "--format", "json", "--no-cache")
    training = {key for entry in ENTRY_POINTS for logged in entry.keys for key in logged.keys}
    return sorted(m["key"] for m in json.loads(result.stdout)["metrics"] if m["logged"] and m["key"] not in training)


EVALUATED = [
    *(f"{prefix}_{key}" for prefix in ("eval", "holdout") for key in ("answer_tokens", "exact_match")),
    *(f"{prefix}_{key}" for prefix in ("eval", "holdout", "probe") for key in ("loss", "model_preparation_time", "runtime")),
    *(f"{prefix}_{key}" for prefix in ("eval", "holdout", "probe") for key in ("samples_per_second", "steps_per_second")),
    "probe_token_overlap",
]


def test_evaluate_and_predict_log_their_speed_loss_and_compute_metrics_keys_under_the_calls_prefix(tmp_path: Path) -> None:
    """`trainer.evaluate()` logs under "eval_", `predict(..., metric_key_prefix="holdout")` under
    "holdout_": the Trainer's own keys, and each key of the dict the `compute_metrics` callable
    the trainer was made with returns (an object's `__call__`, or a function passed through a
    `**` dict of keywords)."""
    project = fixture_project("inventory_trainer_eval", tmp_path)
    assert _evaluation_keys(project) == sorted(EVALUATED)


def test_nothing_is_logged_from_evaluation_where_nothing_evaluates_or_predicts(tmp_path: Path) -> None:
    project = fixture_project("inventory_trainer_eval_silent", tmp_path)
    assert _evaluation_keys(project) == []


QUIET_EVALUATIONS = {
    # the class evaluates its own way
    "an override of evaluate": """\
        from transformers import Trainer

        class Scored(Trainer):
            def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
                return {"score": 1.0}

        def run(model):
            Scored(model=model).evaluate()
        """,
    # a prefix metriclint cannot read
    "a prefix of the caller's": """\
        from transformers import Trainer

        def run(model, split):
            Trainer(model=model).evaluate  # named, not called
            trainer = Trainer(model=model)
            trainer.evaluate(metric_key_prefix=split.name)
        """,
    # another package's trainer, and one of the project's own
    "another trainer": """\
        from lightning.pytorch import Trainer

        class Runner:
            def evaluate(self, metric_key_prefix="eval"):
                return {}

        def run(model, data):
            Trainer(max_epochs=1).predict(model, data)
            Runner().evaluate()
        """,
}


@pytest.mark.parametrize("case", list(QUIET_EVALUATIONS), ids=list(QUIET_EVALUATIONS))
def test_an_evaluation_the_trainer_does_not_make_its_way_logs_nothing(case: str, tmp_path: Path) -> None:
    write_project(tmp_path, {"run.py": textwrap.dedent(QUIET_EVALUATIONS[case])})
    assert _evaluation_keys(tmp_path) == []


CALLED_EXAMPLES = [(entry.paths[0], code, logs) for entry in ENTRY_POINTS if entry.called for code, logs in entry.called.examples]


def test_every_called_method_block_has_examples_that_must_and_must_not_match() -> None:
    assert CALLED_EXAMPLES
    for entry in ENTRY_POINTS:
        if entry.called is not None:
            examples = entry.called.examples
            assert any(logs for _, logs in examples) and any(not logs for _, logs in examples), entry.paths[0]


@pytest.mark.parametrize(("entry", "code", "logs"), CALLED_EXAMPLES, ids=[f"{e}-{i}" for i, (e, _, _) in enumerate(CALLED_EXAMPLES)])
def test_a_method_the_project_calls_logs_its_keys_as_its_examples_say(entry: str, code: str, logs: tuple[str, ...], tmp_path: Path) -> None:
    write_project(tmp_path, {"train.py": textwrap.dedent(code)})
    assert _evaluation_keys(tmp_path) == sorted(logs)
