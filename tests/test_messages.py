"""Log messages: which words of a message speak for each value it formats (rules/log_messages.yaml)."""

from __future__ import annotations

import ast

import pytest
import yaml

from metriclint.base import keys
from metriclint.base.builtin import rules_dir
from metriclint.model import Mention, SourceKind
from metriclint.sources import python
from metriclint.sources.python import said
from metriclint.sources.python.messages import Field, call_messages, message_fields, prints
from metriclint.sources.python.text import PythonText

EXAMPLES = yaml.safe_load((rules_dir() / "log_messages.yaml").read_text(encoding="utf-8"))["examples"]


def _fields(message: str) -> dict[str, str]:
    source = f"x = {message}\n"
    text = PythonText(source.encode())
    statement = text.parse().body[0]
    assert isinstance(statement, ast.Assign)
    found = {}
    value = statement.value
    for field in call_messages(value, text) if isinstance(value, ast.Call) and prints(value) else message_fields(value, text):
        mention = Mention(SourceKind.LOG, "t.py", field.text, field.origins)
        # the text is the file's own characters, the field blanked out: every offset lands on what is written
        for offset, char in enumerate(field.text):
            line, column = mention.position(offset)
            assert char in " \n" or source.splitlines()[line - 1][column - 1] == char
        found[ast.unparse(field.value)] = " ".join(field.text.split())
    return found


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["message"] for e in EXAMPLES])
def test_rule_file_example(example: dict[str, object]) -> None:
    expected = {name: words for name, words in dict(example["fields"]).items() if words}  # type: ignore[call-overload]
    assert _fields(str(example["message"])) == expected


def test_the_examples_show_both_sides() -> None:
    assert any(e["fields"] for e in EXAMPLES) and any(not all(e["fields"].values()) for e in EXAMPLES)


@pytest.mark.parametrize(
    "message",
    ['f"{x:>{width}} GB"', '"%*d GB" % (w, x)', '"%(x)s GB" % d', '"{0.attr} GB".format(x)', 'b"%d GB" % x', '"%d GB" "%" % x'],
)
def test_a_message_not_read_whole_gives_nothing(message: str) -> None:
    assert _fields(message) == {}


CODE = """import logging
import torch

logger = logging.getLogger(__name__)


def step(tracker, tokens):
    used = torch.cuda.memory_allocated() / 2**30
    tracker.log({"perf/used": used})
    logger.info(f"{used:.1f} GiB in use")
    other = tokens * 2
    logger.info(f"{other} GiB spare")
    used = 0
    print(f"{used} GB free")
"""


def test_a_message_speaks_for_a_value_only_where_that_value_is_logged() -> None:
    """A value that is only printed is checked as one of its own, named for where it is printed."""
    mentions = [m for m in python.extract("t.py", CODE.encode()).mentions if m.source == SourceKind.LOG]
    logged = [m for m in mentions if not any(map(keys.is_printed, m.flows_to))]
    assert [(m.origins, " ".join(m.text.split()), m.flows_to) for m in logged] == [(((10, 19),), "GiB in use", ("perf/used",))]
    assert [m.flows_to for m in mentions if m not in logged] == [("other (printed at t.py:12)",), ("used (printed at t.py:14)",)]


def test_a_value_whose_words_a_neighbour_shares_is_not_checked_alone() -> None:
    code = "import time\n\n\ndef f(a, b):\n    print(f'{a:.1f}/{b:.1f} ms')\n    print(f'{a:.1f} ms, {b:.1f} s')\n"
    mentions = [m for m in python.extract("t.py", code.encode()).mentions if m.source == SourceKind.LOG]
    assert [(m.origins[0][0], m.flows_to) for m in mentions] == [(6, ("a (printed at t.py:6)",)), (6, ("b (printed at t.py:6)",))]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["message"] for e in EXAMPLES])
def test_each_field_formats_a_value_found_without_reading_the_message(example: dict[str, object]) -> None:
    """said.compose keeps a message's values where it is written and reads the message only
    once it is printed: no field may format a value that `formatted_values` misses."""
    text = PythonText(f"x = {example['message']}\n".encode())
    statement = text.parse().body[0]
    assert isinstance(statement, ast.Assign)
    values = {id(v) for v in said.formatted_values(statement.value)}
    assert all(id(field.value) in values for field in message_fields(statement.value, text))


COMPOSED = """def step(tracker, root, name, used):
    path = f"{root}/{name}.pt"
    label = "%s at %s" % (name, root)
    line = f"{used:.1f} GB in use"
    tracker.log({"memory/used": used})
    print(line)
"""


def test_a_message_put_together_in_a_variable_is_read_only_once_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []

    def reading(node: ast.expr, text: PythonText) -> list[Field]:
        read.append(ast.unparse(node))
        return message_fields(node, text)

    monkeypatch.setattr(said, "message_fields", reading)
    mentions = [m for m in python.extract("t.py", COMPOSED.encode()).mentions if m.source == SourceKind.LOG]
    assert read == ["f'{used:.1f} GB in use'"]
    assert [(" ".join(m.text.split()), m.flows_to) for m in mentions] == [("GB in use", ("memory/used",))]


def test_a_projects_own_log_function_prints_messages_past_the_first_test_of_every_call() -> None:
    code = b'def step(tracker, used):\n    tracker.log({"memory/used": used})\n    emit_line(f"{used:.1f} GB in use")\n'

    def messages(log_functions: frozenset[str]) -> list[str]:
        return [" ".join(m.text.split()) for m in python.extract("t.py", code, log_functions).mentions if m.source == SourceKind.LOG]

    assert messages(frozenset({"emit_line"})) == ["GB in use"]
    assert messages(frozenset()) == []
