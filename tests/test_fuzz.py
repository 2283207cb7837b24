"""Fuzz targets: generated Python, Markdown, Grafana dashboards, JSON, JS, TS, registries and
whole projects, and the inputs that are not source code (settings tables, code knowledge files,
baselines, cache files), shaped like what metriclint reads so that its parsers' deep paths are taken,
with odd pieces mixed in. Whatever comes in, a source gives its texts or says why not (ML900),
every phrase is reported where the file writes it, a registry is loaded or its problems
listed, and a run ends with an exit status and its report, never a traceback.

Each target runs a few examples in the normal suite; `METRICLINT_FUZZ=N` runs N per target:

    METRICLINT_FUZZ=1000 python -m pytest tests/test_fuzz.py -p no:randomly
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import replace
from datetime import timedelta
from functools import lru_cache
from pathlib import Path

from click.testing import Result
from conftest import invoke, write_sealed
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from metriclint import baseline, engine
from metriclint import settings as config
from metriclint.knowledge import registry as registry_module
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language import phrases
from metriclint.model import ConfigError, Finding, Mention
from metriclint.settings.table import KEYS
from metriclint.sources import DEFAULT_OPTIONS, Extraction, Unreadable, extractor_for, source_lines

BUDGET = int(os.environ.get("METRICLINT_FUZZ", "15"))
FUZZ = settings(
    max_examples=BUDGET, deadline=timedelta(seconds=60), suppress_health_check=list(HealthCheck)
)  # an example over a minute hangs
PROJECTS = settings(FUZZ, max_examples=max(2, BUDGET // 5))  # a run starts worker processes: a fifth as many
VOCABULARY = Vocabulary(*load_builtin())

# -- texts --------------------------------------------------------------------------------------

PHRASE = st.sampled_from(
    [
        "after clipping",
        "before clipping",
        "pre-clip",
        "mean",
        "the sum",
        "per token",
        "per-sample",
        "in GB",
        "in GiB",
        "milliseconds",
        "not",
        "over ranks",
        "the reference policy",
        "k3",
        "entropy",
        "train/grad_norm",
        "grad_norm",
        "`train/loss`",
        "It is",
        "The norm",
        "Args:",
        "Returns:",
        ".",
        ",",
        ";",
        " - ",
        "\n",
        "  ",
        "é",
        "名",
        "—",
        "\u2028",
        "\t",
        "😀",
    ]
)
WORD = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\\\"'`$\r"), max_size=6)
TEXT = st.lists(st.one_of(PHRASE, PHRASE, WORD), max_size=14).map(" ".join)
KEY = st.sampled_from(
    [
        "train/grad_norm",
        "train/loss",
        "train/{tag}grad_norm",
        "rollout/{status}_count",
        "perf/step_time_ms",
        "eval/{task}/accuracy",
        "lm loss vs samples",
        "grad_norm",
        "x",
        "train/é",
        "",
    ]
)
NAME = st.sampled_from(["grad_norm", "loss", "value", "step_time_ms", "tag", "x", "é"])


def one_line(text: str) -> str:
    return " ".join(source_lines(text))


def check_positions(extraction: Extraction, source: str) -> None:
    """Every phrase read from a text lies where the source writes it: its letters and digits
    are the source's at the positions the text reports (an escape is not one of them, since
    the texts here hold only escapes of other characters)."""
    lines = source_lines(source)
    mentions: list[Mention] = [*extraction.mentions, *(e.text for t in extraction.tables for e in t.entries)]
    for mention in mentions:
        for reading in phrases.read(mention.text, VOCABULARY):
            for offset in range(reading.start, reading.end):
                char = mention.text[offset]
                if char.isascii() and char.isalnum():
                    line, column = mention.position(offset)
                    assert lines[line - 1][column - 1] == char, (mention.text, offset, line, column)
    event(f"texts: {min(len(mentions), 5)}")


def extracted(suffix: str, source: str, data: bytes | None = None) -> Extraction | None:
    """The source's extraction, or None where it says why it cannot read the file (ML900)."""
    extractor = extractor_for(suffix)
    assert extractor is not None
    try:
        return extractor(f"f{suffix}", data if data is not None else source.encode())
    except Unreadable as error:
        event(f"unreadable: {str(error)[:30]}")
        return None


