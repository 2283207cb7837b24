"""The Python reader's positions and comments, held against CPython's tokenizer as the oracle.

sources/python/text.py finds comments from the tree's string literals instead of tokenizing every
file (tokenize is pure Python on 3.11 and cost more than parsing); these tests make sure the
two ways agree, on hard cases and on every Python file of this repository.
"""

from __future__ import annotations

import io
import json
import sys
import tokenize

import pytest
from conftest import ROOT, invoke

from metriclint.model import SourceKind
from metriclint.sources import Unreadable, source_lines
from metriclint.sources.python import cst as python_cst
from metriclint.sources.python import walk as python
from metriclint.sources.python.text import PythonText

HARD = {
    "hash_in_strings": 'x = "a # b"  # real\ny = \'#\' + "#"\n',
    "hash_in_fstring": 'x = f"{y!r:#>10} # no"  # yes\n',
    "nested_fstring": "x = f\"{'#'}\" + f'''\n# not a comment {y}\n'''  # after\n",
    "docstring_with_hash": 'def f():\n    """Args:\n        x: # not a comment\n    """  # closing\n    # own line\n',
    "concatenation_hides_one": 'x = ("a"  # between the pieces\n     "b")  # after\n',
    "triple_concatenation": 'x = ("""a\n#in"""  # c1\n     """b""")\n',
    "continuation": "x = 1 + \\\n    2  # cont\n",
    "bytes": "x = b'#' + rb\"\\#\"  # bytes\n",
    "non_ascii": 'é = "é#é"  # café\n名 = 1  # 名前\n',
    "tabs_and_form_feed": "if x:\n\ty = 1\t# tab\n\x0c# after form feed\n",
    "escaped_quote": 'x = "a\\"#"  # after escaped quote\n',
    "empty_comment": "x = 1  #\n#\n",
    "shebang_and_cookie": "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nx = 1\n",
    "annotation_string": 'def f(x: "int # not") -> "str":  # yes\n    pass\n',
}


def oracle(source: str) -> list[tuple[int, int, str, bool]]:
    lines = source_lines(source)
    found = []
    for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
        if token.type == tokenize.COMMENT:
            line, column = token.start
            found.append((line, column, token.string, bool(lines[line - 1][:column].strip())))
    return found


def ours(source: bytes) -> list[tuple[int, int, str, bool]]:
    text = PythonText(source)
    module = text.parse()
    collector = python._Collector("x.py", python.flow_rules(), text, module)
    collector.read()
    return [(c.line, c.column, c.text, c.trailing) for c in text.comments(collector.literals)]


@pytest.mark.parametrize("name", sorted(HARD))
def test_comments_match_the_tokenizer_on_hard_cases(name: str) -> None:
    source = HARD[name]
    assert ours(source.encode()) == oracle(source)


@pytest.mark.slow
def test_comments_match_the_tokenizer_on_every_file_here() -> None:
    files = [p for folder in ("metriclint", "tests", "fixtures", "bench") for p in (ROOT / folder).rglob("*.py")]
    checked = 0
    for path in files:
        data = path.read_bytes()
        try:
            got = ours(data)
        except Unreadable:
            continue  # the odd fixtures that do not parse
        assert got == oracle(PythonText(data).text), path
        checked += 1
    assert checked > 100


def test_positions_count_characters_not_bytes() -> None:
    extraction = python.extract("x.py", 'é = {"train/é_norm": n}  # café\n'.encode())
    assert [(k.key, k.span.column, k.span.end_column) for k in extraction.keys] == [("train/é_norm", 6, 20)]
    assert [(m.text, m.origins) for m in extraction.mentions] == [("café", ((1, 28),))]


def test_positions_on_a_line_of_many_kilobytes_count_characters() -> None:
    """Columns on a long line are counted from points along it; wide characters straddle them."""
    line = "; ".join(f'm{i} = {{"train/é{"—" * (i % 5)}_{i}": v}}' for i in range(2000))
    extraction = python.extract("x.py", (line + "\n").encode())
    assert len(extraction.keys) == 2000
    for use in extraction.keys:
        assert use.span.column == line.index(f'"{use.key}"') + 1
        assert use.span.end_column == use.span.column + len(use.key) + 2


def test_a_concatenated_docstring_is_not_read_as_one_text() -> None:
    """`"a" "b"` is one string to Python but not one token: its content has no single position."""
    extraction = python.extract("x.py", b'def f(x):\n    "after clipping" " of x"\n    return x\n')
    assert extraction.mentions == ()


@pytest.mark.slow
def test_the_libcst_fallback_reads_the_same_texts_at_the_same_places() -> None:
    """sources/python/cst.py reads only files this Python cannot parse, so on a newer Python it may
    never run: here both readers read every fixture and module, and must agree on each
    docstring and comment, its position and the suppressions it carries."""
    checked = 0
    for path in [*(ROOT / "fixtures").rglob("*.py"), *(ROOT / "metriclint").rglob("*.py")]:
        data = path.read_bytes()
        try:
            ours = python.extract(path.name, data)
        except Unreadable:
            continue
        fallback = python_cst.extract(path.name, PythonText(data).text, Unreadable("unused"))
        # log messages need the walk's data flow, which only the `ast` reader has
        assert sorted((m.source, m.text, m.origins) for m in fallback.mentions) == sorted(
            (m.source, m.text, m.origins) for m in ours.mentions if m.source != SourceKind.LOG
        ), path
        assert [(s.codes, s.lines) for s in fallback.suppressions] == [(s.codes, s.lines) for s in ours.suppressions], path
        checked += 1
    assert checked > 80


def test_syntax_newer_than_this_python_still_has_its_texts_read() -> None:
    source = (ROOT / "fixtures" / "newer_syntax" / "new_syntax.py").read_bytes()
    texts = [m.text for m in python.extract("new_syntax.py", source).mentions]
    assert "the norm after clipping." in texts


def test_syntax_newer_than_this_python_has_its_texts_read_and_says_its_code_was_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """libcst reads the docstrings and comments of a file CPython rejects (sources/python/cst.py),
    not what its code logs (the CI runs this on the oldest and newest Python it has): ML900 says so where the running Python is older than the file's
    syntax (3.12's type statements and f-strings), and nothing does where it is not."""
    monkeypatch.chdir(ROOT / "fixtures" / "newer_syntax")
    report = json.loads(invoke("check", ".", "--format", "json").output)
    got = [f"{f['rule']} {f['path']}:{f['line']}:{f['column']}" for f in report["findings"]]
    unread = ["ML900 logged.py:6:37", "ML900 new_syntax.py:1:6"] if sys.version_info < (3, 12) else []
    assert got == [*unread, "ML001 new_syntax.py:8:29"]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert all(f"syntax newer than Python {version}" in f["message"] for f in report["findings"] if f["rule"] == "ML900")
