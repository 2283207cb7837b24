"""The cache and the worker pool change how fast a run is, never what it finds."""

from __future__ import annotations

import dataclasses
import gc
import io
import multiprocessing
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import FIXTURES, copy_fixture, fixture_project, invoke, write_project

from metriclint import engine
from metriclint import settings as config
from metriclint.extract import cache, runner
from metriclint.extract.aside import aside
from metriclint.model import ReadFailure, Reading
from metriclint.report.formats import FORMATS
from metriclint.sources import Extraction, Options

PROJECTS = sorted(p.parent.name for p in FIXTURES.glob("*/expected.txt") if p.parent.name != "bad_registry")


def _most_files(names: list[str], count: int) -> set[str]:
    """The projects with the most files, where the workers have the most to share out."""
    return set(sorted(names, key=lambda name: (-sum(path.is_file() for path in (FIXTURES / name).rglob("*")), name))[:count])


# Every project here; on the other Pythons .ci/run tries, those with the most files (five runs
# of each of six hundred projects, a pool of workers each, were two thirds of those runs' time).
SAMPLED = _most_files(PROJECTS, 24)
# What each of the other projects is run with besides the plain run: workers that write a cold
# cache. A warm cache is read for every project by tests/test_kept.py; the sample above is run
# every way (five runs of every project were a quarter of the suite's time).
EVERY_PROJECT = ("cold cache, --jobs 2",)


def _json(settings: config.Config) -> str:
    out = io.StringIO()
    FORMATS["json"](engine.analyse(settings).report, out, False)
    return out.getvalue()


@pytest.mark.parametrize("name", [name if name in SAMPLED else pytest.param(name, marks=pytest.mark.every_fixture) for name in PROJECTS])
def test_findings_are_identical_with_and_without_cache_and_workers(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fixture_project(name, tmp_path))
    base = config.load((".",), None, None)
    plain = _json(dataclasses.replace(base, jobs=1, cache_dir=None))
    variants = {
        "--jobs 2": dataclasses.replace(base, jobs=2, cache_dir=None),
        "cold cache, --jobs 2": dataclasses.replace(base, jobs=2, cache_dir=tmp_path / "c"),
        "warm cache, --jobs 1": dataclasses.replace(base, jobs=1, cache_dir=tmp_path / "c"),
        "warm cache, --jobs 2": dataclasses.replace(base, jobs=2, cache_dir=tmp_path / "c"),
    }
    for label, settings in variants.items():
        if name not in SAMPLED and label not in EVERY_PROJECT:
            continue
        found = _json(settings)
        assert found == plain, f"{label}; ML900 there: {[line for line in found.splitlines() if 'ML900' in line or 'message' in line]}"


def _copy_demo(tmp_path: Path) -> Path:
    project = tmp_path / "demo"
    copy_fixture(FIXTURES / "demo", project)
    return project


def _python_in_demo(tmp_path: Path, code: str, readme: str | None = None) -> subprocess.CompletedProcess[str]:
    """`code` run by a Python of its own in a copy of the demo project, with `readme` as its README.md."""
    project = _copy_demo(tmp_path)
    if readme is not None:
        (project / "README.md").write_text(readme, encoding="utf-8")
    return subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)


def test_an_ordinary_project_never_imports_libcst(tmp_path: Path) -> None:
    """CPython's parser reads Python; libcst is the fallback for syntax newer than it (and slow
    to import), so neither a cold nor a warm run of an ordinary project imports it."""
    project = _copy_demo(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "METRICLINT_CACHE_DIR"}
    code = (
        "import sys\nfrom metriclint.cli import main\n"
        "try:\n    main(['check', '.', '-q', '--jobs', '1'])\nexcept SystemExit:\n    pass\n"
        "print('libcst' in sys.modules, file=sys.stderr)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True) for _ in range(2)]
    assert [r.stderr.strip() for r in runs] == ["False", "False"]
    assert runs[0].stdout == runs[1].stdout and "ML001" in runs[0].stdout
    assert (project / ".metriclint_cache" / ".gitignore").is_file()


def test_a_warm_check_imports_only_what_it_uses(tmp_path: Path) -> None:
    """A run whose cache holds every file (pre-commit, an editor's save) is mostly start-up:
    it imports neither the readers of sources nor the worker pool, nor what only other
    commands use (the audit and its formats)."""
    project = _copy_demo(tmp_path)
    readers = ("metriclint.sources.python.walk", "metriclint.sources.markdown", "markdown_it")
    pool = ("multiprocessing", "metriclint.extract.workers")
    unused = (*readers, *pool, "metriclint.report.audit", "metriclint.report.audit_formats", "html")
    code = (
        "import sys\nfrom metriclint.cli import main\n"
        "try:\n    main(['check', '.', '--quiet'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {unused!r} if m in sys.modules], file=sys.stderr)\n"
    )
    runs = [subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True) for _ in range(3)]
    assert runs[0].stdout == runs[2].stdout and "ML001" in runs[2].stdout
    assert runs[2].stderr.strip() == "[]"


