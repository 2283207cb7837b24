"""How a dashboard's code reads its tooltip table: rules/tooltips.yaml carries examples (code ->
the lookup inferred from it, or none); each one is a test."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import invoke, write_project

from metriclint.base.builtin import rules_dir
from metriclint.model import Binding, TooltipTable
from metriclint.sources import python
from metriclint.sources.javascript import extractor

EXAMPLES = yaml.safe_load((rules_dir() / "tooltips.yaml").read_text(encoding="utf-8"))["examples"]


def _table(language: str, code: str) -> TooltipTable:
    data = code.encode()
    extraction = python.extract("t.py", data) if language == "python" else extractor(".js")("t.js", data)
    (table,) = extraction.tables
    return table


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e['language']}-{i}" for i, e in enumerate(EXAMPLES)])
def test_lookup_example(example: dict[str, str]) -> None:
    table = _table(example["language"], example["code"])
    found = table.lookup
    mode = Binding(table, found.match, found.strip_prefix, "", found.first, found.lower).mode if found else "none"
    assert mode == example["lookup"]


def test_the_examples_show_both_sides_in_both_languages() -> None:
    for language in ("javascript", "python"):
        said = [e["lookup"] for e in EXAMPLES if e["language"] == language]
        assert "none" in said and any(s != "none" for s in said), language


def test_a_lookup_cites_its_function_and_line() -> None:
    code = 'const T = [["loss", "training loss"]];\n\nconst describe = (key) =>\n  T.find(([p]) => key.includes(p));\n'
    found = _table("javascript", code).lookup
    assert found is not None and (found.function, found.line) == ("describe", 4)


def test_an_unsafe_pattern_in_a_table_read_as_regex_is_ml900(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "a.py": 'def f(t, x, y, z):\n    t.log({"train/loss": x, "train/kl": y, "perf/step_time": z})\n',
            "ui.js": (
                'const HELP = [["(?=l)lo", "never"], ["kl", "KL"], ["loss", "loss"], ["time", "seconds"]];\n'
                "function help(key) {\n"
                "  for (const [pattern, text] of HELP) {\n"
                "    if (new RegExp(pattern).test(key)) return text;\n"
                "  }\n"
                "}\n"
            ),
        },
    )
    result = invoke("check", ".")
    assert "ui.js:1:16: ML900 tooltip table 'HELP' not read" in result.output
