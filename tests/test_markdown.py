"""The Markdown source: which texts of a docs page speak for which metric, at which position."""

from __future__ import annotations

from metriclint.sources.markdown import extract


def mentions(text: str) -> list[tuple[int, int, tuple[str, ...], bool, str]]:
    return [(m.origins[0][0], m.origins[0][1], m.subjects, m.names_metrics, m.text) for m in extract("d.md", text.encode()).mentions]


def test_table_key_column_is_the_subject_of_the_other_cells() -> None:
    page = "| Signal | Healthy | Red flag |\n|---|---|---|\n| `loss` | ok | ok |\n| `rollout_time` / `train_time` | balanced | ok |\n"
    assert mentions(page) == [
        (3, 12, ("loss",), True, "ok"),
        (3, 17, ("loss",), True, "ok"),  # equal cells keep their own columns
        (4, 35, ("rollout_time", "train_time"), True, "balanced"),
        (4, 46, ("rollout_time", "train_time"), True, "ok"),
    ]


def test_a_cell_holding_a_nul_keeps_its_column() -> None:
    """markdown-it reads NUL as U+FFFD: the cell is still found on its line (a fuzz find)."""
    page = "| Metric | Meaning |\n|---|---|\n| grad_norm | after clipping \x00 |\n"
    assert mentions(page) == [(3, 15, ("grad_norm",), True, "after clipping \ufffd")]


def test_key_column_is_found_even_when_not_first_and_header_decides_certainty() -> None:
    page = "| What | Name |\n|---|---|\n| the loss | `train/loss` |\n"
    assert mentions(page) == [(3, 3, ("train/loss",), False, "the loss")]


def test_table_of_other_things_says_nothing() -> None:
    assert mentions("| Tool | When |\n|---|---|\n| `nsys profile` | deep CUDA profiling |\n| `/add_worker` | POST |\n") == []


def test_list_items_lead_with_their_metric() -> None:
    page = "## Logged metrics\n\n- `eval/accuracy`: fraction solved\n- **grad_norm** — norm before\n  clipping\n- prose about grad_norm\n"
    assert mentions(page) == [
        (3, 20, ("eval/accuracy",), True, "fraction solved"),
        (4, 19, ("grad_norm",), True, "norm before\nclipping"),
    ]  # "prose about grad_norm" defines nothing


def test_heading_naming_a_metric_makes_its_section_a_definition() -> None:
    page = "### `train/entropy`\n\nMean entropy.\n\n#### Notes\n\nStill about it.\n\n### Other\n\nNot about it.\n"
    assert [(line, subjects) for line, _, subjects, _, _ in mentions(page)] == [
        (3, ("train/entropy",)),
        (7, ("train/entropy",)),
    ]  # "Not about it." is prose outside any metric's section


def test_code_html_and_front_matter_state_nothing() -> None:
    page = (
        "---\ntitle: grad_norm after clipping\n---\n"
        "## `grad_norm`\n\n"
        "```text\ngrad_norm after clipping\n```\n\n"
        "    grad_norm after clipping\n\n"
        "<!--\ngrad_norm after clipping\n-->\n\n"
        "Norm <!-- after clipping --> of gradients.\n"
    )
    found = mentions(page)
    assert [(line, column) for line, column, *_ in found] == [(16, 1)]
    assert "after clipping" not in found[0][4] and found[0][4].startswith("Norm ")


def test_a_formula_in_backticks_names_its_operands_not_the_value() -> None:
    """`(-logprobs).sum(1)` is the negated log-probabilities: reading its words as "log-prob"
    would state the opposite of what it computes. A name in backticks says what it holds."""
    page = (
        "- `objective/entropy`: mean over completions of `(-logprobs).sum(1)`, `beta * kl`, `logprobs`, `log_probs.sum()`, `--per-token`\n"
    )
    assert mentions(page) == [
        (
            1,
            24,
            ("objective/entropy",),
            False,
            f"mean over completions of {' ' * 20}, {' ' * 11}, `logprobs`, `log_probs.sum()`, `--per-token`",
        ),
    ]


def test_undecodable_page_is_unreadable() -> None:
    import pytest

    from metriclint.sources import Unreadable

    with pytest.raises(Unreadable):
        extract("d.md", b"\xff\xfe bad")


def test_html_comment_suppresses_in_markdown(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from conftest import finding_lines, invoke, write_project

    monkeypatch.chdir(tmp_path)
    registry = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics: {clipping: before}\n"
    page = (
        "# Metrics\n\n| Metric | Meaning |\n|---|---|\n"
        "| `grad_norm` | norm after clipping <!-- metriclint: ignore[ML001] legacy page --> |\n\n"
        "<!-- metriclint: ignore[ML001] -->\n- `grad_norm`: norm after clipping\n\n"
        "- `grad_norm`: norm after clipping, reported\n"
        "<!-- metriclint: ignore[ML002] -->\n"
    )
    write_project(tmp_path, {"m.md": page}, registry)
    assert finding_lines(invoke("check", ".")) == ["ML001 m.md:10", "ML010 m.md:11"]


def test_a_page_without_the_directives_mark_is_not_searched_for_directives(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from metriclint.sources import markdown

    searched: list[str] = []

    def search(path: str, lines: list[str], tree: object, env: object) -> list[object]:
        searched.append(path)
        return []

    monkeypatch.setattr(markdown, "find_suppressions", search)
    extract("plain.md", b"# Metrics\n\n<!-- a note -->\n- `grad_norm`: norm before clipping\n")
    extract("marked.md", b"# Metrics\n\n<!-- metriclint: ignore[ML001] -->\n- `grad_norm`: norm after clipping\n")
    assert searched == ["marked.md"]


def test_a_run_parsed_when_asked_for_is_what_a_whole_page_parse_makes() -> None:
    """Inline runs are parsed only when the walk asks for their nodes: each must come out as
    the page's own parse has it, link references defined elsewhere on the page included."""
    from markdown_it import MarkdownIt
    from markdown_it.tree import SyntaxTreeNode

    from metriclint.sources import markdown

    page = (
        "# `train/loss` &lowbar; [docs][ref]\n\n| Metric | Meaning |\n|---|---|\n"
        "| **grad_norm** | *after* <!-- note --> clipping, see [ref] \\_ |\n\n- `kl`: mean [x](y)\n\n[ref]: https://example.org\n"
    )
    env: dict[str, object] = {}
    blocks = SyntaxTreeNode(markdown.parser(blocks_only=True).parse(page, env))
    eager = SyntaxTreeNode(MarkdownIt("commonmark").enable("table").parse(page))

    def shape(node: SyntaxTreeNode) -> list[object]:
        return [(c.type, c.content, c.attrs, shape(c)) for c in node.children]

    lazy = [shape(markdown.InlineRun(node, env)) for node in blocks.walk() if node.type == "inline"]  # type: ignore[arg-type]
    whole = [shape(node) for node in eager.walk() if node.type == "inline"]
    assert lazy == whole and len(whole) == 6 and ("link", "", {"href": "https://example.org"}, [("text", "docs", {}, [])]) in lazy[0]


def test_a_name_spelled_with_an_entity_is_still_a_name() -> None:
    assert mentions("## grad&lowbar;norm\n\nNorm after clipping.\n") == [(3, 1, ("grad_norm",), False, "Norm after clipping.")]
