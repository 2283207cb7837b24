"""The docs: the pages generated from the rules and the data under `rules/` are the ones
committed, `metriclint rule` prints a rule's page, the rule links lead to a page the site has,
and the README stays a landing page whose links resolve."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, invoke

from metriclint.base.toml import tomllib
from metriclint.checks import ML001, ML014, RULES
from metriclint.docs import __main__ as generator
from metriclint.docs import pages
from metriclint.report import formats


@pytest.fixture(scope="module")
def messages() -> dict[str, list[list[str]]]:
    """What each rule's bad examples report, as tests/golden/rules/ pins them: test_rules.py
    holds those to real runs, and test_rule_prints_the_rule_page runs the generator's own."""
    return {rule.code: [_golden(rule.code, index) for index in range(len(rule.bad))] for rule in RULES}


def _golden(code: str, index: int) -> list[str]:
    pinned = (ROOT / "tests" / "golden" / "rules" / f"{code}-bad-{index}.txt").read_text(encoding="utf-8")
    return pinned.partition("\n--- ")[0].splitlines()  # the lines reported, without what `fix` leaves


@pytest.fixture(scope="module")
def generated(messages: dict[str, list[list[str]]]) -> dict[str, str]:
    """Every generated page, by its path from the repository root."""
    return pages.generated(ROOT, RULES, messages)


def committed(path: str) -> str:
    """A generated page as committed (test_the_generated_pages_are_the_committed_ones holds them current)."""
    return (ROOT / path).read_text(encoding="utf-8")


def test_the_generated_pages_are_the_committed_ones(generated: dict[str, str], request: pytest.FixtureRequest) -> None:
    """Run `python -m metriclint.docs` after changing a rule, a facet or the code knowledge
    (`python -m pytest --update-golden` writes them too, with the other golden files)."""
    if request.config.getoption("--update-golden"):
        pages.write(ROOT, generated)
    assert pages.stale(ROOT, generated) == []
    assert sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "rules").glob("*.md")) == sorted(
        path for path in generated if path.startswith("docs/rules/")
    )


def test_a_rule_summary_changed_without_regenerating_is_stale(generated: dict[str, str], messages: dict[str, list[list[str]]]) -> None:
    changed = tuple(dataclasses.replace(r, summary="A text says something else.") if r is ML001 else r for r in RULES)
    fresh = {**generated, **pages.rule_index_and_pages(changed, messages)}
    assert pages.stale(ROOT, fresh) == ["docs/rules/ML001.md", "docs/rules/index.md"]


def test_the_generator_writes_the_pages_and_check_says_which_are_stale(
    tmp_path: Path, messages: dict[str, list[list[str]]], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pages, "all_messages", lambda rules: messages)
    (tmp_path / "docs" / "rules").mkdir(parents=True)
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# x\n\nSee [the registry](docs/registry.md).\n", encoding="utf-8")
    (tmp_path / "docs" / "rules" / "ML999.md").write_text("a page of a rule that is gone\n", encoding="utf-8")
    root = ["--root", str(tmp_path)]
    assert generator.main([*root, "--check"]) == 1
    stale = capsys.readouterr().err
    assert "docs/rules/ML001.md is stale" in stale and "docs/rules/ML999.md is stale" in stale
    assert generator.main(root) == 0
    assert not (tmp_path / "docs" / "rules" / "ML999.md").exists()
    assert (tmp_path / "docs" / "index.md").read_text(encoding="utf-8") == "# x\n\nSee [the registry](registry.md).\n"
    assert (tmp_path / "docs" / "rules" / "ML001.md").read_text(encoding="utf-8") == committed("docs/rules/ML001.md")
    assert generator.main([*root, "--check"]) == 0
    assert generator.main(["--root", str(tmp_path / "docs")]) == 2  # no mkdocs.yml there


def test_a_rule_page_holds_its_docs_examples_and_messages() -> None:
    page = committed("docs/rules/ML001.md")
    for part in (
        ML001.summary,
        ML001.why,
        ML001.fix,
        ML001.silencing,
        "grad_norm: Norm after clipping.",
        "grad_norm: Norm before clipping.",
    ):
        assert part in page
    golden = (ROOT / "tests" / "golden" / "rules" / "ML001-bad-0.txt").read_text(encoding="utf-8").splitlines()[0]
    assert golden in page  # the message, as `metriclint check` prints it
    assert "--select ML014" in committed("docs/rules/ML014.md")  # off by default, and how to turn it on
    assert "metriclint live-check" in committed("docs/rules/ML014.md")