# -- Python -------------------------------------------------------------------------------------

ESCAPE = st.sampled_from(["\\n", "\\t", "\\\\", "\\u00e9", "\\x2d", "\\N{BULLET}", "\\\n"])
PY_TEXT = st.lists(st.one_of(TEXT, ESCAPE), max_size=4).map("".join)


@st.composite
def python_statement(draw: st.DrawFn) -> str:
    text, name, key = draw(PY_TEXT), draw(NAME), draw(KEY)
    quote = draw(st.sampled_from(['"', "'", '"""', "'''"]))
    if len(quote) == 1:
        text = text.replace("\\\n", "").replace("\n", "\\n")
    text = text.replace(quote[0], "")
    prefix = draw(st.sampled_from(["", "r", "u", "f"])) if "{" not in text else ""
    literal = f"{prefix}{quote}{text}{quote}"
    comment = one_line(draw(TEXT))
    shapes = [
        f'def f_{name}({name}, tag=""):\n    {literal}\n    out = {{"{key}": {name}}}  # {comment}\n    return out\n',
        f'def g({name}):\n    """Args:\n        {name}: {one_line(draw(TEXT))}\n    """\n    wandb.log({{f"train/{{tag}}{name}": float({name})}})\n',
        f"from prometheus_client import Histogram\nHistogram({json.dumps(key)}, {literal})\n",
        f"import prometheus_client as p\nfrom series import LOSS\np.Gauge(LOSS, {literal}, unit={literal})\n",
        f"TOOLTIPS = {{{json.dumps(key)}: {literal}, 'train/loss': {literal}}}\n",
        f"class C:\n    {name}: float = 0.0\n    {literal}\n",
        f"x = {literal} {literal}  # {comment}\n",
        f"metrics[{json.dumps(key)}] = {name} * 1000  # {comment}\n",
        one_line(draw(WORD)) + "\n",  # anything: a syntax error is an ML900
    ]
    return draw(st.sampled_from(shapes))


PYTHON = st.lists(python_statement(), max_size=6).map("".join)


@FUZZ
@given(PYTHON, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_fuzz_python(source: str, newline: str, bom: bool) -> None:
    source = source.replace("\n", newline)
    extraction = extracted(".py", source, ("\ufeff" if bom else "").encode() + source.encode())
    if extraction is not None:
        check_positions(extraction, source)


# -- Markdown -----------------------------------------------------------------------------------


@st.composite
def markdown_block(draw: st.DrawFn) -> str:
    key, text = draw(KEY), one_line(draw(TEXT))
    shapes = [
        f"## `{key}`\n\n{draw(TEXT)}\n",
        f"| Metric | Meaning |\n|---|---|\n| `{key}` | {text.replace('|', '')} |\n| {draw(NAME)} | {text.replace('|', '')} |\n",
        f"- `{key}`: {text}\n- **{draw(NAME)}** — {text}\n",
        f"<!-- metriclint: ignore[ML001] {text} -->\n{text}\n",
        f"```python\n{draw(TEXT)}\n```\n",
        f"---\ntitle: {text}\n---\n",
        f"> {text}\n\n1. {text}\n   2) {text}\n",
        draw(TEXT) + "\n",
    ]
    return draw(st.sampled_from(shapes))


@FUZZ
@given(st.lists(markdown_block(), max_size=6).map("\n".join))
def test_fuzz_markdown(source: str) -> None:
    extraction = extracted(".md", source)
    if extraction is not None:
        check_positions(extraction, source)


# -- JSON and Grafana ---------------------------------------------------------------------------

JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT, KEY)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(KEY, WORD, st.sampled_from(["description", "tooltip", "help", "title"])), inner, max_size=4),
        st.lists(st.tuples(KEY, TEXT).map(list), max_size=4),
    ),
    max_leaves=20,
)
TARGET = st.one_of(
    st.fixed_dictionaries(
        {
            "expr": st.sampled_from(
                ["rate(x_total[5m])", "histogram_quantile(0.9, sum(rate(step_seconds_bucket[1m])) by (le))", "a + b", "", "sum("]
            )
        }
    ),
    st.fixed_dictionaries({"target": st.one_of(KEY, WORD)}),
)
PANEL = st.fixed_dictionaries(
    {"type": st.sampled_from(["graph", "timeseries", "row"]), "title": st.one_of(KEY, TEXT)},
    optional={
        "description": TEXT,
        "targets": st.lists(TARGET, max_size=3),
        "gridPos": st.just({"x": 0, "y": 0}),
        "fieldConfig": st.fixed_dictionaries({"defaults": st.fixed_dictionaries({}, optional={"description": TEXT})}),
        "panels": st.lists(
            st.fixed_dictionaries({"type": st.just("graph"), "description": TEXT, "targets": st.lists(TARGET, max_size=2)}), max_size=2
        ),
    },
)
DASHBOARD = st.fixed_dictionaries(
    {"panels": st.lists(PANEL, max_size=5)},
    optional={
        "title": TEXT,
        "schemaVersion": st.integers(0, 40),
        "rows": st.lists(st.fixed_dictionaries({"panels": st.lists(PANEL, max_size=2)}), max_size=2),
    },
).map(lambda d: d if len(str(d)) % 3 else {"dashboard": d})


