"""`metriclint generate`: tooltip tables and docs from the registry, and `--check` for CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, invoke

from metriclint.sources.javascript import extractor

PROJECT = FIXTURES / "generate"
DESCRIPTIONS = {
    "train/grad_norm": "Global gradient L2 norm, measured before clipping.",
    "perf/step_time": "Wall-clock time of one optimizer step | forward + backward, in seconds.",
    "perf/tokens_per_gpu": "Tokens processed per GPU and step (Durchsatz pro Gerät).",
}
TOOLTIPS = ("generate", "tooltips", "--format", "ts", "--output", "web/descriptions.ts")
DOCS = ("generate", "docs", "--output", "docs/metrics.md")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_fixture(PROJECT, tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path / "project"


def test_the_committed_files_are_up_to_date(project: Path) -> None:
    for command in (TOOLTIPS, DOCS):
        result = invoke(*command, "--check")
        assert result.exit_code == 0, result.output
        assert result.stdout == ""


def test_a_registry_edit_makes_check_fail_with_a_diff_until_regenerated(project: Path) -> None:
    registry = project / "metrics.yaml"
    registry.write_text(registry.read_text().replace("measured before clipping", "before clipping"))
    before = (project / "web/descriptions.ts").read_bytes()
    result = invoke(*TOOLTIPS, "--check")
    assert result.exit_code == 1
    assert '-  "train/grad_norm": "Global gradient L2 norm, measured before clipping.",\n' in result.stdout
    assert '+  "train/grad_norm": "Global gradient L2 norm, before clipping.",\n' in result.stdout
    assert (project / "web/descriptions.ts").read_bytes() == before  # --check writes nothing
    assert invoke(*DOCS, "--check").exit_code == 1
    for command in (TOOLTIPS, DOCS):
        assert invoke(*command).exit_code == 0
        assert invoke(*command, "--check").exit_code == 0


def test_the_docs_region_is_refreshed_and_the_page_kept(project: Path) -> None:
    page = (project / "docs/metrics.md").read_text()
    assert page.startswith("# Training metrics\n\nWhat the training dashboards plot.")
    assert page.endswith("<!-- metriclint:end -->\n\nAsk on the team channel before adding a metric.\n")
    assert "| `perf/step_time` | Wall-clock time of one optimizer step \\| forward + backward, in seconds. | unit: seconds |" in page
    assert "| `rollout/reward` |  |  |" in page


def test_a_crlf_page_keeps_its_line_endings(project: Path) -> None:
    page = project / "docs/metrics.md"
    page.write_bytes(b"Intro\r\n<!-- metriclint:begin -->\r\nold\r\n<!-- metriclint:end -->\r\nEnd\r\n")
    assert invoke(*DOCS).exit_code == 0
    data = page.read_bytes()
    assert data.startswith(b"Intro\r\n<!-- metriclint:begin -->\r\n| Metric |") and data.endswith(b"<!-- metriclint:end -->\r\nEnd\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_a_page_without_its_region_is_a_usage_error(project: Path) -> None:
    (project / "docs/metrics.md").write_text("# Metrics\n")
    result = invoke(*DOCS)
    assert result.exit_code == 2
    assert result.stderr == "docs/metrics.md:1:1: needs exactly one '<!-- metriclint:begin -->' followed by one '<!-- metriclint:end -->'\n"


def test_a_new_page_is_the_region(project: Path) -> None:
    assert invoke("generate", "docs", "--output", "new/page.md").exit_code == 0
    assert (project / "new/page.md").read_text().startswith("<!-- metriclint:begin -->\n| Metric | Description | Facets |\n")


@pytest.mark.parametrize("fmt", ["js", "ts"])
def test_the_script_table_is_read_back_as_a_tooltip_table(project: Path, fmt: str) -> None:
    result = invoke("generate", "tooltips", "--format", fmt)
    (table,) = extractor(f".{fmt}")(f"t.{fmt}", result.stdout.encode()).tables
    assert {e.pattern: e.text.text for e in table.entries} == DESCRIPTIONS
    assert table.name == "METRIC_DESCRIPTIONS"


def test_json_tooltips(project: Path) -> None:
    assert json.loads(invoke("generate", "tooltips", "--format", "json").stdout) == DESCRIPTIONS


def test_a_hand_edit_of_the_generated_table_is_checked_like_any_tooltip(project: Path) -> None:
    assert invoke("check", ".").exit_code == 0
    table = project / "web/descriptions.ts"
    table.write_text(table.read_text().replace("measured before clipping", "measured after clipping"))
    result = invoke("check", ".")
    assert result.exit_code == 1 and "web/descriptions.ts:3:" in result.output
    assert invoke(*TOOLTIPS, "--check").exit_code == 1


def test_without_a_registry_generate_is_a_usage_error(in_tmp: Path) -> None:
    result = invoke("generate", "docs")
    assert result.exit_code == 2
    assert result.stderr == "metriclint: no registry found: write metrics.yaml or pass --registry\n"


def test_check_needs_an_output_file(project: Path) -> None:
    assert invoke("generate", "docs", "--check").exit_code == 2