def test_workers_fork_with_the_parsers_and_the_phrase_patterns_ready(tmp_path: Path) -> None:
    """What every worker would build on its first files is built once before they fork: the
    source kinds' modules and the vocabulary's compiled patterns."""
    code = (
        "import sys\nfrom metriclint.extract import runner\nfrom metriclint.cli import main\n"
        "pool, seen = runner.start_pool, []\n"
        "def spied(settings, workers):\n"
        "    vocabulary = settings.read.keywords['vocabulary']\n"
        "    seen.append([m in sys.modules for m in ('metriclint.sources.python.walk', 'metriclint.sources.markdown')] + ['_by_start' in vars(vocabulary)])\n"
        "    return pool(settings, workers)\n"
        "runner.start_pool = spied\n"
        "try:\n    main(['check', '.', '-q', '--no-cache'])\nexcept SystemExit:\n    pass\n"
        "print(seen, file=sys.stderr)\n"
    )
    run = _python_in_demo(tmp_path, code, readme="# Training\n\nThe gradient norm is logged every step.\n")
    assert run.stderr.strip() == "[[True, True, True]]"


@pytest.mark.skipif(sys.version_info < (3, 12), reason="Python 3.12 is the first to warn of a fork in a multi-threaded process")
def test_the_command_line_forks_its_workers_while_it_runs_one_thread(tmp_path: Path) -> None:
    """A fork taken while another thread runs may deadlock in the child. The suite ignores the
    warning (pyproject.toml: pytest-xdist's own thread sets it off in every test), so the command
    line is run here in a process of its own, with the warning shown. (As an error it is not
    raised from the fork but dropped.)"""
    project = _copy_demo(tmp_path)
    command = [
        sys.executable,
        "-W",
        "always:This process:DeprecationWarning",
        "-m",
        "metriclint",
        "check",
        ".",
        "--no-cache",
        "--jobs",
        "2",
    ]
    run = subprocess.run(command, cwd=project, capture_output=True, text=True)
    assert run.returncode == 1 and "ML001" in run.stdout
    assert "multi-threaded" not in run.stderr


def test_a_run_that_reads_every_file_lists_them_apart_while_it_compiles_the_patterns(tmp_path: Path) -> None:
    """A cold run, with or without a cache, lists its files in a forked process while it readies
    the workers (extract/aside.py); a warm one lists them itself, as forking would cost it more."""
    code = (
        "import os, sys\nfrom metriclint.engine import collection\nfrom metriclint.cli import main\n"
        "parent, listed = os.getpid(), collection._discovered\n"
        "def spied(config):\n"
        "    print('here' if os.getpid() == parent else 'apart', file=sys.stderr, flush=True)\n"
        "    return listed(config)\n"
        "collection._discovered = spied\n"
        "for extra in ([], [], ['--no-cache']):\n"
        "    try:\n        main(['check', '.', '-q', '--cache-dir', 'c', *extra])\n"
        "    except SystemExit:\n        pass\n"
    )
    run = _python_in_demo(tmp_path, code)
    assert run.stderr.split() == (["apart", "here", "apart"] if multiprocessing.get_start_method() == "fork" else ["here"] * 3)
    assert run.stdout.count("ML001") == 3


