"""Callbacks handed to a framework's entry point (a Trainer's `on_log`): one that can be shown
to leave the entry point's keys alone keeps its facts; one that may change them, or that
metriclint cannot read, silences them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TRAINER_FACT_KEYS, write_project
from test_codefacts import _facts

from metriclint.sources.python import extract

TRAINER = "from transformers import Trainer\n\ntrainer = Trainer(model=None)\n"
ALL = TRAINER_FACT_KEYS


def _callback(body: str, signature: str = "self, args, state, control, logs=None, **kwargs", head: str = "") -> str:
    lines = "".join(f"        {line}\n" for line in body.splitlines())
    return f"{head}from transformers import TrainerCallback\n\n\nclass Hook(TrainerCallback):\n    def on_log({signature}):\n{lines}"


READ_ONLY = {
    "printed": "print(logs)",
    "iterated": "for key, value in logs.items():\n    self.writer.add_scalar(key, value, state.global_step)",
    "copy-sent": "self.tracker.log(dict(logs))",
    "unpacked-copy-sent": "self.tracker.log({**logs, 'step': state.global_step})",
    "read-by-key": "if 'loss' in logs:\n    self.gauge.set(logs['loss'])\nself.norm = logs.get('grad_norm', 0.0)",
    "formatted": "self.out.write(f'{state.global_step}: {logs}\\n')",
    "copy-changed": "shown = {k: round(v, 2) for k, v in logs.items()}\nshown['loss'] = 0.0\nprint(shown)",
    "rebound-to-copy": "logs = dict(logs)\nlogs.pop('loss', None)\nprint(logs)",
    "other-key-added": "if logs is not None:\n    logs['restarts'] = self.restarts",
    "other-key-popped": "_ = logs.pop('restarts', None)",  # a key the Trainer does not log ('epoch' it does)
    "other-keys-updated": "logs.update({'restarts': self.restarts})",
    "alias-read": "seen = logs or {}\nself.count += len(seen)",
    "unpacked-into-call": "self.tracker.log(step=state.global_step, **logs)",
}
REWRITES = {
    "key-rounded": "logs['loss'] = round(logs['loss'], 2)",
    "key-chosen-at-run-time": "logs[self.key] = 0.0",
    "updated-from-elsewhere": "logs.update(self.extra)",
    "key-deleted": "del logs['grad_norm']",
    "popped-by-name": "logs.pop(self.key)",
    "cleared": "logs.clear()",
    "handed-to-a-helper": "self.scrub(logs)",
    "written-through-an-alias": "shown = logs\nshown['loss'] = 0.0",
    "kept-for-later": "self.last = logs",
    "returned": "return logs",
    "augmented": "logs |= {'loss': 0.0}",
    "set-if-missing": "logs.setdefault('loss', 0.0)",
    "rebound-in-a-branch": "if self.copy:\n    logs = dict(logs)\nlogs['loss'] = 0.0",
    "handed-to-the-base": "super().on_log(args, state, control, logs=logs, **kwargs)",
    "method-kept": "self.drop = logs.pop",
}


@pytest.mark.parametrize("body", READ_ONLY.values(), ids=READ_ONLY.keys())
def test_a_callback_that_only_reads_the_logs_leaves_the_facts(in_tmp: Path, body: str) -> None:
    write_project(in_tmp, {"train.py": TRAINER, "callbacks.py": _callback(body)})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL


@pytest.mark.parametrize("body", REWRITES.values(), ids=REWRITES.keys())
def test_a_callback_that_may_change_a_logged_key_silences_the_facts(in_tmp: Path, body: str) -> None:
    write_project(in_tmp, {"train.py": TRAINER, "callbacks.py": _callback(body)})
    assert _facts(in_tmp) == []


@pytest.mark.parametrize(
    ("body", "silenced"),
    [
        ("print(kwargs.get('logs'))", False),
        ("self.calls += 1\nself.model = kwargs['model']", False),
        ("kwargs['logs']['loss'] = 0.0", True),
        ("found = kwargs.get('logs')\nfound.clear()", True),
        ("self.other.on_log(args, state, control, **kwargs)", True),
    ],
)
def test_logs_reached_through_the_keyword_arguments_are_followed(in_tmp: Path, body: str, silenced: bool) -> None:
    write_project(in_tmp, {"train.py": TRAINER, "callbacks.py": _callback(body, "self, args, state, control, **kwargs")})
    assert {metric for metric, *_ in _facts(in_tmp)} == (set() if silenced else ALL)


def test_a_hook_of_the_trainers_own_file_is_judged_the_same(in_tmp: Path) -> None:
    reads = TRAINER + "\n\ndef on_log(args, state, control, logs=None, **kwargs):\n    print(logs)\n"
    write_project(in_tmp, {"train.py": reads})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL
    write_project(in_tmp, {"train.py": reads.replace("print(logs)", "logs.clear()")})
    assert _facts(in_tmp) == []


BASE = "from transformers import TrainerCallback\n\n\nclass Base(TrainerCallback):\n    pass\n"
READER = (
    "from base import Base\n\n\nclass Mine(Base):\n    def on_log(self, args, state, control, logs=None, **kwargs):\n        print(logs)\n"
)
WRITER = READER.replace("print(logs)", "logs[self.key] = 0.0")


@pytest.mark.parametrize(
    ("train", "callback", "silenced"),
    [
        ("trainer = Trainer(model=None, callbacks=[Mine()])", READER, False),
        ("trainer = Trainer(model=None, callbacks=[Mine()])", WRITER, True),
        ("trainer = Trainer(model=None)\ntrainer.add_callback(Mine)", READER, False),
        ("trainer = Trainer(model=None)\ntrainer.add_callback(Mine())", WRITER, True),
        ("trainer = Trainer(model=None, callbacks=None)", WRITER, False),
        ("trainer = Trainer(model=None, callbacks=[EarlyStoppingCallback(3), Mine()])", READER, False),
        ("trainer = Trainer(model=None, callbacks=[make_callback()])", READER, True),
        ("callback = Mine()\ntrainer = Trainer(model=None)\ntrainer.add_callback(callback)", READER, True),
    ],
    ids=[
        "listed-reader",
        "listed-writer",
        "added-reader",
        "added-writer",
        "none",
        "shipped-and-reader",
        "made-elsewhere",
        "held-in-a-name",
    ],
)
def test_a_callback_passed_to_the_trainer_is_judged_by_its_class_in_the_project(
    in_tmp: Path, train: str, callback: str, silenced: bool
) -> None:
    head = "from transformers import EarlyStoppingCallback, Trainer\n\nfrom mine import Mine, make_callback\n\n"
    write_project(
        in_tmp, {"base.py": BASE, "mine.py": callback + "\n\ndef make_callback():\n    return Mine()\n", "train.py": head + train + "\n"}
    )
    assert {metric for metric, *_ in _facts(in_tmp)} == (set() if silenced else ALL)


@pytest.mark.parametrize(
    "callbacks",
    [
        {"train.py": "from swanlab.integration.transformers import SwanLabCallback\n\ntrainer.add_callback(SwanLabCallback())\n"},
        {
            "mine.py": "from swanlab.integration.transformers import SwanLabCallback\n\n\nclass Mine(SwanLabCallback):\n    pass\n",
            "train.py": "from mine import Mine\n\ntrainer.add_callback(Mine())\n",
        },
    ],
    ids=["another-packages-callback", "extends-another-packages-callback"],
)
def test_a_callback_whose_on_log_is_not_known_silences_the_facts(in_tmp: Path, callbacks: dict[str, str]) -> None:
    files = dict(callbacks)
    files["train.py"] = TRAINER + files["train.py"]
    write_project(in_tmp, files)
    assert _facts(in_tmp) == []


@pytest.mark.parametrize(("callback", "silenced"), [(READER, False), (WRITER, True)])
def test_a_callback_a_project_trainer_adds_to_itself_is_judged_by_its_class(in_tmp: Path, callback: str, silenced: bool) -> None:
    trainer = (
        "from transformers import Trainer\n\nfrom mine import Mine\n\n\nclass Tuned(Trainer):\n"
        "    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n        self.add_callback(Mine())\n"
    )
    write_project(in_tmp, {"base.py": BASE, "mine.py": callback, "tuned.py": trainer})
    assert {metric for metric, *_ in _facts(in_tmp)} == (set() if silenced else ALL)


FACTORY = (
    "from transformers import EarlyStoppingCallback\n\nfrom mine import Mine\n\nCALLBACKS = {'mine': Mine, 'stop': EarlyStoppingCallback}\n\n\n"
    "def get_callbacks(names):\n    callbacks = []\n    for name in names:\n        if name not in CALLBACKS:\n"
    "            raise ValueError(name)\n        callbacks.append(CALLBACKS[name]())\n    return callbacks\n"
)


@pytest.mark.parametrize(
    ("factory", "callback", "silenced"),
    [
        (FACTORY, READER, False),
        (FACTORY, WRITER, True),
        (FACTORY.replace("    return callbacks\n", "    register(callbacks)\n    return callbacks\n"), READER, True),
        (
            FACTORY.replace("'stop': EarlyStoppingCallback", "'lab': SwanLabCallback").replace(
                "from mine", "from swanlab import SwanLabCallback\nfrom mine"
            ),
            READER,
            True,
        ),
        (
            "from mine import Mine\n\n\ndef get_callbacks(args):\n    if args.quiet:\n        return []\n    return [Mine(), make()]\n",
            READER,
            True,
        ),
        (
            "from mine import Mine\n\n\ndef get_callbacks(args):\n    found = [Mine()] if args.mine else []\n    found += [Mine()]\n    return found\n",
            READER,
            False,
        ),
        (
            "from mine import Mine\n\n\ndef get_callbacks(args):\n    found = []\n    if args.quiet:\n        return found\n    found.append(Mine)\n    return found\n",
            READER,
            False,
        ),
    ],
    ids=["readers", "a-writer", "list-handed-on", "another-packages", "one-made-elsewhere", "built-up", "returned-twice"],
)
def test_callbacks_a_function_of_the_project_lists_are_judged_by_their_classes(
    in_tmp: Path, factory: str, callback: str, silenced: bool
) -> None:
    train = "from transformers import Trainer\n\nfrom factory import get_callbacks\n\ntrainer = Trainer(model=None, callbacks=get_callbacks(args))\n"
    write_project(in_tmp, {"base.py": BASE, "mine.py": callback, "factory.py": factory, "train.py": train})
    assert {metric for metric, *_ in _facts(in_tmp)} == (set() if silenced else ALL)


def test_callbacks_the_framework_makes_are_its_own(in_tmp: Path) -> None:
    train = (
        "from transformers import Trainer\nfrom transformers.integrations import get_reporting_integration_callbacks\n\n"
        "trainer = Trainer(model=None, callbacks=get_reporting_integration_callbacks(['wandb']))\n"
    )
    write_project(in_tmp, {"train.py": train})
    assert {metric for metric, *_ in _facts(in_tmp)} == ALL


@pytest.mark.parametrize("names", ["b = a\n    a = b", "a += a"])
def test_names_of_a_list_bound_in_a_circle_leave_its_callbacks_unknown_and_the_file_read(names: str) -> None:
    code = f"from mine import Mine\n\n\ndef get_callbacks(args):\n    a = [Mine()]\n    {names}\n    return a\n"
    assert extract("factory.py", code.encode()).callback_lists == ()