def dumped(value: object, indent: int | None, ascii_only: bool) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ascii_only)


@FUZZ
@given(st.one_of(JSON_VALUE, DASHBOARD), st.sampled_from([None, 0, 2]), st.booleans(), st.sampled_from(["", "//", ",", "}"]))
def test_fuzz_json_and_grafana(value: object, indent: int | None, ascii_only: bool, tail: str) -> None:
    source = dumped(value, indent, ascii_only) + tail  # a tail makes JSON with comments, or broken JSON
    extraction = extracted(".json", source)
    if extraction is not None:
        check_positions(extraction, source)


# -- JavaScript and TypeScript ------------------------------------------------------------------


def js_string(text: str, quote: str) -> str:
    text = one_line(text).replace(quote, "")
    return f"{quote}{text.replace('${', '$ {')}{quote}"


@st.composite
def js_declaration(draw: st.DrawFn, typed: bool) -> str:
    quote = draw(st.sampled_from(['"', "'", "`"]))
    pairs = draw(st.lists(st.tuples(KEY, TEXT), max_size=5))
    entries = ", ".join(f"{js_string(k, quote)}: {js_string(t, quote)}" for k, t in pairs)
    rows = ", ".join(f"[{js_string(k, quote)}, {js_string(t, quote)}]" for k, t in pairs)
    objects = ", ".join(f"{json.dumps(k)}: {{ tooltip: {js_string(t, quote)}, unit: 'ms' }}" for k, t in pairs)
    annotation = draw(st.sampled_from([": Record<string, string>", ": [string, string][]", ""])) if typed else ""
    suffix = draw(st.sampled_from([" as const", " satisfies object", ""])) if typed else ""
    export = draw(st.sampled_from(["export ", ""]))
    shapes = [
        f"{export}const TIPS{annotation} = {{{entries}}}{suffix};\n",
        f"{export}const ROWS{annotation} = [{rows}]{suffix};\n",
        f"const MAP = new Map([{rows}]);\n",
        f"{export}const DESC = {{{objects}}};\n",
        "function describe(key" + (": string" if typed else "") + ") {\n  const k = key.slice(key.indexOf('/') + 1);\n"
        "  return ROWS.find(([p]) => k.includes(p))?.[1] ?? TIPS[key];\n}\n",
        f"// metriclint: ignore[ML001] {one_line(draw(TEXT))}\n",
        one_line(draw(WORD)) + "\n",
    ]
    return draw(st.sampled_from(shapes))


@FUZZ
@given(st.data(), st.sampled_from([".js", ".mjs", ".jsx", ".ts", ".tsx"]))
def test_fuzz_javascript_and_typescript(data: st.DataObject, suffix: str) -> None:
    source = "".join(data.draw(st.lists(js_declaration(typed=suffix.startswith(".ts")), max_size=5)))
    extraction = extracted(suffix, source)
    if extraction is not None:
        check_positions(extraction, source)


# -- the registry -------------------------------------------------------------------------------