def test_what_is_computed_aside_comes_back_and_a_failure_is_met_here() -> None:
    parent = os.getpid()
    assert (aside(os.getpid)() != parent) == (multiprocessing.get_start_method() == "fork")
    calls: list[int] = []

    def failing() -> None:
        calls.append(os.getpid())  # a call in the forked process is not seen here
        raise ValueError("no such folder")

    with pytest.raises(ValueError, match="no such folder"):
        aside(failing)()
    assert calls == [parent]


def test_a_worker_collects_garbage_only_once_enough_is_young_to_hold_some(tmp_path: Path) -> None:
    """Python's extraction leaves no reference cycles, Markdown's does (markdown-it's trees): a
    batch of Python files is not followed by a collection, and Markdown's garbage is collected
    once the objects made since the last collection pass `YOUNG_OBJECTS`."""
    code = (
        "import gc\nfrom pathlib import Path\nfrom metriclint.extract import runner, workers\nfrom metriclint.sources import DEFAULT_OPTIONS\n"
        "runner.start_worker(lambda text, values=(): (), DEFAULT_OPTIONS)\n"
        "gc.freeze()\ngc.disable()  # as a worker starts (workers._serve)\n"
        "started, progress = [], [0.0, 0.0, 0.0]\n"
        "gc.callbacks.append(lambda phase, info: started.append(phase) if phase == 'start' else None)\n"
        "python = [runner.Job(p, str(p), None) for p in sorted(Path('trainer').glob('*.py'))]\n"
        "workers.answered(python, runner.work, progress, 0, 60)\n"
        "after_python = len(started)\n"
        "workers.YOUNG_OBJECTS = 100\n"
        "workers.answered([runner.Job(Path('README.md'), 'README.md', None)], runner.work, progress, 0, 60)\n"
        "print(after_python, len(started))\n"
    )
    run = _python_in_demo(tmp_path, code, readme="# Metrics\n\n| key | meaning |\n|---|---|\n| `train/loss` | the loss |\n")
    assert run.stdout.split() == ["0", "1"], run.stderr


def test_reading_python_leaves_no_reference_cycles() -> None:
    """A file's syntax tree is freed as soon as the file is read, by reference counting: a
    cycle through the walk (an object it keeps holding one of the walk's bound methods) kept
    every tree of a batch alive until the worker's collection, which then had all of them to
    traverse (miles, cold: 1.7 of 6 CPU s in gc.collect). Read twice: the first reading of
    each kind fills the rules' caches, which may hold cycles of their own. A file that cannot be
    read is left out: its exception's traceback holds a cycle, but such files are rare."""

    def extract(path: Path) -> object:
        return runner.extract_bytes(".py", str(path), path.read_bytes(), Options(), lambda text, values=(): ())[1]

    files = [path for path in sorted(FIXTURES.rglob("*.py")) if isinstance(extract(path), Extraction)]
    gc.collect()
    gc.disable()
    try:
        for path in files:
            extract(path)
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert len(files) > 100 and unreachable == 0


def test_batches_shrink_to_single_files_so_the_workers_finish_together() -> None:
    sizes = list(runner.batch_sizes(1375, 2))
    assert sum(sizes) == 1375
    assert sizes[0] == 32 and sizes[-8:] == [1] * 8
    assert all(a >= b for a, b in zip(sizes, sizes[1:]))


def test_workers_send_results_back_without_a_python_call_per_field(tmp_path: Path) -> None:
    """Pickle's own way with a slotted dataclass rebuilds it by a call per field (its BUILD
    opcode calls dataclasses' __setstate__): a tenth of a cold run's CPU on miles. A worker
    sends each as its class and its fields, and they come back equal."""
    code = (
        "import pickle, pickletools\n"
        "from multiprocessing.reduction import ForkingPickler\n"
        "from metriclint.extract import runner\n"
        "from metriclint.sources import DEFAULT_OPTIONS\n"
        "data = open('trainer/step.py', 'rb').read()\n"
        "result = runner.extract_bytes('.py', 'trainer/step.py', data, DEFAULT_OPTIONS, lambda text, values=(): ())[1]\n"
        "runner.start_worker(str, DEFAULT_OPTIONS)\n"
        "sent = bytes(ForkingPickler.dumps(result))\n"
        "print(sorted({op.name for op, _, _ in pickletools.genops(sent)} & {'BUILD', 'REDUCE'}), pickle.loads(sent) == result, len(result.functions) > 0)\n"
    )
    run = _python_in_demo(tmp_path, code)
    assert run.stdout.strip() == "['REDUCE'] True True", run.stderr