def test_the_facet_and_code_knowledge_pages_come_from_the_rules_folder() -> None:
    facets, code = committed("docs/reference/facets.md"), committed("docs/reference/code-knowledge.md")
    for facet in sorted((ROOT / "rules" / "facets").glob("*.yaml")):
        assert f"## {facet.stem}" in facets
    assert "**before clipping**" in facets and "clip bound" in facets  # a canonical phrase; a phrase that states nothing
    for known in sorted((ROOT / "rules" / "code").glob("*.yaml")):
        assert f"## {known.name}" in code
    # Each fact with the source it was read in.
    assert "torch.nn.utils.clip_grad_norm_" in code and "pytorch torch/nn/utils/clip_grad.py" in code


def test_rule_prints_the_rule_page() -> None:
    result = invoke("rule", "ml001")
    assert result.exit_code == 0
    assert result.output == committed("docs/rules/ML001.md")


def test_rule_all_prints_every_page_and_json_holds_the_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    # The examples' runs are test_rule_prints_the_rule_page's; here every rule's page, without them.
    monkeypatch.setattr(pages, "all_messages", lambda rules: {r.code: [[] for _ in r.bad] for r in rules})
    result = invoke("rule", "--all", "--output-format", "json")
    assert result.exit_code == 0
    documents = json.loads(result.output)
    assert [d["code"] for d in documents] == [r.code for r in RULES]
    assert documents[0]["summary"] == ML001.summary and documents[0]["explanation"].startswith("# ML001 registry-contradiction")
    assert documents[-1]["default"] is True and not next(d for d in documents if d["code"] == ML014.code)["default"]
    text = invoke("rule", "--all").output
    assert [line for line in text.splitlines() if re.match(r"# ML\d{3} ", line)] == [f"# {r.code} {r.name}" for r in RULES]


def test_rule_of_an_unknown_code_or_none_is_a_usage_error() -> None:
    unknown = invoke("rule", "ML123")
    assert unknown.exit_code == 2
    assert unknown.stderr == "metriclint: unknown rule 'ML123'; `metriclint rules` lists them\n"
    assert invoke("rule").exit_code == 2
    assert invoke("rule", "ML001", "--all").exit_code == 2


def test_rule_links_lead_to_the_rule_page_of_the_published_site(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"].get("urls", {})
    assert formats.DOCUMENTATION == urls.get("Documentation")  # one site, named in both places
    assert formats.rule_url("ML001") is None  # none is published yet: no dead link
    monkeypatch.setattr(formats, "DOCUMENTATION", "https://example.org/metriclint/")
    assert formats.rule_url("ML001") == "https://example.org/metriclint/rules/ML001/"
    rules = json.loads(invoke("check", "fixtures/demo", "--format", "sarif").output)["runs"][0]["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == "https://example.org/metriclint/rules/ML001/"


@pytest.mark.slow
def test_the_built_site_has_every_rule_page_a_link_names(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)], cwd=ROOT, check=True)
    for rule in RULES:
        assert (site / formats.RULE_PAGE.format(code=rule.code) / "index.html").is_file(), rule.code


def test_the_readme_is_a_landing_page_whose_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "python3 -m pip install . && metriclint check fixtures/demo\n" in readme
    assert "python3 -m pip install '.[test]' && python3 -m pytest\n" in readme
    linked = re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", readme)
    assert "docs/registry.md" in linked and "docs/rules/index.md" in linked
    for target in linked:
        assert (ROOT / target).is_file(), target


def test_every_docs_page_is_in_the_navigation() -> None:
    def pages(entry: object) -> list[str]:
        if isinstance(entry, str):
            return [entry]
        values = entry.values() if isinstance(entry, dict) else entry if isinstance(entry, list) else []
        return [page for value in values for page in pages(value)]

    listed = set(pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]))
    written = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert written == listed


def test_an_example_that_cannot_run_says_why_instead_of_reporting_nothing() -> None:
    from metriclint.checks import Example
    from metriclint.docs.examples import reported

    lines = reported(
        Example({"train.py": "x = 1\n"}, None, ("ML011 train.py:1",), command=("live-check", ".", "--run", "missing")), "ML011"
    )
    assert lines == ["--run: 'missing' does not exist"]