ODD_YAML = st.sampled_from(["null", "~", "[]", "{}", "&a x", "*a", "!!python/object:os.system x", "'", "- x", "1e9999", "[[[["])
YAML_SCALAR = st.one_of(TEXT.map(json.dumps), TEXT.map(json.dumps), KEY, ODD_YAML)
SETTING = st.sampled_from(
    [("clipping", "before"), ("clipping", "after"), ("reduction", "mean"), ("unit", "GB"), ("norm", "l2"), ("granularity", "per-token")]
)


def rarely(draw: st.DrawFn, usual: str, odd: st.SearchStrategy[str]) -> str:
    """Mostly what a registry holds, sometimes something odd: a registry with a problem in
    every line would test only the first check."""
    return draw(odd) if draw(st.integers(0, 9)) == 9 else usual  # hypothesis leans to 0: the usual


@st.composite
def registry_text(draw: st.DrawFn) -> str:
    lines = [rarely(draw, "version: 1", st.sampled_from(["version: 2", "version: '1'", "", "version: 1\nversion: 1"]))]
    if draw(st.booleans()):
        facet = rarely(draw, "policy", st.sampled_from(["clipping", "{x}", "", "reduction"]))
        phrase = json.dumps(one_line(draw(TEXT))) or "x"
        lines += ["facets:", f"  {facet}:", f"    description: {draw(YAML_SCALAR)}", "    values:", f"      {draw(NAME)}: [{phrase}]"]
    lines.append(rarely(draw, "metrics:", st.sampled_from(["metrics: []", "metrics: {}", "metrics: x"])))
    for key in draw(st.lists(KEY.filter(bool), min_size=1, max_size=5, unique=True)):
        facet, value = draw(SETTING)
        lines += [f"  {json.dumps(key)}:", f"    aliases: [{draw(NAME)}, {rarely(draw, draw(NAME), ODD_YAML)}]"]
        lines.append(f"    description: {json.dumps(one_line(draw(TEXT)))}")
        if draw(st.booleans()):
            lines += ["    semantics:", f"      {rarely(draw, facet, st.just('nonsense'))}: {rarely(draw, value, ODD_YAML)}"]
    lines.append(rarely(draw, "", st.sampled_from(["code:", "\t- bad", "x: [" * 3, "? a", "---", "..."])))
    return "\n".join(lines) + "\n"


@FUZZ
@given(registry_text())
def test_fuzz_registry(text: str) -> None:
    """A registry loads, or every problem is reported at a place in the file (exit 2)."""
    try:
        registry, _ = registry_module.parse(text, "metrics.yaml", load_builtin()[0])
    except ConfigError as error:
        event(f"problem: {error.problems[0].message[:40]}")
        assert error.problems and all(p.line >= 0 and p.column >= 0 and p.message for p in error.problems)
        return
    event(f"metrics: {min(len(registry.metrics), 3)}")


# -- whole projects -----------------------------------------------------------------------------

PROJECT = st.fixed_dictionaries(
    {"train.py": PYTHON},
    optional={
        "docs/metrics.md": st.lists(markdown_block(), max_size=4).map("\n".join),
        "static/tips.ts": st.lists(js_declaration(typed=True), max_size=4).map("".join),
        "dash/board.json": DASHBOARD.map(json.dumps),
        "metrics.yaml": registry_text(),
        "tests/test_train.py": PYTHON,
        "series.py": st.one_of(st.just('LOSS = "train_loss"\n'), PYTHON),  # the constant a help text's metric may be named by
    },
)


@PROJECTS
@given(PROJECT, st.sampled_from(["text", "json", "sarif", "gitlab", "json-lines", "github"]))
def test_fuzz_whole_projects(files: dict[str, str], form: str) -> None:
    """A run over any project ends 0 or 1 with its report, or 2 with the problem's place."""
    with tempfile.TemporaryDirectory() as folder:
        for name, content in files.items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        here = os.getcwd()
        os.chdir(folder)
        try:
            result = invoke("check", ".", "--no-cache", "--format", form, "--jobs", "1")
        finally:
            os.chdir(here)
    event(f"exit {result.exit_code}")
    assert "internal error" not in result.output
    if result.exit_code == 2:
        assert "metrics.yaml:" in result.output
        return
    assert result.exit_code in (0, 1), result.output
    if form in ("json", "sarif", "gitlab"):
        json.loads(result.stdout)
    elif form == "json-lines":
        assert all(json.loads(line) for line in result.stdout.split("\n") if line)