def test_one_changed_file_is_the_only_one_extracted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extracted: list[str]) -> None:
    project = _copy_demo(tmp_path)
    monkeypatch.chdir(project)
    invoke("check", ".", "--jobs", "1")
    extracted.clear()
    changed = project / "trainer" / "logging_utils.py"
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
    result = invoke("check", ".", "--jobs", "1")
    assert extracted == ["trainer/logging_utils.py"]
    assert "ML001" in result.output


def test_a_test_files_data_and_docs_are_parsed_only_for_their_directives(tmp_path: Path) -> None:
    """Of a test's JSON or Markdown only a suppression comment could count (its texts and
    tables are dropped): one without a directive is not parsed, so it is no ML900 either, as a
    Python test that writes no key is not; one with a directive is read as before."""
    broken = tmp_path / "golden.json"
    broken.write_text('{"lm loss": [1.0, 2.0,', encoding="utf-8")
    marked = tmp_path / "marked.json"
    marked.write_text('// metriclint: ignore[ML003] a fixture\n{"a": "b",\n', encoding="utf-8")
    for path, test, kind in ((broken, False, ReadFailure), (broken, True, Extraction), (marked, True, ReadFailure)):
        _, result, _ = runner.extract_file(runner.Job(path, path.name, None, test=test), Options(), lambda text, values=(): [])
        assert type(result) is kind, (path.name, test)
        assert not (isinstance(result, Extraction) and (result.suppressions or result.tables or result.texts))
    marked.write_text('// metriclint: ignore[ML003] a fixture\n{"a": "b"}\n', encoding="utf-8")
    _, result, _ = runner.extract_file(runner.Job(marked, marked.name, None, test=True), Options(), lambda text, values=(): [])
    assert isinstance(result, Extraction) and result.suppressions


