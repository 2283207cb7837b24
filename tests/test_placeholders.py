"""A value that is a constant placeholder unless a flag is set: which flags are off by default,
which assignments wait for one, and when ML006 holds a text to the placeholder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import invoke, write_project

from metriclint.model import CodeFact, Span
from metriclint.sources.python import extract, flags

SPAN = Span("cli.py", 1, 1, 1, 1)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ('p.add_argument("--track-slots", action="store_true")', ("track_slots", True)),
        ('p.add_argument("--track-slots", action="store_true", default=True)', ("track_slots", False)),
        ('p.add_argument("--no-track", action="store_false", dest="track")', ("track", False)),
        ('p.add_argument("--clip-grad", type=float, default=1.0)', ("clip_grad", False)),
        ('p.add_argument("--warmup", type=int, default=0)', ("warmup", True)),
        ('p.add_argument("-t", "--tag")', ("tag", True)),
        ('p.add_argument("--mode", action="count")', ("mode", False)),
        ('p.add_argument("path")', None),
        ('p.add("--track")', None),
    ],
)
def test_an_argparse_option_is_off_by_default_only_when_it_stores_nothing_truthy(call: str, expected: tuple[str, bool] | None) -> None:
    node = ast.parse(call).body[0].value  # type: ignore[attr-defined]
    asked: list[ast.AST] = []

    def where(option: ast.AST) -> Span:
        asked.append(option)
        return SPAN

    found = flags.option(node, where)
    assert ((found.name, found.off) if found else None) == expected
    assert asked == ([node] if expected else [])  # the walk asks about every call: a span is made for an option only


@pytest.mark.parametrize(
    ("test", "flag"),
    [
        ("args.track", "args.track"),
        ("self.cfg.track", "self.cfg.track"),
        ("track", "track"),
        ("not args.track", ""),
        ("args.track and x", ""),
        ("args.clip > 0", ""),
        ("f()", ""),
        ("args.f().x", ""),
    ],
)
def test_only_a_flag_read_by_itself_is_a_flag_test(test: str, flag: str) -> None:
    assert flags.flag_test(ast.parse(test, mode="eval").body) == flag


WAITS = "import statistics\n\n\ndef f(args, v, log):\n    x = 0.0\n    if args.track:\n        x = max(v)\n    log({'a/x': x})\n"


@pytest.mark.parametrize(
    ("source", "flag"),
    [
        (WAITS, "args.track"),
        (WAITS.replace("    x = 0.0\n", "    x = 0\n"), "args.track"),
        (WAITS.replace("    x = 0.0\n", "    x = 1.0\n"), None),  # a default value, not a placeholder
        (WAITS.replace("        x = max(v)\n", "        x = max(v)\n    else:\n        x = min(v)\n"), None),
        (WAITS.replace("        x = max(v)\n", "        if v:\n            x = max(v)\n"), None),  # waits for more than the flag
        (WAITS.replace("    x = 0.0\n", "    x = 0.0\n    x = sum(v)\n"), None),  # the placeholder was replaced before
        (WAITS.replace("    log({'a/x': x})\n", "        log({'a/x': x})\n"), None),  # logged only with the flag set
        (WAITS.replace("if args.track:", "if args.track > 0:"), None),
    ],
)
def test_an_assignment_under_a_flag_after_a_zero_waits_for_the_flag(source: str, flag: str | None) -> None:
    flows = extract("m.py", source.encode()).functions
    facts = [a for f in flows for _, atoms in f.sinks for a in atoms if isinstance(a, CodeFact)]
    assert [getattr(a.placeholder, "flag", None) for a in facts] == [flag] * len(facts) and facts


CLI = 'import argparse\n\n\ndef parse(p):\n    p.add_argument("--track", {how})\n'


@pytest.mark.parametrize(
    ("how", "comment", "found"),
    [
        ('action="store_true"', "the maximum over slots", True),
        ('action="store_true"', "the maximum over slots with --track, else 0", False),  # states the condition
        ('action="store_true"', "not the maximum over slots", False),
        ('action="store_true", default=True', "the maximum over slots", False),  # the flag is on by default
        ("type=int, default=3", "the maximum over slots", False),
    ],
)
def test_a_text_is_held_to_the_placeholder_only_when_the_flag_is_off_by_default(in_tmp: Path, how: str, comment: str, found: bool) -> None:
    stats = WAITS.replace("    log({'a/x': x})\n", f"    log({{'a/x': x}})  # {comment}\n")
    write_project(in_tmp, {"cli.py": CLI.format(how=how), "stats.py": stats}, "version: 1\nmetrics:\n  a/x: {}\n")
    output = invoke("check", "--no-cache", ".").output
    assert ("ML006 a/x: comment says reduction=max" in output) is found, output


def test_a_flag_defined_twice_one_way_on_is_not_off_by_default(in_tmp: Path) -> None:
    config = "from dataclasses import dataclass\n\n\n@dataclass\nclass C:\n    track: bool = True\n"
    stats = WAITS.replace("    log({'a/x': x})\n", "    log({'a/x': x})  # the maximum over slots\n")
    write_project(in_tmp, {"cli.py": CLI.format(how='action="store_true"'), "config.py": config, "stats.py": stats})
    assert "ML006" not in invoke("check", "--no-cache", ".").output


def test_explain_metric_says_the_value_depends_on_the_flag(in_tmp: Path) -> None:
    write_project(in_tmp, {"stats.py": WAITS}, "version: 1\nmetrics:\n  a/x: {}\n")
    assert (
        "  reduction: depends on the path: max when args.track is set, else the constant 0.0 (stats.py:5)"
        in invoke("explain-metric", "a/x", ".").output.splitlines()
    )
