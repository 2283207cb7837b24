"""Code knowledge a project declares in files its settings name (`code-knowledge`): read and
validated as the registry's `code:` section is, relative to the settings file, and part of
what the cache's entries depend on."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, copy_fixture, invoke, write_project

HELPERS = "results:\n  - function: token_average\n    says: averages over the unmasked tokens\n    facts: {reduction: mean}\n"
SOURCE = (
    "from rlkit.stats import token_average\n\n\n"
    "def report(loss, mask, writer):\n    writer.log({'policy/loss': token_average(loss, mask)})  # summed over the tokens\n"
)


def _codes(output: str) -> list[str]:
    return [line.split(": ", 1)[1].split(" ", 1)[0] for line in output.splitlines() if ": ML" in line]


def test_a_bad_code_knowledge_file_is_exit_2_with_every_problem_at_its_position(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "metriclint.toml": 'code-knowledge = ["tools/helpers.yaml"]\n',
            "tools/helpers.yaml": (
                "results:\n  - function: token_average\n    says: averages\n    facts: {reduction: median}\n"
                "  - function: total\n    facts: {}\nmetrics: {}\n"
            ),
            "a.py": SOURCE,
        },
    )
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "tools/helpers.yaml:4:13: unknown value 'median' for facet 'reduction'",
        "tools/helpers.yaml:5:5: an entry needs one of 'call', 'method', 'expression' or 'function', and 'says' and 'facts'",
        "tools/helpers.yaml:7:1: unknown key 'metrics' in a code knowledge file; expected one of: results",
    ]


def test_problems_in_several_files_are_reported_at_once(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "metriclint.toml": 'code-knowledge = ["a.yaml", "b.yaml"]\n',
            "a.yaml": "results: {}\n",
            "b.yaml": "# nothing yet\n",
        },
    )
    result = invoke("check", ".")
    assert (result.exit_code, result.stderr.splitlines()) == (
        2,
        [
            "a.yaml:1:10: 'results' must be a list, not {}",
            "b.yaml:1:1: the code knowledge file is empty; it needs a 'results' list",
        ],
    )


def test_a_missing_code_knowledge_file_is_an_error_at_the_setting(in_tmp: Path) -> None:
    write_project(in_tmp, {"pyproject.toml": '[tool.metriclint]\nselect = ["ML"]\ncode-knowledge = ["absent.yaml"]\n', "a.py": SOURCE})
    result = invoke("check", ".")
    assert (result.exit_code, result.stderr) == (2, "pyproject.toml:3:19: code knowledge file 'absent.yaml' not found\n")


def test_a_declared_fact_may_use_the_registrys_own_facets(in_tmp: Path) -> None:
    registry = "version: 1\nfacets:\n  smoothing:\n    values:\n      raw: [raw]\n      ema: [smoothed]\nmetrics:\n  policy/loss: {}\n"
    helpers = "results:\n  - function: token_average\n    says: the raw batch value\n    facts: {smoothing: raw}\n"
    source = SOURCE.replace("summed over the tokens", "smoothed")
    write_project(in_tmp, {"metriclint.toml": 'code-knowledge = ["h.yaml"]\n', "h.yaml": helpers, "a.py": source}, registry)
    result = invoke("check", ".")
    assert _codes(result.output) == ["ML006"] and "(declared in h.yaml)" in result.output


def test_a_declared_helper_gives_its_facts_without_a_registry(in_tmp: Path) -> None:
    write_project(in_tmp, {"metriclint.toml": 'code-knowledge = ["h.yaml"]\n', "h.yaml": HELPERS, "a.py": SOURCE})
    result = invoke("check", ".")
    assert result.exit_code == 1 and _codes(result.output) == ["ML006"]
    assert "a.py:5:" in result.output and "averages over the unmasked tokens (declared in h.yaml)" in result.output


def test_an_extended_settings_file_names_its_files_relative_to_itself(in_tmp: Path) -> None:
    write_project(
        in_tmp,
        {
            "shared/base.toml": 'code-knowledge = ["helpers.yaml"]\n',
            "shared/helpers.yaml": HELPERS,
            "metriclint.toml": 'extend = "shared/base.toml"\n',
            "a.py": SOURCE,
        },
    )
    assert _codes(invoke("check", ".").output) == ["ML006"]


def test_changing_a_code_knowledge_file_changes_what_a_cached_run_finds(tmp_path: Path) -> None:
    project = copy_fixture(FIXTURES / "know_declared_file_silent", tmp_path / "project")
    cache = tmp_path / "cache"
    first = invoke("check", str(project), "--cache-dir", str(cache))
    helpers = project / "tools" / "metric_helpers.yaml"
    helpers.write_text(
        helpers.read_text(encoding="utf-8").replace("reduction: mean, granularity: per-token", "reduction: sum"), encoding="utf-8"
    )
    second = invoke("check", str(project), "--cache-dir", str(cache))
    assert (first.exit_code, second.exit_code) == (0, 1)
    assert _codes(second.output) == ["ML006", "ML006"]  # the registry's and the comment's mean
    assert "registry says reduction=mean" in second.output
