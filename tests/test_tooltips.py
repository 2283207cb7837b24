"""Which entry each match mode selects for a key, the way a dashboard selects it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, write_project

from metriclint.knowledge.registry import MetricEntry, Registry
from metriclint.language.attribution import MetricIndex
from metriclint.language.tooltips import Binding, MetricNames, bind, select
from metriclint.model import Mention, SourceKind, Span, TooltipEntry, TooltipTable
from metriclint.sources import Extraction, Unreadable, json_tables
from metriclint.sources.javascript import extractor


def _table(*patterns: str) -> TooltipTable:
    entries = tuple(
        TooltipEntry(p, Mention(SourceKind.TOOLTIP, "t.js", p, ((i + 1, 1),)), Span("t.js", i + 1, 1, i + 1, 2), i)
        for i, p in enumerate(patterns)
    )
    return TooltipTable("t.js", "javascript", "T", entries)


def _shown(match: str, strip: bool, patterns: tuple[str, ...], logged: list[str]) -> dict[str, str]:
    names = MetricNames(MetricIndex(None, logged), {})
    binding = Binding(_table(*patterns), match, strip, "test")
    return {s.key: s.entry.pattern for s in select(binding, names)}


@pytest.mark.parametrize(
    ("match", "strip", "patterns", "expected"),
    [
        ("substring", True, ("value", "value_loss"), {"train/value": "value", "train/value_loss": "value"}),
        ("substring", True, ("value_loss", "value"), {"train/value": "value", "train/value_loss": "value_loss"}),
        ("regex", True, ("^value$", "loss$"), {"train/value": "^value$", "train/value_loss": "loss$"}),
        ("regex", True, ("[", "value"), {"train/value": "value", "train/value_loss": "value"}),
        ("suffix", False, ("loss", "value_loss", "value"), {"train/value": "value", "train/value_loss": "value_loss"}),
        ("glob", False, ("train/*", "train/value_*"), {"train/value": "train/*", "train/value_loss": "train/value_*"}),
        ("exact", True, ("value",), {"train/value": "value"}),
        ("exact", False, ("value", "train/value_loss"), {"train/value_loss": "train/value_loss"}),
        ("prefix", True, ("val", "value_"), {"train/value": "val", "train/value_loss": "value_"}),
    ],
)
def test_match_modes(match: str, strip: bool, patterns: tuple[str, ...], expected: dict[str, str]) -> None:
    assert _shown(match, strip, patterns, ["train/value", "train/value_loss"]) == expected


def test_an_exact_table_shows_the_whole_key_then_its_name_then_an_alias_each_first_in_table_order() -> None:
    entry = MetricEntry("train/value", Span("metrics.yaml", 3, 3, 3, 14), ("val",), None, {})
    registry = Registry("metrics.yaml", {"train/value": entry})
    names = MetricNames(MetricIndex(registry, ["train/value", "train/value_loss"]), {})

    def shown(*patterns: str) -> dict[str, int]:
        binding = Binding(_table(*patterns), "exact", True, "test")
        return {s.key: s.entry.order for s in select(binding, names)}

    assert shown("val", "value", "train/value", "train/value") == {"train/value": 2}
    assert shown("val", "value", "value") == {"train/value": 1}
    assert shown("val", "value_loss", "val") == {"train/value": 0, "train/value_loss": 1}


def test_template_keys_are_looked_up_with_empty_placeholders() -> None:
    assert _shown("substring", True, ("grad_norm",), ["train/{tag}grad_norm"]) == {"train/{tag}grad_norm": "grad_norm"}
    # a template whose empty instance is logged too would only repeat that key
    assert _shown("exact", True, ("grad_norm",), ["train/{tag}grad_norm", "train/grad_norm"]) == {"train/grad_norm": "grad_norm"}


def test_javascript_positions_are_exact_past_escapes_and_wide_characters() -> None:
    source = 'const T = [\n  ["kl", "KL — \\"ref\\" policy, in nats"],\n];\n'.encode()
    (table,) = extractor(".js")("t.js", source).tables
    entry = table.entries[0]
    line = source.decode().splitlines()[1]
    offset = entry.text.text.index("in nats")
    assert entry.text.position(offset) == (2, line.index("in nats") + 1)


@pytest.mark.parametrize("suffix", [".js", ".json"])
def test_positions_on_a_minified_line_of_many_kilobytes_are_exact(suffix: str) -> None:
    """Columns on a long line are counted from points along it; wide characters straddle them."""
    pairs = ",".join(f'"train/m{i}":"{"—" * (i % 7)}键 mean per token {i}"' for i in range(600))
    text = f"{{{pairs}}}" if suffix == ".json" else f"export const T={{{pairs}}};"
    source = ("\ufeff" + text).encode()
    extraction = extractor(suffix)("t" + suffix, source) if suffix == ".js" else json_tables.extract("t.json", source)
    (table,) = extraction.tables
    assert len(table.entries) == 600
    for entry in table.entries:
        number = entry.pattern.removeprefix("train/m")
        offset = entry.text.text.index(f"token {number}")
        assert entry.text.position(offset) == (1, text.index(f'token {number}"') + 1)
        assert entry.span.column == text.index(f'"{entry.pattern}"') + 1


def test_a_configured_table_name_that_is_not_there_is_exit_2(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "pyproject.toml": '[tool.metriclint]\n\n[[tool.metriclint.tooltips]]\npath = "ui.js"\ntable = "NOPE"\n',
            "ui.js": 'const HELP = [["loss", "training loss"]];\n',
        },
    )
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr == "pyproject.toml:3:1: no tooltip table 'NOPE' in files matching 'ui.js'; tables there: HELP\n"


def test_bad_match_mode_is_exit_2(in_tmp: Path) -> None:
    (in_tmp / "pyproject.toml").write_text('[tool.metriclint]\n[[tool.metriclint.tooltips]]\npath = "a.js"\nmatch = "fuzzy"\n')
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert (
        result.stderr == 'pyproject.toml:4:9: unknown match mode "fuzzy"; expected one of: exact, prefix, suffix, substring, regex, glob\n'
    )


def test_sources_lists_what_was_read(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "a.py": 'def f(t, x, y, z):\n    t.log({"train/loss": x, "train/kl": y, "perf/step_time": z})\n',
            "ui.ts": 'export const HELP = { loss: "training loss", kl: "KL", step_time: "seconds" } as const;\n',
        },
    )
    result = invoke("sources", ".")
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        "ui.ts\ttypescript\tHELP\texact, strip_prefix\t3 entries\tauto: 3 of 3 patterns name known metrics"
    )


def test_sources_cites_the_function_that_reads_a_table(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "a.py": 'def f(t, x, y, z):\n    t.log({"train/loss": x, "train/kl": y, "perf/step_time": z})\n',
            "ui.js": (
                'const HELP = [["kl", "KL"], ["loss", "loss"], ["step", "seconds"], ["grad", "norm"]];\n'
                "function help(key) {\n"
                '  const rest = key.slice(key.indexOf("/") + 1);\n'
                "  for (const [pattern, text] of HELP) {\n"
                "    if (rest.startsWith(pattern)) return text;\n"
                "  }\n"
                "}\n"
            ),
        },
    )
    result = invoke("sources", ".")
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        "ui.js\tjavascript\tHELP\tprefix, first match, strip_prefix\t4 entries\tlookup in help at line 4: "
        "`startsWith` (prefix), a loop that returns on a match (first match), cut after the first '/' (strip_prefix); "
        "3 of 4 entries shown for known metrics"
    )


def test_unparsable_javascript_is_ml900(in_tmp: Path) -> None:
    write_project(in_tmp, {"bad.js": "const x = [\n", "good.py": "x = 1\n"})
    result = invoke("check", ".")
    assert result.exit_code == 0
    assert "bad.js:" in result.output and "ML900 cannot parse JavaScript: syntax error" in result.output


@pytest.mark.parametrize(("name", "language"), [("t.js", "JavaScript"), ("t.ts", "TypeScript"), ("t.json", "JSON")])
def test_a_table_that_is_not_utf8_is_ml900_at_the_first_bad_byte(in_tmp: Path, name: str, language: str) -> None:
    """tree-sitter reads any bytes; the texts would quote characters the file does not hold."""
    table = '{\n  "train/a": "mean",\n  "train/b": "é \xff after clipping"\n}\n'.encode("utf-8", "surrogateescape")
    data = table if name.endswith(".json") else b"export const T = " + table
    (in_tmp / name).write_bytes(data.replace(b"\xc3\xbf", b"\xff"))
    result = invoke("check", ".")
    assert f"{name}:3:17: ML900 cannot decode {language}: not UTF-8 (invalid start byte)" in result.output


def test_json_data_without_a_table_shape_is_not_parsed() -> None:
    """Golden values and number series cannot hold a table, so tree-sitter is not even asked
    (it would call the NaN below an error, as Python's parser does not). JSON that Python's
    parser rejects, or that has a table's shape anywhere, is read in full."""
    golden = b'{"lm loss": {"values": {"1": 10.8, "5": "nan", "10": NaN}}}'
    assert json_tables.extract("golden.json", golden) == Extraction()
    with pytest.raises(Unreadable):
        json_tables.extract("broken.json", b'{"lm loss": {"values": {"1": 10.8,, "5": "nan"}}}')
    found = json_tables.extract("help.json", b'{"meta": {"n": 1}, "help": [["train/loss", "mean loss per token"]]}').tables
    assert [(t.name, [e.pattern for e in t.entries]) for t in found] == [("/help", ["train/loss"])]
    nested = json_tables.extract("nested.json", b'{"a": [{"train/loss": {"help": "mean loss"}}]}').tables
    assert [(t.name, [e.pattern for e in t.entries]) for t in nested] == [("/a/0", ["train/loss"])]


def test_bind_without_configuration_skips_tables_that_name_no_metric() -> None:
    names = MetricNames(MetricIndex(None, ["train/loss"]), {})
    assert bind([_table("colour", "size", "shape")], (), Path("."), names) == []
