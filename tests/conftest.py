"""Shared helpers: run metriclint in-process the way a user runs it, and read expectations."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner, Result

from metriclint import engine, settings
from metriclint.cli import main
from metriclint.extract import trust
from metriclint.model import CodeClaim

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "tests" / "golden"
Golden = Callable[[str | Path, str], None]  # the `golden` fixture


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Write the golden files (tests/golden/, fixtures/*/expected.txt and the other expected outputs) from what metriclint produces now, instead of comparing.",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """`golden(name, actual)`: `actual` must be, byte for byte, what tests/golden/<name> holds
    (or the file at `name` when it is a full path: a fixture's expected.txt, an expected
    draft or fix); with `--update-golden`, it becomes what the file holds (review the diff
    before committing). Every golden file of the suite goes through here."""
    update = request.config.getoption("--update-golden")

    def check(name: str | Path, actual: str) -> None:
        path = GOLDEN / name  # a full path stays itself
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(actual.encode("utf-8"))
        assert path.is_file(), f"no golden file {name}; run `python -m pytest --update-golden` and review it"
        assert actual == path.read_bytes().decode("utf-8"), f"{name} differs; if the change is intended, run with --update-golden"

    return check


def invoke(*args: str) -> Result:
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        gc.unfreeze()  # a command freezes what it made (cli/project.py): in one process of many runs, it must be collected


def run_apart(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`metriclint ARGS` in a process of its own, for what must not take the test run with it:
    a crash, a signal, a run that never ends (then `timeout` fails the test)."""
    return subprocess.run([sys.executable, "-m", "metriclint", *args], capture_output=True, text=True, timeout=timeout, check=False)


def code_claims(project: Path) -> tuple[CodeClaim, ...]:
    """What a whole zero-config run of `project` finds its code computes for each metric, run
    on a copy outside this repository (see `fixture_project`)."""
    cwd = Path.cwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(copy_fixture(project, Path(scratch) / project.name))
        try:
            return engine.analyse(settings.load((".",), None, None)).code
        finally:
            os.chdir(cwd)


# The metrics the Hugging Face Trainer's own keys with code facts are logged as (rules/code/frameworks.yaml).
TRAINER_FACT_KEYS = frozenset(
    {
        *("grad_norm", "train/grad_norm", "loss", "train/loss", "train_loss", "train/train_loss"),
        *("train_runtime", "train/train_runtime", "train_samples_per_second", "train/train_samples_per_second"),
    }
)

TWIN = "twin.yaml"


def copy_fixture(source: Path, target: Path, *ignored: str) -> Path:
    """A fixture project copied for a test to change, without the cache a run over the
    original leaves there (the README's quick start runs on fixtures/demo). A twin
    (fixtures/X/twin.yaml) is made from its base: see `make_twin`."""
    ignore = shutil.ignore_patterns(".metriclint_cache", TWIN, *ignored)
    if (source / TWIN).is_file():
        return make_twin(source, target, ignore)
    shutil.copytree(source, target, ignore=ignore)
    return target


def fixture_project(name: str, tmp_path: Path) -> Path:
    """fixtures/<name> copied under `tmp_path` (for a twin, the project made from its base),
    outside this repository: in place, a fixture without a registry or settings is part of the
    repository's project, so its run read every file of metriclint's own (and other fixtures'
    keys changed its findings), ten seconds and more a run."""
    return copy_fixture(FIXTURES / name, tmp_path / name)


