"""The text the server's code actions insert: a suppression the file's source reads back, and
a registry entry that loads."""

from __future__ import annotations

from pathlib import Path

from metriclint.knowledge.registry import load
from metriclint.knowledge.vocabulary import load_builtin
from metriclint.model import Finding, Severity, Span
from metriclint.server.edits import Insertion, registry_entry, suppression
from metriclint.sources import extractor_for


def _finding(path: str, line: int, column: int, end_column: int, rule: str = "ML001") -> Finding:
    return Finding(
        rule=rule,
        name="registry-contradiction",
        severity=Severity.ERROR,
        span=Span(path, line, column, line, end_column),
        message="message",
    )


def _applied(text: str, insertion: Insertion) -> str:
    lines = text.splitlines(keepends=True)
    offset = sum(len(line) for line in lines[: insertion.line - 1]) + insertion.column - 1
    return text[:offset] + insertion.text + text[offset:]


def _silenced(path: str, text: str, finding: Finding) -> str:
    insertion = suppression(path, text, finding)
    assert insertion is not None
    return _applied(text, insertion)


def _suppressed_lines(path: str, text: str) -> dict[int, tuple[str, ...]]:
    extractor = extractor_for(Path(path).suffix)
    assert extractor is not None
    return {line: s.codes for s in extractor(path, text.encode()).suppressions for line in s.lines}


DOCSTRING = '''def log(grad_norm):
    """Args:
        grad_norm: Gradient norm after clipping.
    """
'''


def test_a_docstring_finding_is_silenced_where_the_string_closes() -> None:
    insertion = suppression("a.py", DOCSTRING, _finding("a.py", 3, 34, 48))
    assert insertion == Insertion(4, 8, "  # metriclint: ignore[ML001]")
    assert _suppressed_lines("a.py", _applied(DOCSTRING, insertion))[3] == ("ML001",)


def test_a_comment_finding_is_silenced_on_its_line_after_the_remark() -> None:
    text = 'metrics = {"train/grad_norm": norm}  # post-clip\n'
    fixed = _silenced("a.py", text, _finding("a.py", 1, 40, 49))
    assert fixed == 'metrics = {"train/grad_norm": norm}  # post-clip  # metriclint: ignore[ML001]\n'
    assert _suppressed_lines("a.py", fixed)[1] == ("ML001",)


def test_a_second_code_joins_the_directive_already_on_the_line() -> None:
    text = "x = 1  # post-clip  # metriclint: ignore[ML002] reason\n"
    fixed = _silenced("a.py", text, _finding("a.py", 1, 10, 19))
    assert fixed == "x = 1  # post-clip  # metriclint: ignore[ML001, ML002] reason\n"


def test_markdown_is_silenced_inside_the_cell() -> None:
    text = "| Metric | Meaning |\n|---|---|\n| `grad_norm` | norm after clipping |\n"
    column = text.splitlines()[2].index("after clipping") + 1
    fixed = _silenced("d.md", text, _finding("d.md", 3, column, column + len("after clipping")))
    assert fixed.splitlines()[2] == "| `grad_norm` | norm after clipping <!-- metriclint: ignore[ML001] --> |"
    assert _suppressed_lines("d.md", fixed)[3] == ("ML001",)


def test_files_whose_source_reads_no_directive_get_no_suppression() -> None:
    assert suppression("t.json", '{"a": "b"}', _finding("t.json", 1, 2, 3)) is None


def _registry(tmp_path: Path, text: str) -> str:
    path = tmp_path / "metrics.yaml"
    path.write_text(text, encoding="utf-8")
    registry, _ = load(path, "metrics.yaml", load_builtin()[0])
    insertion = registry_entry(text, registry, "train/{tag}entropy")
    added = _applied(text, insertion)
    path.write_text(added, encoding="utf-8")
    assert "train/{tag}entropy" in load(path, "metrics.yaml", load_builtin()[0])[0].metrics
    return added


def test_a_new_key_ends_the_metrics_block(tmp_path: Path) -> None:
    added = _registry(tmp_path, "version: 1\nmetrics:\n    train/loss:\n        semantics: {reduction: mean}\nfacets: {}\n")
    assert added == ('version: 1\nmetrics:\n    train/loss:\n        semantics: {reduction: mean}\n    "train/{tag}entropy":\nfacets: {}\n')


def test_a_new_key_ends_a_file_without_a_final_line_break(tmp_path: Path) -> None:
    assert _registry(tmp_path, "version: 1\nmetrics:\n  train/loss:").endswith('train/loss:\n  "train/{tag}entropy":\n')


def test_a_registry_without_metrics_gets_the_block(tmp_path: Path) -> None:
    assert _registry(tmp_path, "version: 1\n") == 'version: 1\nmetrics:\n  "train/{tag}entropy":\n'