# -- run files (the live check's readers) --------------------------------------------------------


def _read_all(path: Path) -> None:
    """Every reader of the live check on `path`: points or `Corrupt`, never another exception."""
    from metriclint.live.points import Corrupt, Wanted
    from metriclint.live.readers.kinds import ReaderOptions, open_run

    run = open_run(str(path), ReaderOptions(Wanted(lambda key: True)))
    for stream, _ in run.streams:
        try:
            for point in stream.points:
                assert isinstance(point[3], float) and isinstance(point[2], int)
        except Corrupt as error:
            assert error.message


RECORD = st.binary(max_size=40)


@given(st.lists(st.one_of(RECORD, st.builds(lambda body: ("ok", body), RECORD)), max_size=6), st.integers(0, 8))
@FUZZ
def test_fuzz_event_files(records: list[object], cut: int) -> None:
    """Event files of framed records with good and bad checksums, odd lengths and cut tails."""
    import struct

    from metriclint.live.readers.tfevents import masked_crc

    data = b""
    for record in records:
        if isinstance(record, tuple):
            body = record[1]
            header = struct.pack("<Q", len(body))
            data += header + struct.pack("<I", masked_crc(header)) + body + struct.pack("<I", masked_crc(body))
        else:
            data += record  # type: ignore[operator]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.out.tfevents.0"
        path.write_bytes(data[: len(data) - cut] if cut < len(data) else data)
        _read_all(path)