def test_a_test_files_texts_are_left_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extracted: list[str]) -> None:
    """A test's texts state and name nothing, so its worker neither reads them (on miles that
    was 0.07 of a cold run's CPU seconds) nor keeps them."""
    source = tmp_path / "m.py"
    source.write_text('def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n', encoding="utf-8")
    read: list[str] = []

    def reader(text: str, values: tuple[int, ...] = ()) -> list[Reading]:
        read.append(text)
        return []

    for test in (True, False):
        _, result, _ = runner.extract_file(runner.Job(source, "m.py", None, test=test), Options(), reader)
        assert isinstance(result, Extraction) and bool(result.texts) is not test
        assert read == ([] if test else [m.text for m in result.mentions])
    write_project(tmp_path, {"tests/test_a.py": "x = 1\n", "a.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    jobs: list[tuple[str, bool]] = []

    def recording(given: list[runner.Job], settings: runner.ExtractSettings) -> Iterator[runner.Done]:
        jobs.extend((job.shown, job.test) for job in given)
        return iter(())

    monkeypatch.setattr(runner, "run_jobs", recording)
    invoke("check", ".", "--no-cache")  # ends as an internal error: the recording reads nothing
    assert sorted(jobs) == [("a.py", False), ("m.py", False), ("tests/test_a.py", True)]


def test_a_file_that_stops_being_a_test_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which files are tests is part of the cache's salt: an entry made while a file was a
    test has its texts unread, and must not stand in for it once the `tests` globs change."""
    registry = "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: before\n"
    write_project(
        tmp_path, {"checks/log.py": 'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n'}, registry
    )
    monkeypatch.chdir(tmp_path)
    settings = tmp_path / "pyproject.toml"
    settings.write_text('[tool.metriclint]\ntests = ["checks/*"]\n', encoding="utf-8")
    assert "ML001" not in invoke("check", ".", "--cache-dir", "c").output
    settings.write_text("[tool.metriclint]\n", encoding="utf-8")
    assert "checks/log.py:2:55: ML001" in invoke("check", ".", "--cache-dir", "c").output


def test_a_corrupt_or_foreign_cache_entry_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _copy_demo(tmp_path)
    monkeypatch.chdir(project)
    first = invoke("check", ".", "--cache-dir", "c").output
    entries = [p for p in (project / "c").rglob("*") if p.is_file() and p.parent.name != "c" and len(p.name) == 64]
    assert entries
    entries[0].write_bytes(b"\x80\x05garbage")
    for entry in entries[1:]:
        entry.write_bytes(pickle.dumps(os.getcwd))  # an entry that would call a function
    assert [cache.Cache(project / "c").get(entry.name, "trainer/logging_utils.py") for entry in entries] == [None] * len(entries)
    assert invoke("check", ".", "--cache-dir", "c").output == first


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _copy_demo(tmp_path)
    monkeypatch.chdir(project)
    monkeypatch.delenv("METRICLINT_CACHE_DIR")
    result = invoke("check", ".", "--no-cache")
    assert result.exit_code == 1
    assert not (project / ".metriclint_cache").exists()


def test_jobs_must_be_positive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_copy_demo(tmp_path))
    result = invoke("check", ".", "--jobs", "0")
    assert result.exit_code == 2
    assert "--jobs: must be at least 1" in result.stderr


def test_a_result_that_cannot_come_back_from_a_worker_is_one_ml900(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer a worker cannot send back (here: unpicklable) costs that file, not the run."""
    from metriclint.sources import Extraction, python

    real = python.extract

    def odd(path: str, source: bytes, **options: object) -> Extraction:
        result = real(path, source, **options)  # type: ignore[arg-type]
        return Extraction(texts=((lambda: None, ()),)) if path.endswith("odd.py") else result  # type: ignore[arg-type]

    monkeypatch.setattr(python, "extract", odd)  # workers are forked, so they see it
    write_project(tmp_path, {"odd.py": "x = 1\n", "a.py": "y = 2\n", "b.py": "z = 3\n"})
    monkeypatch.chdir(tmp_path)
    result = invoke("check", ".", "--jobs", "2", "--no-cache")
    assert result.exit_code == 0, result.output
    assert "odd.py:1:1: ML900 internal error while reading this file: " in result.output
    assert "Found 0 errors and 1 warning in 3 files." in result.output


def test_the_command_line_checks_with_garbage_collection_paused_and_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks' claims live to the end of the run, as the results do: collections during
    them only walk a growing heap (a sixth of a 16 MB module's warm run)."""
    copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    monkeypatch.chdir(tmp_path / "demo")
    during: list[bool] = []
    original = engine.judge

    def judge(*args: Any, **kwargs: Any) -> engine.Analysis:
        during.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(engine, "judge", judge)
    assert gc.isenabled()
    assert "ML001" in invoke("check", ".").output
    assert during == [False] and gc.isenabled()


NAMES_EVERYWHERE = """
total = sum(w * x for w, x in zip(weights, [a, *rest]) if keep(x)) + (n := len(items))
scale = (lambda s, *, k=base: s * k)(factor)
label = f"{prefix!r}: {value:{width}.{digits}f}" + data[lo:hi:step]["k"]
match event:
    case {"kind": kind, **extra} if kind in allowed:
        pass
    case [first, *others] | Point(x=first, y=others):
        pass
"""


def test_the_walks_own_name_reader_finds_what_ast_walk_finds() -> None:
    """bindings.read_names walks by the fields the walk descends into, for speed: it must
    miss no name that `ast.walk` would find, in any expression of the fixtures' code."""
    import ast

    from metriclint.sources.python.binding_shapes import read_names

    sources = [NAMES_EVERYWHERE.encode()] + [p.read_bytes() for p in sorted(FIXTURES.rglob("*.py"))]
    checked = 0
    for source in sources:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # the fixtures of unreadable files
        for node in ast.walk(tree):
            if isinstance(node, (ast.expr, ast.stmt, ast.match_case)):
                assert read_names(node) == {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}, ast.dump(node)
                checked += 1
    assert checked > 1000
