"""Suppression comments: the directive grammar, and what a suppression covers in Python."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, finding_lines, invoke

from metriclint.sources.directives import directive


@pytest.mark.parametrize("comment", ["metriclint: ignored here", "metriclint: ignore-me", "metriclint: ignores"])
def test_words_that_only_begin_like_a_directive_are_none(comment: str) -> None:
    assert directive(comment) is None


def test_a_bare_ignore_is_ml010_not_silently_nothing(in_tmp: Path) -> None:
    (in_tmp / "a.py").write_text(
        'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """  # metriclint: ignore\n'
    )
    (in_tmp / "metrics.yaml").write_text(
        "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
    )
    assert finding_lines(invoke("check", ".")) == ["ML001 a.py:3", "ML010 a.py:4"]


@pytest.mark.parametrize(
    ("comment", "codes", "file_wide", "reason"),
    [
        ("metriclint: ignore[ML001]", ("ML001",), False, ""),
        ("metriclint: ignore[ML001, ml002] kept for the changelog", ("ML001", "ML002"), False, "kept for the changelog"),
        ("pre-clip  # metriclint: ignore[ML001] upstream", ("ML001",), False, "upstream"),
        ("metriclint: ignore-file[ML002] generated", ("ML002",), True, "generated"),
        (" metriclint: ignore[ML001] from the old dashboard -->", ("ML001",), False, "from the old dashboard"),
        ("metriclint: ignore[]", (), False, ""),
        ("metriclint: ignore", (), False, ""),  # bare: a directive that silences nothing, reported as ML010
        ("metriclint: ignore-file  generated", (), True, "generated"),
        ("metriclint: ignore ML001", (), False, "ML001"),  # codes without brackets silence nothing either: ML010
    ],
)
def test_directive_grammar(comment: str, codes: tuple[str, ...], file_wide: bool, reason: str) -> None:
    found = directive(comment)
    assert found is not None
    assert (found.codes, found.file_wide, found.reason) == (codes, file_wide, reason)


@pytest.mark.parametrize("comment", ["norm after clipping", "see the metriclint docs", "notmetriclint: ignore[ML001]"])
def test_text_without_a_directive(comment: str) -> None:
    assert directive(comment) is None


def test_the_prose_before_a_directive_is_still_read() -> None:
    found = directive("pre-clip  # metriclint: ignore[ML001]")
    assert found is not None and "pre-clip  # metriclint: ignore[ML001]"[: found.start].rstrip(" #") == "pre-clip"


def test_without_the_directives_the_silenced_findings_come_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's silent lines are silent because of the comments, not by accident; and a
    directive's reason is not read as a claim (stale.py:17 speaks only once it is prose)."""
    project = tmp_path / "suppressions"
    copy_fixture(FIXTURES / "suppressions", project)
    for module in project.glob("*.py"):
        module.write_text(module.read_text().replace("metriclint: ignore", "formerly ignored"))
    monkeypatch.chdir(project)
    got = [line for line in finding_lines(invoke("check", ".")) if line.startswith("ML001")]
    assert got == [
        "ML001 silenced.py:6",
        "ML001 silenced.py:12",
        "ML001 silenced.py:17",
        "ML001 stale.py:12",
        "ML001 stale.py:17",
        "ML001 stale.py:27",
        "ML001 whole_file.py:6",
    ]


def test_an_unused_suppression_of_a_switched_off_rule_is_not_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "suppressions")
    got = finding_lines(invoke("check", ".", "--ignore", "ML002"))
    assert "ML010 silenced.py:10" not in got and "ML010 stale.py:13" not in got
    assert "ML010 stale.py:7" in got


REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
CONTRADICTION = 'def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """{comment}\n'


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("  # noqa: ML001", []),  # as flake8 plugins honour it
        ("  # noqa: E501, ML001 the changelog quotes it", []),  # other tools' codes beside it are theirs
        ("  # noqa:ML001,ML002", ["ML010 a.py:4"]),  # ML002 silences nothing here
        ("  # noqa", ["ML001 a.py:3"]),  # bare: meant for some other tool's finding; no contradiction hides behind it
        ("  # noqa: E501", ["ML001 a.py:3"]),
    ],
)
def test_flake8_noqa_with_a_metriclint_code_silences_it(in_tmp: Path, comment: str, expected: list[str]) -> None:
    (in_tmp / "a.py").write_text(CONTRADICTION.format(comment=comment))
    (in_tmp / "metrics.yaml").write_text(REGISTRY)
    result = invoke("check", ".")
    assert finding_lines(result) == expected
    assert "noqa: ML002 silences nothing here" in result.output or expected != ["ML010 a.py:4"]