@given(st.lists(st.one_of(JSON_VALUE, st.text(max_size=20)), max_size=8), st.sampled_from(["trainer_state.json", "log.jsonl"]))
@FUZZ
def test_fuzz_json_runs(values: list[object], name: str) -> None:
    """JSON lines and trainer states with any values in them, torn or whole."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        if name.endswith(".jsonl"):
            path.write_text("\n".join(v if isinstance(v, str) else json.dumps(v) for v in values), encoding="utf-8")
        else:
            history = json.dumps({"log_history": [v for v in values if not isinstance(v, str)]})
            path.write_text(history[: len(history) - len(values)], encoding="utf-8")
        _read_all(path)


@given(st.binary(max_size=300), st.booleans())
@FUZZ
def test_fuzz_wandb_files(body: bytes, framed: bool) -> None:
    """W&B run files: a good header then any bytes, or records framed with right checksums."""
    import struct
    import zlib

    from metriclint.live.readers.wandb import MAGIC

    data = MAGIC + b"\x00"
    if framed:
        chunk = body[:200]
        data += struct.pack("<IHB", zlib.crc32(chunk, zlib.crc32(b"\x01")), len(chunk), 1) + chunk
    else:
        data += body
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run-x.wandb"
        path.write_bytes(data)
        _read_all(path)


# -- inputs that are not source code: settings, code knowledge, baselines, cache entries --------


def run_in(files: dict[str, str], *args: str) -> Result:
    """`metriclint check . ARGS` in a fresh folder holding `files`."""
    with tempfile.TemporaryDirectory() as folder:
        for name, content in files.items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        here = os.getcwd()
        os.chdir(folder)
        try:
            return invoke("check", ".", "--jobs", "1", *args)
        finally:
            os.chdir(here)


def ends_well(result: Result, *located: str) -> None:
    """Exit 0 or 1 with a report, or 2 with every problem at a place in one of the `located`
    files (`file:line:col: message`, line and column from 1); never an internal error."""
    event(f"exit {result.exit_code}")
    assert "internal error" not in result.output and "Traceback" not in result.output, result.output
    assert result.exit_code in (0, 1, 2), result.output
    if result.exit_code == 2:
        problems = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
        assert problems, result.output
        for line in problems:
            event(f"problem: {line.split(': ', 1)[-1][:30]}".encode("ascii", "replace").decode())  # a message may hold surrogates
            where = re.match(r"(.+?):([1-9]\d*):([1-9]\d*): \S", line)
            assert where and where.group(1) in located, line


TOML_VALUE = st.sampled_from(
    [
        '"src"',
        '["src", "tests/*"]',
        "[]",
        "[1, 2]",
        "{}",
        '{"ML010" = [1, 2]}',
        '{ML001 = "error"}',
        '{"scripts/*" = ["ML001"]}',
        "2020-01-01",
        "1979-05-27T07:32:00Z",
        "07:32:00",
        "true",
        "-1",
        "0",
        "16_777_216",
        "1e400",
        "nan",
        "-inf",
        '"\\u0000"',
        '"!"',
        '"["',
        '"**"',
        '"ML"',
        '"XX1"',
        '"ML0"',
        "'''two\nlines'''",
        '"../../etc"',
        '"/etc/hostname"',
        '"metrics.yaml"',
        "[[1]]",
        '{path = "ui.js"}',
        '{path = "ui.js", match = "regex", table = "("}',
        '{path = "ui.js", table = "HELP", match = "prefix"}',
        '[{path = "*.js", strip-prefix = 1}]',
        '["a\\u0000b"]',
        '"\\ud7ff"',
        '"名"',
        '""',
        '"error"',
        '"warning"',
        '["ML001", "ML9"]',
        "[{path = 3}]",
        "[{}]",
        '[["ML001"]]',
        '"a.toml"',
        '"."',
    ]
)
TOML_KEY = st.sampled_from(
    [
        *KEYS,
        "log_functions",
        "max_file_size",
        "strip_prefix",
        "unknown",
        '"registry"',
        "severity.ML001",
        "severity.ML999",
        'per-file-ignores."a/*"',
        "tooltips.path",
        "tool.metriclint.paths",
        "x.y.z",
    ]
)
TOML_HEADER = st.sampled_from(
    [
        "[tool.metriclint.severity]",
        "[tool.metriclint.per-file-ignores]",
        "[[tool.metriclint.tooltips]]",
        "[tool.metriclint]",
        "[tool]",
        "[[tool.metriclint.paths]]",
        "[tool.other]",
    ]
)


@st.composite
def settings_text(draw: st.DrawFn) -> str:
    lines = ["[tool.metriclint]"] if draw(st.booleans()) else []
    for key in draw(st.lists(TOML_KEY, max_size=6, unique=True)):  # a key twice is only ever a TOML error
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(TOML_HEADER))
        line = f"{key} = {draw(TOML_VALUE)}"
        lines.append(rarely(draw, line, st.sampled_from([line[:-1], line + " x", "= 1", "[", line + "  # " + line, "a = 1\na = 2"])))
    return "\n".join(lines) + "\n"


SETTINGS_PROJECT = {
    "train.py": 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n',
    "metrics.yaml": "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n",
    "ui.js": 'export const HELP = [["train/grad_norm", "norm after clipping"]];\n',
    "src/a.py": "x = 1\n",
    "a.toml": "select = []\n",
}


@FUZZ
@given(settings_text(), st.sampled_from(["metriclint.toml", "pyproject.toml", ".metriclint.toml"]))
def test_fuzz_settings_table(text: str, name: str) -> None:
    """Any settings table: a run, or every problem at its place in the settings (or in the file
    `extend` names), never an internal error."""
    ends_well(run_in({**SETTINGS_PROJECT, name: text}, "--no-cache"), name, "a.toml", "metrics.yaml", OUTSIDE_SETTINGS)


# `extend = "/etc/hostname"` reads a file that is no TOML: its problems are at its own place,
# shown relative to the project, a folder of the temporary directory (see run_in).
OUTSIDE_SETTINGS = os.path.relpath("/etc/hostname", Path(tempfile.gettempdir(), "project"))


KNOWLEDGE_SCALAR = st.one_of(
    st.sampled_from(
        [
            "mean",
            "sum",
            "before",
            "log-prob",
            "per-token",
            "nonsense",
            "null",
            "~",
            "[]",
            "{}",
            "&a x",
            "*a",
            "!!python/object:os.system x",
            "1e9999",
            "'",
            "-",
            "? x",
        ]
    ),
    TEXT.map(json.dumps),
)


@st.composite
def knowledge_text(draw: st.DrawFn) -> str:
    lines = [rarely(draw, "results:", st.sampled_from(["results: []", "results: x", "norm_types: {}", "logging: [", ""]))]
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["function", "call", "method", "expression", "nonsense"]))
        pattern = rarely(
            draw, draw(st.sampled_from(["token_average", "torch.mean", "x().sum", "a + b", "np.linalg.norm"])), KNOWLEDGE_SCALAR
        )
        facet, value = draw(
            st.sampled_from([("reduction", "mean"), ("reduction", "sum"), ("clipping", "before"), ("unit", "GB"), ("quantity", "log-prob")])
        )
        lines += [
            f"  - {kind}: {pattern}",
            f"    says: {rarely(draw, 'computes it', KNOWLEDGE_SCALAR)}",
            f"    facts: {{{rarely(draw, facet, KNOWLEDGE_SCALAR)}: {rarely(draw, value, KNOWLEDGE_SCALAR)}}}",
        ]
        if draw(st.booleans()):
            lines.append(
                f"    {draw(st.sampled_from(['arguments', 'element', 'keeps', 'unless', 'local', 'of', 'odd']))}: {draw(KNOWLEDGE_SCALAR)}"
            )
    return "\n".join(lines) + "\n"


@FUZZ
@given(knowledge_text())
def test_fuzz_code_knowledge(text: str) -> None:
    """A code knowledge file loads (and the code it describes is read with it), or every problem
    is at a place in the file."""
    facets = load_builtin()[0]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "helpers.yaml")
        path.write_text(text, encoding="utf-8")
        try:
            known = registry_module.load_code(path, "helpers.yaml", facets)
        except ConfigError as error:
            event(f"problem: {error.problems[0].message[:30]}".encode("ascii", "replace").decode())
            assert error.problems and all(p.path == "helpers.yaml" and p.line >= 1 and p.column >= 1 and p.message for p in error.problems)
            return
    event(f"entries: {min(len(known), 3)}")
    source = "def token_average(x):\n    return x.sum() / 3\n\nm = {'loss': token_average(y), 'n': np.linalg.norm(z), 'k': torch.mean(w)}\n"
    extractor = extractor_for(".py", replace(DEFAULT_OPTIONS, code=known))
    assert extractor is not None
    extractor("train.py", source.encode())


BASELINE_FIELD = {
    "rule": "ML001",
    "path": "train.py",
    "metric": "train/grad_norm",
    "facet": "clipping",
    "phrase": "after clipping",
    "count": 1,
}
ODD_JSON = st.one_of(st.integers(-1, 3), JSON_SCALAR, JSON_VALUE)


def seldom(draw: st.DrawFn, usual: object, odd: st.SearchStrategy[object]) -> object:
    """`rarely` for any value: mostly `usual`, one time in ten something else."""
    return draw(odd) if draw(st.integers(0, 9)) == 9 else usual


@st.composite
def baseline_document(draw: st.DrawFn) -> object:
    """Mostly a baseline holding the project's finding, with an odd field, entry or value here and there."""
    entries = []
    for _ in range(draw(st.integers(0, 4))):
        entry = {k: seldom(draw, v, ODD_JSON) for k, v in BASELINE_FIELD.items() if draw(st.integers(0, 19)) != 19}
        entries.append(seldom(draw, entry, ODD_JSON))
    return seldom(draw, {"version": seldom(draw, 1, ODD_JSON), "findings": seldom(draw, entries, ODD_JSON)}, ODD_JSON)


