"""Properties that must hold for any text: nothing raises, every position lies in the source and
points at the very character quoted, the machine-read formats always parse."""

from __future__ import annotations

import io
import json
import os
import tempfile
import warnings
from functools import partial
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from metriclint import engine
from metriclint import settings as config
from metriclint.extract import runner as extract_all
from metriclint.fix import rewrite as fixing
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language import phrases as claims
from metriclint.model import Finding, Related, Report, Severity, Span
from metriclint.model import ReadFailure as UnreadableFile
from metriclint.report.formats import FORMATS
from metriclint.sources import DEFAULT_OPTIONS, Unreadable, extractor_for, python, source_lines
from metriclint.sources.python import docstrings
from metriclint.sources.python.text import PythonText

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VOCABULARY = Vocabulary(*load_builtin())

# Facet words and docstring syntax mixed into arbitrary text, so the parsers' paths are taken.
WORDS = st.sampled_from(
    [
        "Args:",
        "Returns:",
        "Parameters",
        "----------",
        ":param x:",
        "grad_norm:",
        "x : int",
        "not",
        "after",
        "before clipping",
        "mean",
        "per token",
        "sum",
        "in GB",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        ".",
        ",",
        "é",
        "名",
        "\x0c",
        "\u2028",
        ">>>",
        "train/grad_norm",
        "(",
        ")",
        "-",
        "*",
    ]
)
TEXT = st.lists(st.one_of(WORDS, st.text(max_size=8)), max_size=40).map("".join)


@FAST
@given(TEXT)
def test_claims_never_raise_and_stay_inside_the_text(text: str) -> None:
    for reading in claims.read(text, VOCABULARY):
        assert 0 <= reading.start <= reading.end <= len(text)
        assert reading.sentence[0] <= reading.start and reading.end <= reading.sentence[1] <= len(text)


@FAST
@given(TEXT)
@example(":param x:  ")
@example("Args:\n    x (int):   \n")
def test_docstring_blocks_are_slices_of_their_lines(text: str) -> None:
    lines = source_lines(text)
    for block in docstrings.parse(lines):
        for index, start, end in block.pieces:
            assert 0 <= index < len(lines) and 0 <= start <= end <= len(lines[index])


SAFE_TEXT = TEXT.map(lambda t: t.replace("\\", "/").replace('"', "'").replace("\x00", ""))


@FAST
@given(SAFE_TEXT, SAFE_TEXT, st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_every_quoted_character_is_where_the_position_says(docstring: str, comment: str, newline: str, bom: bool) -> None:
    """Read a generated module, then look up each mention character at its reported position."""
    comment = " ".join(source_lines(comment))  # a comment ends at the line end
    body = ["def f(grad_norm):", f'    """{docstring}"""', f'    return {{"train/grad_norm": grad_norm}}  # {comment}', ""]
    source = newline.join(body)
    data = ("\ufeff" if bom else "").encode() + source.encode()
    try:
        extraction = python.extract("m.py", data)
    except Unreadable:
        event("unreadable")
        return  # an ML900 is a fine answer for a file Python itself may reject
    lines = source_lines(source)
    event(f"mentions={min(len(extraction.mentions), 3)}")
    for mention in extraction.mentions:
        for offset, char in enumerate(mention.text):
            if char == "\n":
                continue
            line, column = mention.position(offset)
            assert 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1])
            assert lines[line - 1][column - 1] == char


SPANS = st.builds(Span, st.text(max_size=20), st.integers(1, 10**6), st.integers(1, 10**4), st.integers(1, 10**6), st.integers(1, 10**4))
FINDINGS = st.builds(
    Finding,
    rule=st.sampled_from(["ML001", "ML002", "ML003", "ML010", "ML900"]),
    name=st.text(max_size=10),
    severity=st.sampled_from(list(Severity)),
    span=SPANS,
    message=st.text(max_size=60),
    metric=st.text(max_size=20),
    facet=st.text(max_size=10),
    found=st.text(max_size=10),
    expected=st.text(max_size=10),
    source=st.text(max_size=10),
    related=st.lists(st.builds(Related, SPANS, st.text(max_size=40)), max_size=2).map(tuple),
    phrase=st.text(max_size=20),
)


@FAST
@given(st.lists(FINDINGS, max_size=6), st.integers(0, 10**5))
def test_machine_formats_always_parse(findings: list[Finding], files: int) -> None:
    report = Report(tuple(sorted(findings, key=lambda f: f.sort_key)), files)
    for name in ("json", "sarif", "gitlab"):
        out = io.StringIO()
        FORMATS[name](report, out)
        json.loads(out.getvalue())
    out = io.StringIO()
    FORMATS["json-lines"](report, out)
    lines = out.getvalue().split("\n")  # JSON Lines ends records at "\n" only; U+2028 may be in one
    assert lines[-1] == "" and len([json.loads(line) for line in lines[:-1]]) == len(findings)


