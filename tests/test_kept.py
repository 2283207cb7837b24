"""What the last run kept of each file (extract/kept.py) makes a warm run fast; it never
changes what a run finds, nor what the audit shows, whatever changed in between."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Callable

import pytest
from conftest import FIXTURES, copy_fixture, fixture_project, read_sealed, write_sealed

from metriclint import engine
from metriclint import settings as config
from metriclint.extract import prune, trust
from metriclint.report import audit

PROJECTS = sorted(p.parent.name for p in FIXTURES.glob("*/expected.txt") if p.parent.name != "bad_registry")


def _same_as_a_whole_run(base: config.Config, cache: Path, label: str) -> engine.Analysis:
    return _judged_as(engine.analyse(dataclasses.replace(base, cache_dir=None, jobs=1)), base, cache, label)


def _judged_as(whole: engine.Analysis, base: config.Config, cache: Path, label: str) -> engine.Analysis:
    """A run with the cache, which must find and audit what `whole`, a run without it, did."""
    judged = engine.judge(dataclasses.replace(base, cache_dir=cache, jobs=1))
    assert judged.report == whole.report, label
    assert audit.build(judged) == audit.build(whole), label
    return judged


@pytest.mark.parametrize("name", PROJECTS)
def test_a_cold_and_a_warm_run_find_what_a_whole_run_finds(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole run is made once: nothing changes between the two, and a run of every fixture
    costs a process pool each."""
    monkeypatch.chdir(fixture_project(name, tmp_path))
    base = config.load((".",), None, None)
    whole = engine.analyse(dataclasses.replace(base, cache_dir=None, jobs=1))
    for label in ("cold", "warm"):
        _judged_as(whole, base, tmp_path / "c", label)
    assert list((tmp_path / "c" / "kept").iterdir())


def _append(name: str, text: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        path = project / name
        path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")

    return edit


def _prepend(name: str, text: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        path = project / name
        path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")

    return edit


def _write(name: str, text: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        (project / name).write_text(text, encoding="utf-8")

    return edit


def _delete(name: str) -> Callable[[Path], None]:
    return lambda project: (project / name).unlink()


_LOGS_GRAD_NORM = 'def log(run, norm):\n    """Log it.\n\n    Args:\n        norm: the gradient norm after clipping.\n    """\n    run.log({"train/grad_norm": norm, "train/extra": norm})\n'

# Each edit in turn on one copy of the demo project, each run checked against a whole run.
EDITS = [
    ("a comment appended to a module", _append("trainer/logging_utils.py", "\n# a note\n")),
    ("a line put before a module's code", _prepend("trainer/logging_utils.py", "\n")),
    ("a comment appended to the registry", _append("metrics.yaml", "# a note\n")),
    ("a registry alias added", _append("metrics.yaml", "  train/extra:\n    aliases: [extra_norm]\n")),
    ("a new module that logs a new key", _write("trainer/more.py", _LOGS_GRAD_NORM)),
    ("the new module's docstring changed", _write("trainer/more.py", _LOGS_GRAD_NORM.replace("after", "before"))),
    ("a module deleted", _delete("trainer/more.py")),
    ("the registry deleted", _delete("metrics.yaml")),
]


def test_every_edit_leaves_a_warm_run_finding_what_a_whole_run_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    _same_as_a_whole_run(config.load((".",), None, None), tmp_path / "c", "first")
    for label, edit in EDITS:
        edit(project)
        for run in ("after the edit", "again"):
            _same_as_a_whole_run(config.load((".",), None, None), tmp_path / "c", f"{label}, {run}")


@pytest.mark.parametrize("name", ["know_placeholder", "tooltips_grafana", "code_evidence_registry", "built_keys", "attribution_tests"])
def test_a_changed_module_leaves_a_warm_run_finding_what_a_whole_run_finds(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = copy_fixture(FIXTURES / name, tmp_path / name)
    monkeypatch.chdir(project)
    base = config.load((".",), None, None)
    _same_as_a_whole_run(base, tmp_path / "c", "first")
    for module in sorted(project.rglob("*.py")):
        _prepend(str(module.relative_to(project)), "# a note\n")(project)
        _same_as_a_whole_run(base, tmp_path / "c", f"{module.name} shifted")


def test_what_another_file_would_be_kept_for_is_not_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder comes with the tree: a kept view moved onto another file is refused whole."""
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(project)
    base = config.load((".",), None, None)
    _same_as_a_whole_run(base, tmp_path / "c", "first")
    (path,) = (tmp_path / "c" / "kept").iterdir()
    value = read_sealed(path)
    files = value["files"]
    stating = files.pop("trainer/logging_utils.py")
    assert "trainer/logging_utils.py" in json.dumps(stating[4])  # its view names its own file
    other = next(iter(files))
    files[other][4] = stating[4]
    write_sealed(path, "kept", value)
    with pytest.warns(trust.Dropped):  # the command line prints it as one line for the run
        _same_as_a_whole_run(base, tmp_path / "c", "forged")
    assert path.name == f"{prune.project_name(project)}.json"


def test_a_warm_run_reads_no_text_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not even the registry's descriptions: what they state is kept too, so the phrase
    patterns are never compiled (a tenth of a warm run on NVIDIA Megatron-LM)."""
    monkeypatch.chdir(FIXTURES / "demo")
    base = config.load((".",), None, None)
    cold = _same_as_a_whole_run(base, tmp_path / "c", "cold")
    warm = _same_as_a_whole_run(base, tmp_path / "c", "warm")
    assert "screen" in vars(cold.collection.vocabulary)
    assert "screen" not in vars(warm.collection.vocabulary) and "pattern" not in vars(warm.collection.vocabulary)