@FUZZ
@given(baseline_document(), st.sampled_from([None, 2]), st.sampled_from(["", "", "", "\n\n", "}", "// c"]))  # mostly JSON: a tail breaks it
def test_fuzz_baselines(value: object, indent: int | None, tail: str) -> None:
    """Any baseline: the findings it does not account for, or every problem at its place in it."""
    made, _ = _clean_cache()
    findings = _findings()
    file = made / "project" / "base.json"
    file.write_text(json.dumps(value, indent=indent) + tail, encoding="utf-8")
    here = os.getcwd()
    os.chdir(made / "project")
    try:
        new = baseline.hide(Path("base.json"), list(findings))
    except ConfigError as error:
        event(f"problem: {error.problems[0].message[:30]}".encode("ascii", "replace").decode())
        assert error.problems and all(
            p.path == "base.json" and p.line >= 1 and p.column >= 1 and "\n" not in str(p) for p in error.problems
        )
        return
    finally:
        os.chdir(here)
        file.unlink()  # the project is shared with the cache target, whose runs must find it as it was
    event(f"hidden: {len(findings) - len(new)}")
    assert all(f in findings for f in new)


@lru_cache(maxsize=1)
def _findings() -> tuple[Finding, ...]:
    """The findings of a run over the fuzzed project, as a baseline is held against them."""
    made, _ = _clean_cache()
    here = os.getcwd()
    os.chdir(made / "project")
    try:
        return engine.analyse(config.with_speed(config.load((".",), None, None), 1, None, True)).report.findings
    finally:
        os.chdir(here)