SOURCE_BYTES = st.one_of(
    st.binary(max_size=200),
    st.lists(
        st.sampled_from(
            [
                b'{"train/loss": "mean loss",',
                b'["train/grad_norm", "after clipping"],',
                b"const T = [",
                b"]",
                b"}",
                b"{",
                b'"""',
                b"def f(x):\n",
                b"    ",
                b"# after clipping\n",
                b"\r\n",
                b"\r",
                b"\xef\xbb\xbf",
                b"\xff",
                b"\x00",
                b"key: value\n",
                b"- [a, b]\n",
                b"| `a` | b |\n",
                b"|---|---|\n",
                b"<!-- x -->",
                b"\x0c",
                b"\xe2\x80\xa8",
                b"&a ",
                b"*a ",
                b"`",
                b"${x}",
                b"\\u00e9",
                b"\\",
                b"'",
            ]
        ),
        max_size=30,
    ).map(b"".join),
)


@FAST
@given(SOURCE_BYTES, st.sampled_from([".py", ".js", ".ts", ".tsx", ".json", ".yaml", ".md"]))
@example(b"| `a` | b |\n|---|---|\n\x00| `a` | b |\n", ".md")
def test_every_source_reads_any_bytes_or_says_why_not(data: bytes, suffix: str) -> None:
    """Only `Unreadable` (an ML900) may come out of a source, whatever the bytes. Markdown
    quotes the file as it is, but for a NUL, which CommonMark has the parser replace by U+FFFD
    ("Insecure characters"): a message never prints a NUL."""
    extractor = extractor_for(suffix)
    assert extractor is not None
    try:
        extraction = extractor(f"f{suffix}", data)
    except Unreadable:
        return
    lines = source_lines(data.decode("utf-8-sig").replace("\x00", "\ufffd")) if suffix == ".md" else []
    for mention in [*extraction.mentions, *(e.text for t in extraction.tables for e in t.entries)]:
        for offset, char in enumerate(mention.text):
            line, column = mention.position(offset)
            assert line >= 1 and column >= 1
            if lines and char != "\n":
                assert lines[line - 1][column - 1] == char


FIX_WORDS = st.sampled_from(
    [
        "the",
        "norm",
        "after clipping",
        "before clipping",
        "post-clip",
        "pre-clip",
        "clipped",
        "not",
        "unclipped",
        "raw",
        "after",
        "clipping",
        ",",
        ".",
        "(",
        ")",
        "é",
        "<br>",
    ]
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FIX_WORDS, min_size=1, max_size=25).map(" ".join), st.sampled_from(["\n", "\r\n", "\r"]))
def test_fix_is_idempotent_on_generated_docstrings(docstring: str, newline: str) -> None:
    """Fixing twice is fixing once, and a fixed file still parses."""
    registry = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"
    entry = docstring.replace("<br>", newline + " " * 12)  # a wrapped entry continues deeper
    body = ["def log(grad_norm):", '    """Log.', "", "    Args:", f"        grad_norm: {entry}", '    """']
    body += ['    return {"train/grad_norm": grad_norm}', ""]
    with tempfile.TemporaryDirectory() as folder:
        here = os.getcwd()
        os.chdir(folder)
        try:
            Path("metrics.yaml").write_text(registry, encoding="utf-8")
            Path("m.py").write_bytes(newline.join(body).encode())
            snapshots = []
            for attempt in range(2):
                rewrites, _ = fixing.plan(engine.analyse(config.load((".",), None, None)).report.findings)
                assert all(fixing.write(r, [Path.cwd()]) == "" for r in rewrites)
                event(f"round {attempt + 1} fixed {sum(len(r.fixed) for r in rewrites)}")
                snapshots.append(Path("m.py").read_bytes())
            assert snapshots[0] == snapshots[1]
            job = extract_all.Job(Path("m.py"), "m.py", None)
            assert not isinstance(
                extract_all.extract_file(job, DEFAULT_OPTIONS, partial(claims.read, vocabulary=VOCABULARY))[1], UnreadableFile
            )
        finally:
            os.chdir(here)


# Pieces of a Python string literal's body: words, facet phrases and every kind of escape.
LITERAL_PIECES = st.sampled_from(
    [
        "Reported in milliseconds.",
        "mean",
        " per token ",
        "after clipping",
        "é",
        "名",
        " ",
        "\\n",
        "\\t",
        "\\\\",
        "\\'",
        '\\"',
        "\\x41",
        "\\u00e9",
        "\\U0001F600",
        "\\N{BULLET}",
        "\\101",
        "\\0",
        "\\d",
        "\\\n",
    ]
)


@FAST
@given(st.lists(LITERAL_PIECES, max_size=12).map("".join), st.sampled_from(["", "r", "u"]), st.sampled_from(['"', '"""']))
def test_decoded_literal_text_keeps_every_offset_on_the_source(body: str, prefix: str, quote: str) -> None:
    """`Literal.text` has one character per character written, so every word read from it is
    reported where the source writes it (a help string with `\\n` once crashed the run)."""
    source = f"x = {prefix}{quote}{body}{quote}\n"
    text = PythonText(source.encode())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))  # `\d` is deprecated
        try:
            node = text.parse().body[0].value  # type: ignore[attr-defined]
        except Unreadable:
            assume(False)  # a quote piece closed the literal early
    literal = text.literal(node)
    assert literal is not None
    assert len(literal.text) == len(literal.content)
    for word in ("milliseconds", "clipping", "token"):
        if word in literal.text:
            at = literal.text.index(word)
            assert literal.content[at : at + len(word)] == word
