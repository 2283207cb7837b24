"""Hostile and odd inputs: every file either lints exactly or becomes ML900, and the run goes on.

The odd files themselves live in fixtures/odd_files (test_fixtures checks their findings);
here they are combined with what cannot be committed: big generated files, links, FIFOs,
unreadable and vanishing files.
"""

from __future__ import annotations

import ast
import json
import multiprocessing
import os
import pickle
import socket
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pathspec
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, ROOT, copy_fixture, finding_lines, invoke, write_project

from metriclint.base.globs import Patterns
from metriclint.base.paths import display
from metriclint.cli import main
from metriclint.extract import runner as extract_all
from metriclint.extract.discover import GitIgnored, _IgnoreFile, discover
from metriclint.knowledge.vocabulary import Vocabulary, load_builtin
from metriclint.language.phrases import read
from metriclint.model import ReadFailure as Unreadable
from metriclint.sources import DEFAULT_OPTIONS

ODD = FIXTURES / "odd_files"
VOCABULARY = Vocabulary(*load_builtin())
REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    aliases: [grad_norm]\n    semantics:\n      clipping: before\n"
CONTRADICTION = 'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # the norm after clipping\n'


def extract_one(path: Path) -> object:
    return extract_all.extract_file(extract_all.Job(path, path.name, None), DEFAULT_OPTIONS, partial(read, vocabulary=VOCABULARY))[1]


def findings(result_output: str) -> list[str]:
    return [f"{f['rule']} {f['path']}:{f['line']}:{f['column']}" for f in json.loads(result_output)["findings"]]


def test_line_endings_bom_and_names_report_the_same_position(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ODD)
    got = findings(invoke("check", ".", "--format", "json", "--select", "ML001").output)
    twins = ["bom.py", "cr.py", "crlf.py", "lf.py", "métrique_名前.py", "name with spaces.py"]
    assert [g for g in got if g.split(" ", 1)[1].rsplit(":", 2)[0] in twins] == [f"ML001 {name}:5:29" for name in twins]
    assert "ML001 tabs.py:5:23" in got  # a tab is one column, as in CPython's and ruff's positions
    assert "ML001 latin1.py:6:41" in got  # columns count decoded characters, cookie honoured
    assert "ML001 cr.md:7:29" in got and "ML001 separators.md:7:29" in got  # Markdown lines end as markdown-it ends them
    assert "ML001 dashboard_cr.json:8:44" in got and "ML001 dashboard_crlf.json:8:44" in got  # tree-sitter rows end at LF only


@pytest.mark.parametrize("command", [("check",), ("audit", "--format", "json"), ("fix", "--diff")])
def test_an_escape_before_a_phrase_in_a_help_string_is_reported_where_it_is_written(in_tmp: Path, command: tuple[str, ...]) -> None:
    """A `\\n` in a prometheus_client help text once sent a position past the text's last line."""
    help_text = 'from prometheus_client import Histogram\nh = Histogram("serve_seconds", "Time to serve.\\nIn\\tmilliseconds.")\n'
    registry = "version: 1\nmetrics:\n  serve_seconds:\n    semantics:\n      unit: seconds\n"
    write_project(in_tmp, {"serve.py": help_text}, registry)
    result = CliRunner().invoke(main, [*command, "."])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if command[0] == "check":
        assert finding_lines(result) == ["ML001 serve.py:2"]
        assert "serve.py:2:53: ML001" in result.output  # the column of "milliseconds" as written


def test_big_generated_files_are_read(in_tmp: Path) -> None:
    """A 10 MB module and a 100k-line docstring: read in full, positions exact at the end."""
    lines = "".join(f"    Step {i} logs the loss.\n" for i in range(100_000))
    big_docstring = f'"""Steps.\n\n{lines}\n    The grad_norm is the norm after clipping.\n"""\n'
    big_module = 'DATA = "' + "x" * 10_000_000 + '"\n' + CONTRADICTION
    long_line = "x = 1  # " + "padding " * 100_000 + "\n" + CONTRADICTION
    write_project(in_tmp, {"doc.py": big_docstring, "module.py": big_module, "long.py": long_line}, REGISTRY)
    result = invoke("check", ".", "--format", "json")
    assert findings(result.output) == ["ML001 doc.py:100004:31", "ML001 long.py:3:55", "ML001 module.py:3:55"]