@lru_cache(maxsize=1)
def _clean_cache() -> tuple[Path, str]:
    """A warm cache of the fuzzed project, made once per process (each example changes a copy
    of it), and the findings of a run without it."""
    folder = Path(tempfile.mkdtemp(prefix="metriclint-fuzz-"))
    for name, content in SETTINGS_PROJECT.items():
        (folder / "project" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "project" / name).write_text(content, encoding="utf-8")
    here = os.getcwd()
    os.chdir(folder / "project")
    try:
        clean = invoke("check", ".", "--jobs", "1", "--no-cache").stdout
        invoke("check", ".", "--jobs", "1", "--cache-dir", str(folder / "cache"))
    finally:
        os.chdir(here)
    return folder, clean


MUTATION = st.sampled_from(["replace", "truncate", "insert", "swap", "number", "json"])


@FUZZ
@given(st.data(), MUTATION, st.booleans())
def test_fuzz_cache_entries(data: st.DataObject, how: str, sealed: bool) -> None:
    """Any change to any cache file (an entry, what the last run kept, the files' statuses, the
    runs' records): the run ends with its report and at most one warning; unless sealed again
    with the key (as only this machine can), its findings are those of a run without the cache."""
    made, clean = _clean_cache()
    folder = Path(tempfile.mkdtemp(prefix="metriclint-fuzz-"))
    cache = folder / "cache"
    shutil.copytree(made / "cache", cache)
    files = sorted(p for p in cache.rglob("*") if p.is_file() and p.name not in (".gitignore", "CACHEDIR.TAG", ".metriclint-cache", "lock"))
    target = data.draw(st.sampled_from(files))
    kind = target.parent.name if target.parent.name in ("kept", "stats", "runs") else "entry"
    header = 0 if kind == "runs" else 65  # the digest line (extract/trust.py); a run's record has none
    body = target.read_bytes()[header:]
    if how == "json":
        value = json.loads(body)
        changed = json.dumps(data.draw(st.one_of(JSON_VALUE, st.just(value), st.just([value, value])))).encode()
    else:
        at = data.draw(st.integers(0, max(0, len(body) - 1)))
        piece = data.draw(
            st.sampled_from([b"0", b"1", b"-1", b'"', b"[", b"]", b"{}", b"null", b"true", b"9" * 30, b",", b"after", b"before", b"\xff"])
        )
        changed = {
            "replace": body[:at] + piece + body[at + len(piece) :],
            "truncate": body[:at],
            "insert": body[:at] + piece + body[at:],
            "swap": body.replace(b"after", b"before").replace(b"mean", b"sum"),
            "number": re.sub(rb"\d+", piece if piece.isdigit() else b"7", body, count=3),
        }[how]
    event(f"{how} {kind}")
    if sealed and kind != "runs":
        write_sealed(target, kind, changed)
    else:
        target.write_bytes(target.read_bytes()[:header] + changed)
    here = os.getcwd()
    os.chdir(made / "project")
    try:
        result = invoke("check", ".", "--jobs", "1", "--cache-dir", str(cache))
    finally:
        os.chdir(here)
        shutil.rmtree(folder, ignore_errors=True)
    assert "internal error" not in result.output and result.exit_code in (0, 1), result.output
    assert sealed and kind != "runs" or result.stdout == clean
    assert len(result.stderr.splitlines()) <= 1, result.stderr