def make_twin(twin: Path, target: Path, ignore: Callable[[Any, list[str]], set[str]]) -> Path:
    """A twin is its base project with a few edits, written as data in `twin.yaml`:

        base: know_x                  # the fixture folder it starts from
        replacements:                 # each `old` occurs exactly once in the base's file
          - {path: train.py, old: "...", new: "..."}
        remove: [unused.py]           # base files the twin does not have (optional)

    and the files the twin folder holds itself (its expected.txt, files of its own) are
    copied over. A replacement that does not apply fails the test that asked for the twin."""
    spec = yaml.safe_load((twin / TWIN).read_text(encoding="utf-8"))
    base = FIXTURES / spec["base"]
    shutil.copytree(base, target, ignore=ignore)
    for name in spec.get("remove", []):
        (target / name).unlink()
    edits: dict[str, list[tuple[int, str, str]]] = {}
    for replacement in spec["replacements"]:
        path, old, new = replacement["path"], replacement["old"], replacement["new"]
        text = (base / path).read_bytes().decode("utf-8")
        assert text.count(old) == 1, f"{twin.name}/{TWIN}: {old!r} occurs {text.count(old)} times in {spec['base']}/{path}, not once"
        edits.setdefault(path, []).append((text.index(old), old, new))
    for path, changes in edits.items():
        text = (base / path).read_bytes().decode("utf-8")
        end = len(text)
        for start, old, new in sorted(changes, reverse=True):  # from the end: the earlier positions stay put
            assert start + len(old) <= end, f"{twin.name}/{TWIN}: two replacements overlap in {path}"
            text, end = text[:start] + new + text[start + len(old) :], start
        (target / path).write_bytes(text.encode("utf-8"))
    shutil.copytree(twin, target, ignore=ignore, dirs_exist_ok=True)
    return target


def read_sealed(path: Path) -> Any:
    """The JSON a cache file holds, under its digest line (extract/trust.py)."""
    return json.loads(path.read_bytes()[65:])


def write_sealed(path: Path, kind: str, value: object) -> None:
    """Write a cache file sealed with this test's key, as a forger holding the key (or a bug)
    would: what is checked after the digest must still refuse it. Text and bytes are written as they are."""
    secret = trust.key()
    assert secret is not None
    data = value if isinstance(value, bytes) else value.encode("utf-8") if isinstance(value, str) else json.dumps(value).encode("utf-8")
    path.write_bytes(trust.seal(secret, kind, path.name, data))


def write_project(base: Path, files: dict[str, str], registry: str | None = None) -> Path:
    for name, content in files.items():
        target = base / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    if registry is not None:
        (base / "metrics.yaml").write_text(registry, encoding="utf-8")
    return base


def finding_lines(result: Result) -> list[str]:
    """`CODE path:line` for each finding of a text run."""
    lines = []
    for line in result.output.splitlines():
        location, _, rest = line.partition(": ")
        if rest[:2] == "ML" and location.count(":") == 2:
            path, number, _ = location.split(":")
            lines.append(f"{rest.split()[0]} {path}:{number}")
    return lines


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the runs in a test hand to the workers (those the cache did not have), as shown."""
    from metriclint.extract import runner

    files: list[str] = []
    original = runner.run_jobs

    def recording(jobs: list[runner.Job], *rest: Any) -> Any:  # in this process: the workers read what it hands out
        files.extend(job.shown for job in jobs)
        return original(jobs, *rest)

    monkeypatch.setattr(runner, "run_jobs", recording)
    return files


@pytest.fixture(autouse=True)
def cache_outside_the_repo(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs on the fixture projects must not leave a cache folder inside the repository, nor
    a cache key in the home folder (extract/trust.py)."""
    monkeypatch.setenv("METRICLINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    monkeypatch.delenv("METRICLINT_CACHE_KEY", raising=False)


def _accept_registrations() -> None:
    """pytest-lsp's client answers the server's `client/registerCapability` as an editor does
    (it has no handler of its own, and the server asks for file watchers when the client's
    capabilities say it takes them); each registration is kept in `client.registered`."""
    try:
        from lsprotocol import types
        from pytest_lsp import LanguageClient, client
    except ImportError:  # the server extra is not installed: its tests are skipped
        return

    @client.default_feature(types.CLIENT_REGISTER_CAPABILITY)
    def registered(ls: LanguageClient, params: types.RegistrationParams) -> None:  # named `ls`, so pygls hands the client over
        setattr(ls, "registered", [*getattr(ls, "registered", []), *params.registrations])


_accept_registrations()