def test_deep_nesting_in_every_language_is_ml900_not_a_crash(in_tmp: Path) -> None:
    """5000 levels: CPython's parser refuses them, the JSON reader would recurse."""
    deep = {
        "parens.py": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "lambdas.py": "x = " + "lambda: " * 5000 + "1\n",
        "calls.py": "x = " + "f(" * 150 + ")" * 150 + "\n",  # CPython accepts it, and so is it read
        # A text at the bottom makes it a table candidate, so tree-sitter reads it whatever
        # Python's json parser (which decides that first) can nest on this version.
        "deep.json": '{"a": ' * 50_000 + '"text"' + "}" * 50_000,
        "deep.ts": "const x = " + "{a: " * 5000 + "1" + "}" * 5000 + ";\n",
        "quotes.md": "> " * 5000 + "text\n",  # markdown-it bounds its own nesting: read, no finding
    }
    write_project(in_tmp, {**deep, "ok.py": CONTRADICTION}, REGISTRY)
    result = subprocess.run(  # a crash must show as a crash, not take pytest down with it
        [sys.executable, "-m", "metriclint", "check", ".", "--format", "json"], capture_output=True, text=True, check=False
    )
    assert "Traceback" not in result.stderr
    got = findings(result.stdout)
    assert "ML001 ok.py:2:55" in got
    assert {g.split()[1].split(":")[0] for g in got if g.startswith("ML900")} == {"parens.py", "lambdas.py", "deep.json"}


