"""The CI formats: each one's structure, checked field by field."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, copy_fixture, invoke

from metriclint.checks import RULES
from metriclint.model import Finding, Report, Severity, Span
from metriclint.report import formats
from metriclint.report.formats import FORMATS, github


@pytest.fixture
def repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(FIXTURES.parent)
    return FIXTURES.parent


def test_formats_are_the_contract() -> None:
    assert sorted(FORMATS) == sorted(["text", "json", "json-lines", "sarif", "github", "gitlab"])


def test_sarif_has_every_field_code_scanning_reads(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo", "--format", "sarif")
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["version"] == "2.1.0" and "sarif-2.1.0" in document["$schema"]
    (run,) = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "metriclint"
    assert [r["id"] for r in driver["rules"]] == [rule.code for rule in RULES]
    for rule, entry in zip(RULES, driver["rules"]):
        assert entry["name"] == rule.name
        assert entry["shortDescription"]["text"] == rule.summary
        assert entry["fullDescription"]["text"] == rule.why
        assert entry["help"]["text"].startswith(rule.fix)
        assert entry["defaultConfiguration"]["level"] == rule.severity.value
    (result_,) = run["results"]
    assert result_["ruleId"] == "ML001" and result_["level"] == "error"
    assert driver["rules"][result_["ruleIndex"]]["id"] == "ML001"
    assert result_["message"]["text"].startswith("train/grad_norm: docstring says clipping=after")
    (location,) = result_["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "fixtures/demo/trainer/logging_utils.py"
    assert physical["region"] == {"startLine": 10, "startColumn": 34, "endLine": 10, "endColumn": 48}
    (related,) = result_["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "fixtures/demo/metrics.yaml"
    assert related["physicalLocation"]["region"]["startLine"] == 7
    assert related["message"]["text"] == "clipping: before"
    assert set(result_["partialFingerprints"]) == {"metriclint/v1"}


SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("project", ["demo", "suppressions", "markdown_docs"])
def test_sarif_is_valid_against_the_official_schema(repo_root: Path, project: str) -> None:
    document = json.loads(invoke("check", f"fixtures/{project}", "--format", "sarif").output)
    assert document["runs"][0]["results"]
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(document)


def test_sarif_messages_link_their_related_locations(repo_root: Path) -> None:
    (result_,) = json.loads(invoke("check", "fixtures/demo", "--format", "sarif").output)["runs"][0]["results"]
    assert result_["message"]["text"].endswith("registry says before ([fixtures/demo/metrics.yaml:7](1))")
    assert [r["id"] for r in result_["relatedLocations"]] == [1]


def test_sarif_uris_are_relative_to_the_repository_root(repo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_root = json.loads(invoke("check", "fixtures/demo", "--format", "sarif").output)["runs"][0]
    monkeypatch.chdir(repo_root / "fixtures" / "demo")
    from_folder = json.loads(invoke("check", ".", "--format", "sarif").output)["runs"][0]
    for key in ("locations", "relatedLocations", "partialFingerprints"):  # the message shows paths as the run does
        assert [r[key] for r in from_folder["results"]] == [r[key] for r in from_root["results"]], key
    assert from_folder["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo_root.as_uri() + "/"}}


def test_sarif_fingerprints_survive_unrelated_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "suppressions"
    copy_fixture(FIXTURES / "suppressions", target)
    monkeypatch.chdir(target)
    first = json.loads(invoke("check", ".", "--format", "sarif").output)["runs"][0]["results"]
    (target / "stale.py").write_text("# moved\n" + (target / "stale.py").read_text())
    second = json.loads(invoke("check", ".", "--format", "sarif").output)["runs"][0]["results"]
    prints = [r["partialFingerprints"]["metriclint/v1"] for r in first]
    assert prints == [r["partialFingerprints"]["metriclint/v1"] for r in second]
    assert len(set(prints)) == len(prints)  # two identical findings in one file still differ
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in first] != [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in second
    ]


def test_github_annotations(repo_root: Path) -> None:
    result = invoke("check", "fixtures/demo", "--format", "github")
    assert result.output == (
        "::error file=fixtures/demo/trainer/logging_utils.py,line=10,endLine=10,col=34,endColumn=48,title=ML001::"
        'train/grad_norm: docstring says clipping=after ("after clipping"); registry says before (fixtures/demo/metrics.yaml:7)\n'
    )


def test_github_escapes_data_and_properties() -> None:
    finding = Finding(
        rule="ML900",
        name="unparsable-source",
        severity=Severity.WARNING,
        span=Span("a,b:c%.py", 1, 2, 3, 4),
        message="100%\r\nbroken: yes, really",
    )
    out = io.StringIO()
    github(Report((finding,), 1), out)
    assert out.getvalue() == (
        "::warning file=a%2Cb%3Ac%25.py,line=1,endLine=3,col=2,endColumn=4,title=ML900::100%25%0D%0Abroken: yes, really\n"
    )


def test_github_escapes_control_characters_as_text_does() -> None:
    """An annotation is also a log line: a file name or quoted text must not recolour the
    Actions log or end the command early (a NUL, an escape sequence)."""
    finding = Finding(
        rule="ML001",
        name="contradicted-docstring",
        severity=Severity.ERROR,
        span=Span("caf\x1b[31m.py", 1, 2, 1, 4),
        message="says\t\x00\x9b 50%\nok",
    )
    out = io.StringIO()
    github(Report((finding,), 1), out)
    assert out.getvalue() == ("::error file=caf\\x1b[31m.py,line=1,endLine=1,col=2,endColumn=4,title=ML001::says\\t\\x00\\x9b 50%25%0Aok\n")


def test_gitlab_code_quality(repo_root: Path) -> None:
    (issue,) = json.loads(invoke("check", "fixtures/demo", "--format", "gitlab").output)
    assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
    assert issue["check_name"] == "ML001" and issue["severity"] == "major"
    assert issue["description"].startswith("train/grad_norm: docstring says")
    assert issue["location"] == {"path": "fixtures/demo/trainer/logging_utils.py", "lines": {"begin": 10}}
    assert len(issue["fingerprint"]) == 32


def test_json_lines_is_one_finding_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES / "suppressions")
    lines = invoke("check", ".", "--format", "json-lines").output.splitlines()
    full = json.loads(invoke("check", ".", "--format", "json").output)["findings"]
    assert [json.loads(line) for line in lines] == full


def test_the_text_format_ends_each_finding_with_its_severity(repo_root: Path) -> None:
    lines = invoke("check", "fixtures/suppressions", "-q").stdout.splitlines()
    assert lines and all(line.endswith((" [error]", " [warning]")) for line in lines)
    assert any(" ML010 " in line and line.endswith(" [warning]") for line in lines)


@pytest.mark.parametrize(
    ("environ", "terminal", "coloured"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"NO_COLOR": "1"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"NO_COLOR": ""}, True, True),
    ],
)
def test_colour_only_on_a_terminal_unless_no_color_or_force_color(environ: dict[str, str], terminal: bool, coloured: bool) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return terminal

    painted = formats.painter(Stream(), environ)("ML001", fg="red")
    assert (painted != "ML001") is coloured


def test_a_run_without_a_registry_says_so_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    result = invoke("check", ".")
    assert (
        result.stderr
        == "metriclint: no registry for . (no metrics.yaml found, none configured); comparing the texts with each other only\n"
    )
    assert invoke("check", ".", "-q").stderr == ""


@pytest.mark.parametrize("output_format", ["gitlab", "github"])
def test_gitlab_and_github_paths_are_relative_to_the_repository_root(
    repo_root: Path, monkeypatch: pytest.MonkeyPatch, output_format: str
) -> None:
    # GitLab keys its Code Quality issues by fingerprint and path, and GitHub places annotations
    # by the path from the checkout: a job run in a subfolder must move neither.
    from_root = invoke("check", "fixtures/demo", "--format", output_format).output
    monkeypatch.chdir(repo_root / "fixtures" / "demo")
    from_folder = invoke("check", ".", "--format", output_format).output
    if output_format == "gitlab":
        located = [(i["location"], i["fingerprint"]) for i in json.loads(from_root)]
        assert [(i["location"], i["fingerprint"]) for i in json.loads(from_folder)] == located
    else:
        assert from_folder.split("::")[1] == from_root.split("::")[1]
        assert "file=fixtures/demo/trainer/logging_utils.py," in from_folder