def test_unforeseen_error_in_one_file_is_an_ml900_asking_for_a_report(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(in_tmp, {"a.py": CONTRADICTION, "b.py": "x = 1\n"}, REGISTRY)
    from metriclint.sources import python

    original = python.extract

    def fragile(path: str, data: bytes, *args, **kwargs):  # type: ignore[no-untyped-def]
        if path == "b.py":
            raise KeyError("surprise")
        return original(path, data, *args, **kwargs)

    monkeypatch.setattr(python, "extract", fragile)
    result = invoke("check", ".", "--jobs", "1", "--no-cache")
    assert "b.py:1:1: ML900 internal error while reading this file: KeyError: 'surprise'; please report it" in result.output
    assert "a.py:2:55: ML001" in result.output


@pytest.mark.skipif(multiprocessing.get_start_method() != "fork", reason="the workers must inherit the patch below")
def test_a_worker_that_dies_costs_only_the_file_it_was_reading(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed on one file (say, out of memory) breaks the pool, and with it every
    batch still out; only that file becomes ML900, the others are read again."""
    files = {f"m{i:03}.py": CONTRADICTION for i in range(200)}  # batches of 6 files for 2 workers
    write_project(in_tmp, {**files, "m017.py": "x = 1\n"}, REGISTRY)
    original = extract_all.extract_file

    def dying(job: extract_all.Job, *rest: object) -> object:
        if job.shown == "m017.py":
            os._exit(1)  # the worker process, forked with this patch in place
        return original(job, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(extract_all, "extract_file", dying)
    result = invoke("check", ".", "--jobs", "2", "--no-cache", "--format", "json")
    got = findings(result.output)
    assert [g for g in got if g.startswith("ML900")] == ["ML900 m017.py:1:1"]
    assert len([g for g in got if g.startswith("ML001")]) == 199
    assert "the process reading this file died" in result.output


def test_unreadable_and_vanished_files_are_ml900(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(in_tmp, {"locked.py": "x = 1\n", "gone.py": "x = 1\n", "ok.py": CONTRADICTION}, REGISTRY)
    real_open = os.open

    def guarded_open(path, flags, *args):  # type: ignore[no-untyped-def]
        if Path(path).name == "locked.py":  # tests run as root: chmod 000 would not stop us
            raise PermissionError(13, "Permission denied", str(path))
        if Path(path).name == "gone.py":
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", guarded_open)
    result = invoke("check", ".", "--jobs", "1", "--no-cache")
    assert "gone.py:1:1: ML900 cannot read file: No such file or directory" in result.output
    assert "locked.py:1:1: ML900 cannot read file: Permission denied" in result.output
    assert "ok.py:2:55: ML001" in result.output


def test_a_fifo_named_like_a_source_is_neither_read_nor_waited_for(in_tmp: Path) -> None:
    write_project(in_tmp, {"ok.py": CONTRADICTION}, REGISTRY)
    os.mkfifo(in_tmp / "pipe.py")
    assert [p.name for p in discover((in_tmp,), (), in_tmp, (".py",))] == ["ok.py"]
    extracted = extract_one(in_tmp / "pipe.py")  # it took a source's place during the run
    assert isinstance(extracted, Unreadable) and extracted.message == "cannot read file: not a regular file"


def test_links_never_leave_the_project_and_loops_end(tmp_path: Path) -> None:
    outside = write_project(tmp_path / "outside", {"secret.py": CONTRADICTION})
    project = write_project(tmp_path / "project", {"pkg/real.py": CONTRADICTION})
    (project / "pkg" / "alias.py").symlink_to(project / "pkg" / "real.py")  # read once, as real.py
    (project / "leak.py").symlink_to(outside / "secret.py")
    (project / "outside_dir").symlink_to(outside, target_is_directory=True)
    (project / "pkg" / "loop").symlink_to(project / "pkg", target_is_directory=True)
    (project / "a.py").symlink_to(project / "b.py")
    (project / "b.py").symlink_to(project / "a.py")
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    (project / "inner.py").symlink_to(Path("pkg", "real.py"))  # relative link inside the project
    found = [p.relative_to(project).as_posix() for p in discover((project,), (), project, (".py",))]
    assert found == ["pkg/real.py"]


def test_tool_folders_environments_and_gitignored_paths_are_skipped(tmp_path: Path) -> None:
    files = {
        name: "x = 1\n"
        for name in (
            "src/keep.py",
            "src/generated_pb2.py",
            "src/keep_pb2.py",
            ".git/hook.py",
            "node_modules/pkg/index.js",
            "build/lib/x.py",
            "my-env/lib/site.py",
            "my-env/pyvenv.cfg",
            "conda/conda-meta/x.json",
            "notes/a.py",
            "sub/local.py",
            "sub/other.py",
            "logs/run.py",
        )
    }
    files[".gitignore"] = "*_pb2.py\n!keep_pb2.py\n/logs/\n"
    files["sub/.gitignore"] = "local.py\n"
    project = write_project(tmp_path / "p", files)
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text("notes/\n")
    found = [p.relative_to(project).as_posix() for p in discover((project,), (), project, (".py", ".js", ".json"))]
    assert found == ["src/keep.py", "src/keep_pb2.py", "sub/other.py"]
    named = discover((project / "src" / "generated_pb2.py",), (), project, (".py",))
    assert [p.name for p in named] == ["generated_pb2.py"]  # a file named explicitly is always read
    named = discover((project / "logs",), (), project, (".py",))
    assert [p.name for p in named] == ["run.py"]  # so is a folder


def test_a_folder_checked_inside_another_is_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project is read whole with the paths given inside it (`check src/` from a subfolder's
    point of view): walking `src` again after the root listed every folder of it twice. An
    environment the root's walk leaves out is still read when named."""
    project = write_project(tmp_path / "p", {"top.py": "", "src/a.py": "", "src/deep/b.py": "", "env/pyvenv.cfg": "", "env/lib/c.py": ""})
    listed: list[str] = []
    scandir = os.scandir

    def spied(folder: str) -> Any:
        listed.append(os.path.relpath(folder, project))
        return scandir(folder)

    monkeypatch.setattr(os, "scandir", spied)
    found = discover((project, project / "src", project / "env"), (), project, (".py",))
    assert [p.relative_to(project).as_posix() for p in found] == ["env/lib/c.py", "src/a.py", "src/deep/b.py", "top.py"]
    # `env` twice: the root's walk lists it to find it is an environment
    assert sorted(listed) == [".", "env", "env", "env/lib", "src", "src/deep"]


def test_names_that_are_not_utf8_are_matched_against_ignore_files_and_excludes(tmp_path: Path) -> None:
    """pathspec's re2 backend refused os.fsdecode's surrogates: any repository (git init's
    info/exclude holds comments, which screened every name in) with such a name ended the run."""
    odd = os.fsdecode(b"caf\xe9")
    project = write_project(
        tmp_path / "p", {".gitignore": "*.gen.py\n", f"{odd}.gen.py": "", f"{odd}.py": "", f"{odd}_x.py": "", "ok.py": ""}
    )
    (project / ".git" / "info").mkdir(parents=True)
    (project / ".git" / "info" / "exclude").write_text("# git ls-files --others --exclude-from=.git/info/exclude\n")
    found = [p.relative_to(project).as_posix() for p in discover((project,), ("caf?_x.py",), project, (".py",))]
    assert found == [f"{odd}.py", "ok.py"]


def test_exclude_patterns_see_where_a_path_really_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link is matched where it points, a path outside the project by no pattern, the
    project itself by none, whichever way the path is written."""
    outside = write_project(tmp_path / "outside", {"gen/o.py": ""})
    project = write_project(tmp_path / "project", {"gen/a.py": "", "src/b.py": ""})
    (project / "src" / "alias.py").symlink_to(project / "gen" / "a.py")
    (project / "src" / "away").symlink_to(outside / "gen", target_is_directory=True)
    monkeypatch.chdir(project / "src")
    patterns = Patterns(("gen/",), Path(".."))
    verdicts = {
        p: patterns(Path(p))
        for p in ("alias.py", "b.py", "../gen/a.py", str(project / "gen" / "a.py"), "away/o.py", "..", "../src/../gen/a.py")
    }
    assert verdicts == {
        "alias.py": True,
        "b.py": False,
        "../gen/a.py": True,
        str(project / "gen" / "a.py"): True,
        "away/o.py": False,
        "..": False,
        "../src/../gen/a.py": True,
    }
    assert patterns(Path("../gen"), is_dir=True) and not patterns(Path("."), is_dir=True)


def test_an_ignore_file_gives_pathspecs_verdict_on_every_name() -> None:
    """The one-regex screen only skips names no pattern matches; negations, anchors, `**`,
    folder-only patterns and classes come out as pathspec says."""
    lines = ["# comment", "*.log", "!keep.log", "/build/", "docs/**/*.md", "tmp*/", "**/cache", "[ab]?.py", "\\#odd", "", "!/build/x/"]
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    rules = _IgnoreFile(spec)
    assert rules.screen is not None  # the screen is in use: the comparison below tests it
    names = [
        "a.log",
        "sub/keep.log",
        "keep.log",
        "build/",
        "build/x/",
        "sub/build/",
        "docs/a/b/c.md",
        "docs/c.md",
        "tmpdir/",
        "tmpfile",
        "x/cache",
        "cache/",
        "a1.py",
        "c1.py",
        "#odd",
        "src/main.py",
        "README.md",
    ]
    assert [rules.verdict(name) for name in names] == [spec.check_file(name).include for name in names]
    assert {rules.verdict(name) for name in names} == {True, False, None}


def test_gitignore_holds_for_relative_paths_after_the_working_directory_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery remembers folders' real paths; a relative `gen` must not stay the first project's."""
    for name in ("one", "two"):
        project = write_project(tmp_path / name, {".gitignore": "gen/\n", "gen/made.py": "x = 1\n", "src/kept.py": "x = 1\n"})
        monkeypatch.chdir(project)
        assert GitIgnored(Path("."))(Path("gen"), is_dir=True), name
        assert [p.as_posix() for p in discover((Path("."),), (), Path("."), (".py",))] == ["src/kept.py"], name


def _looked_up(path: Path) -> str:
    """How `display` shows a path, worked out the slow way: the whole path resolved, relative to
    the resolved working directory, else as given (relative to it if absolute)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(os.path.relpath(path)).as_posix() if path.is_absolute() else path.as_posix()


def test_display_works_folders_out_once_and_shows_every_path_as_a_full_look_up_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = write_project(tmp_path / "outside", {"o.py": "x = 1\n"})
    project = write_project(tmp_path / "project", {"pkg/a.py": "x = 1\n", "other.py": "x = 1\n"})
    (project / "elsewhere").symlink_to(outside, target_is_directory=True)
    (project / "pkg" / "ln.py").symlink_to(Path("..", "other.py"))
    relative = ["pkg/a.py", "pkg/../other.py", "./other.py", "elsewhere/o.py", "pkg/ln.py", "../outside/o.py", "pkg", "."]
    for cwd in (project, project / "pkg", tmp_path):
        monkeypatch.chdir(cwd)
        for path in [Path(p) for p in relative] + [project / p for p in relative] + [Path(os.path.relpath(project / p)) for p in relative]:
            assert display(path) == _looked_up(path), (cwd, path)
    monkeypatch.chdir(project)
    assert [display(Path(p)) for p in relative] == [
        "pkg/a.py",
        "other.py",
        "other.py",
        "elsewhere/o.py",
        "other.py",
        "../outside/o.py",
        "pkg",
        ".",
    ]


def test_output_does_not_depend_on_the_order_the_file_system_lists(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"m{i}/f{j}.py": CONTRADICTION for i in range(3) for j in range(4)}
    write_project(in_tmp, files, REGISTRY)
    first = invoke("check", ".", "--format", "sarif").output
    real_scandir = os.scandir

    class Reversed:
        def __init__(self, path: str = ".") -> None:
            with real_scandir(path) as entries:
                self.entries = iter(sorted(entries, key=lambda e: e.name, reverse=True))

        def __enter__(self) -> Reversed:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def __iter__(self) -> Reversed:
            return self

        def __next__(self) -> os.DirEntry[str]:
            return next(self.entries)

    monkeypatch.setattr(os, "scandir", Reversed)
    assert invoke("check", ".", "--format", "sarif").output == first


@pytest.mark.slow
def test_output_is_byte_identical_across_runs_hash_seeds_and_worker_counts(tmp_path: Path) -> None:
    """String hashing differs per process, workers finish in any order: neither may show."""
    project = tmp_path / "odd"
    copy_fixture(ODD, project)
    outputs = set()
    for seed, jobs in (("1", "1"), ("2", "2"), ("3", "2")):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        for form in ("json", "sarif", "text"):
            run = subprocess.run(
                [sys.executable, "-m", "metriclint", "check", ".", "--format", form, "--jobs", jobs, "--no-cache"],
                cwd=project,
                env=env,
                capture_output=True,
                check=False,
            )
            outputs.add((form, run.returncode, run.stdout))
    assert len(outputs) == 3  # one per format
    assert all(b"ML001" in out and b"ML900" in out for _, _, out in outputs)


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["code_evidence_registry", "know_quantities"])  # the second: facts alike but for what they say
def test_the_audit_of_code_evidence_does_not_depend_on_string_hashing(fixture: str) -> None:
    """Code facts reach the audit from sets; their order must not show."""
    command = [sys.executable, "-m", "metriclint", "audit", f"fixtures/{fixture}", "--format", "json", "--no-cache"]
    runs = [subprocess.run(command, cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True) for seed in "123456"]
    assert len({(run.returncode, run.stdout) for run in runs}) == 1
    assert runs[0].returncode == 1 and b'"source": "code"' in runs[0].stdout  # 1: the fixture has contradictions


_EXTRACT_ONE = (
    "import pickle, sys; from pathlib import Path; from metriclint.extract import runner; from metriclint.sources import Options; "
    "path = Path(sys.argv[1]); "
    "sys.stdout.buffer.write(pickle.dumps(runner.extract_bytes('.py', str(path), path.read_bytes(), Options(), lambda t, values=(): ())[1]))"
)


@pytest.mark.slow
def test_an_extraction_is_the_same_in_every_process() -> None:
    """A file's extraction is cached, and its digest decides what a warm run works out again:
    it may not depend on string hashing (a tuple made in a set's order did: Derived.later)."""
    for path in sorted((FIXTURES / "know_kept_params").rglob("*.py")):
        runs = [
            subprocess.run(
                [sys.executable, "-c", _EXTRACT_ONE, str(path)], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, check=True
            )
            for seed in "123"
        ]
        first, *others = (pickle.loads(run.stdout) for run in runs)
        assert all(other == first for other in others), path


def test_no_network_and_no_project_code_runs(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = in_tmp / "ran.txt"
    trap = f"open({str(marker)!r}, 'w').write('ran')\n"
    files = {"conftest.py": trap, "setup.py": trap, "pkg/__init__.py": trap, "pkg/train.py": trap + CONTRADICTION}
    write_project(in_tmp, files, REGISTRY)

    def no_socket(*args: object, **kwargs: object) -> None:
        raise AssertionError("metriclint opened a socket")

    monkeypatch.setattr(socket, "socket", no_socket)
    monkeypatch.setattr(socket, "create_connection", no_socket)
    monkeypatch.syspath_prepend(str(in_tmp))
    result = invoke("check", ".")
    assert "pkg/train.py:3:55: ML001" in result.output
    assert not marker.exists()
    assert "pkg" not in sys.modules and "setup" not in sys.modules


@pytest.mark.parametrize("safe_path", [False, True])
def test_python_m_in_a_checked_tree_imports_none_of_its_modules(in_tmp: Path, safe_path: bool) -> None:
    """`python -m` puts the current folder first on the import path: a tree's own `re.py` or
    `dataclasses.py` would shadow the standard library's, and run."""
    marker = in_tmp / "ran.txt"
    trap = f"open({str(marker)!r}, 'a').write(__name__ + ' ')\n"
    write_project(in_tmp, {f"{name}.py": trap for name in ("re", "dataclasses", "enum", "json", "typing", "pathlib", "click")}, REGISTRY)
    (in_tmp / "train.py").write_text(CONTRADICTION, encoding="utf-8")
    command = [sys.executable, *(["-P"] if safe_path and sys.version_info >= (3, 11) else []), "-m", "metriclint", "check", "."]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1 and "train.py:2:55: ML001" in result.stdout, result.stderr
    assert not marker.exists(), marker.read_text(encoding="utf-8")


def test_the_package_has_no_way_to_run_code_or_reach_the_network() -> None:
    """Reading code is parsing it: no import machinery, no exec/eval, no network module, no
    shell. The one program run is git, to list a work tree's files (base/gitls.py, issue 17),
    with a command line of its own."""
    forbidden_modules = {"importlib", "runpy", "socket", "http", "urllib.request", "requests", "ssl", "subprocess"}
    forbidden_calls = {"exec", "eval", "__import__"}
    for path in (ROOT / "metriclint").rglob("*.py"):
        forbidden = forbidden_modules - ({"subprocess"} if path == ROOT / "metriclint" / "base" / "gitls.py" else set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            assert not (isinstance(node, ast.keyword) and node.arg == "shell"), path
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                names = []
            assert not [n for n in names if n in forbidden or n.split(".")[0] in forbidden - {"urllib"}], path
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in forbidden_calls, path


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        (b'[tool.metriclint]\nregistry = "caf\xe9.yaml"\n', "pyproject.toml:1:1: the config is not UTF-8"),
        (b"[tool]\nmetriclint = 3\n", "pyproject.toml:2:14: tool.metriclint must be a table, not 3"),
        (b"tool = 3\n", "pyproject.toml:1:1: no [tool.metriclint] table"),  # --config given: it must have one
        (b'[tool.metriclint]\nselect = ["ML001",\n', "pyproject.toml:3:1: invalid TOML"),
        (b"[tool.metriclint]\nexclude = [1]\n", "pyproject.toml:2:12: 'exclude' must be a list of strings, not 1"),
        (b'[tool.metriclint]\nregistry = "folder"\n', "pyproject.toml:2:12: registry file 'folder' is not a regular file"),
    ],
)
def test_configuration_errors_exit_2_with_their_place(in_tmp: Path, pyproject: bytes, expected: str) -> None:
    (in_tmp / "pyproject.toml").write_bytes(pyproject)
    (in_tmp / "folder").mkdir()
    write_project(in_tmp, {"a.py": CONTRADICTION})
    for args in (("check", "."), ("check", ".", "--config", "pyproject.toml")):
        result = invoke(*args)
        if "no [tool.metriclint] table" in expected and "--config" not in args:
            assert result.exit_code == 0  # found, not given: a pyproject.toml without our table is not ours
            continue
        assert result.exit_code == 2
        assert result.stderr.startswith(expected) and "Traceback" not in result.output


def _shape(data: bytes) -> tuple[bytes, bytes]:
    """What a fix must keep: the byte-order mark and the sequence of line ends."""
    return data[:3] if data.startswith(b"\xef\xbb\xbf") else b"", bytes(b for b in data if b in b"\r\n")


def test_fix_settles_every_odd_file_and_keeps_its_encoding_and_line_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "odd"
    copy_fixture(ODD, project)
    monkeypatch.chdir(project)
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    expected = (ODD / "expected.txt").read_text(encoding="utf-8").splitlines()
    contradicted = sorted(line[6:].rsplit(" ", 2)[0].rsplit(":", 1)[0] for line in expected if line.startswith("ML001"))
    first = invoke("fix", ".")
    assert "not fixed" not in first.output and f"Fixed {len(contradicted)} findings in {len(contradicted)} files" in first.output
    after = {p.name: p.read_bytes() for p in project.iterdir()}
    changed = sorted(name for name in before if before[name] != after[name])
    assert changed == contradicted and all(_shape(before[name]) == _shape(after[name]) for name in changed)
    assert after["latin1.py"].decode("latin-1").count("é") == before["latin1.py"].decode("latin-1").count("é")
    assert "ML001" not in invoke("check", ".").output
    invoke("fix", ".")  # nothing left to fix: nothing is written
    assert {p.name: p.read_bytes() for p in project.iterdir()} == after


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_reported_by_its_bytes(in_tmp: Path) -> None:
    """Linux names are bytes: one that is not UTF-8 must not crash a format, the baseline or fix."""
    write_project(in_tmp, {}, REGISTRY)
    Path(os.fsdecode(b"bad\xffname.py")).write_text(CONTRADICTION, encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}  # as a UTF-8 terminal has it

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "metriclint", *args], env=env, capture_output=True, check=False)

    text = run("check", ".")
    assert text.returncode == 1 and text.stdout.startswith(b"bad\xffname.py:2:55: ML001")
    for form in ("json", "json-lines", "sarif", "github", "gitlab"):
        result = invoke("check", ".", "--format", form)
        assert result.exit_code == 1, form
    sarif = json.loads(invoke("check", ".", "--format", "sarif").output)
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FFname.py"
    assert run("check", ".", "--write-baseline", "base.json").returncode == 0
    assert run("check", ".", "--baseline", "base.json").returncode == 0
    assert run("fix", ".").returncode == 0
    assert "before clipping" in Path(os.fsdecode(b"bad\xffname.py")).read_text(encoding="utf-8")


@pytest.mark.slow
def test_odd_file_names_keep_machine_output_utf8_and_text_output_free_of_control_characters(in_tmp: Path) -> None:
    write_project(in_tmp, {}, REGISTRY)
    Path(os.fsdecode(b"caf\xe9\x1b[31mred.py")).write_text(CONTRADICTION, encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"}  # what the raw bytes of a name come out as

    def run(form: str) -> bytes:
        done = subprocess.run(
            [sys.executable, "-m", "metriclint", "check", ".", "--format", form], env=env, capture_output=True, check=False
        )
        assert done.returncode == 1, done.stderr
        return done.stdout

    text = run("text")
    assert b"\x1b" not in text and text.startswith(b"caf\xe9\\x1b[31mred.py:2:55: ML001")
    assert run("github").startswith(b"::error file=caf\\xe9\\x1b[31mred.py,line=2,")
    paths = []
    for form in ("json", "gitlab", "json-lines"):
        document = run(form).decode("utf-8")  # strict: each byte of the name that is not UTF-8 is written \xNN
        parsed = json.loads(document.splitlines()[0] if form == "json-lines" else document)
        finding = parsed if form == "json-lines" else parsed[0] if form == "gitlab" else parsed["findings"][0]
        paths.append(finding["location"]["path"] if form == "gitlab" else finding["path"])
    assert paths == ["caf\\xe9\x1b[31mred.py"] * 3


def test_a_failure_while_attributing_one_files_texts_is_its_ml900(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts are attributed in the main process, after the workers' guard: a bug met there
    in one file's texts must cost that file, not the run."""
    write_project(in_tmp, {"a.py": CONTRADICTION, "b.py": CONTRADICTION.replace("grad_norm", "gn")}, REGISTRY)
    from metriclint.language import views

    original = views.attribute

    def fragile(mention, *rest):  # type: ignore[no-untyped-def]
        if mention.path == "b.py":
            raise IndexError("surprise")
        return original(mention, *rest)

    monkeypatch.setattr(views, "attribute", fragile)
    result = invoke("check", ".", "--jobs", "1", "--no-cache")
    assert "b.py:1:1: ML900 internal error while reading this file's texts: IndexError: surprise; please report it" in result.output
    assert "a.py:2:55: ML001" in result.output
