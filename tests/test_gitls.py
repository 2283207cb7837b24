"""Discovery through `git ls-files` keeps exactly the files the walk keeps, and asks the
`exclude` patterns enough to warn about the same unused ones; where git cannot answer for
the repository the walk sees, the walk runs instead.

Each tree is built in a temporary folder and made a repository with the git on PATH (the
tests are skipped without one). Every comparison also checks that git's listing was used,
or a test comparing the walk with itself would pass whatever the listing does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, copy_fixture, invoke, write_project

import metriclint.base.gitls as gitls
import metriclint.extract.discover as discover_module
from metriclint.base.globs import Patterns
from metriclint.extract.discover import discover

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="no git on PATH")
SUFFIXES = (".py", ".md", ".json")


def git(folder: Path, *args: str) -> None:
    identity = ("-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")
    subprocess.run([str(GIT), *identity, *args], cwd=folder, check=True, capture_output=True)


def repository(base: Path, files: dict[str, str], untracked: dict[str, str] | None = None) -> Path:
    """`files` committed (those a .gitignore ignores too: tracked, then ignored), then `untracked` written."""
    write_project(base, files)
    git(base, "init", "-q")
    git(base, "add", "-f", *files)
    git(base, "commit", "-qm", "tree")
    return write_project(base, untracked or {})


def found_both_ways(
    monkeypatch: pytest.MonkeyPatch,
    paths: tuple[Path, ...],
    root: Path,
    exclude: tuple[str, ...] = (),
    asks_git: bool = True,
) -> tuple[list[str], list[str]]:
    """What discovery finds with git's listing (which must have been used, unless `asks_git`
    is False: no folder to list) and with the walk alone, each followed by the exclude
    patterns it reports unused."""
    answers: list[list[str] | None] = []

    def spied(folder: Path, top: Path) -> list[str] | None:
        answers.append(gitls.listed(folder, top))
        return answers[-1]

    runs = []
    for listing in (spied, lambda folder, top: None):
        monkeypatch.setattr(discover_module, "listed", listing)
        patterns = Patterns(exclude, root)
        runs.append([p.as_posix() for p in discover(paths, patterns, root, SUFFIXES)] + [f"unused {p}" for p in patterns.unused()])
    assert (bool(answers) and None not in answers) if asks_git else answers == [], "git's listing was not used as it should be"
    return runs[0], runs[1]


def test_nested_ignore_files_negations_and_info_exclude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = repository(
        tmp_path,
        {
            ".gitignore": "*_pb2.py\n!keep_pb2.py\n/logs/\ndocs/**/draft*.md\ntmp*/\n",
            "src/.gitignore": "local.py\n!/gen/kept.py\ngen/*\n!gen/kept.py\n",
            "src/a.py": "",
            "src/keep_pb2.py": "",
            "README.md": "",
        },
        {
            "src/local.py": "",
            "src/x_pb2.py": "",
            "src/gen/kept.py": "",
            "src/gen/made.py": "",
            "logs/run.py": "",
            "docs/a/b/draft1.md": "",
            "docs/a/b/final.md": "",
            "tmpdir/t.py": "",
            "sub/logs/run.py": "",
            "notes/n.md": "",
            "data.json": "{}",
        },
    )
    (project / ".git" / "info" / "exclude").write_text("notes/\n")
    with_git, walked = found_both_ways(monkeypatch, (project,), project)
    assert with_git == walked
    assert [Path(p).relative_to(project).as_posix() for p in with_git] == [
        "README.md",
        "data.json",
        "docs/a/b/final.md",
        "src/a.py",
        "src/gen/kept.py",
        "src/keep_pb2.py",
        "sub/logs/run.py",
    ]


def test_tracked_files_a_gitignore_ignores_are_left_out_as_the_walk_and_ruff_leave_them(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repository(in_tmp, {".gitignore": "logs/\n*.gen.py\n", "logs/old.py": "", "a.gen.py": "", "src/b.gen.py": "", "src/c.py": ""})
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."))
    assert with_git == walked == ["src/c.py"]


def test_deleted_tracked_files_links_and_odd_names(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = write_project(in_tmp.parent / f"{in_tmp.name}-outside", {"secret.py": ""})
    names = {"gone.py": "", "pkg/real.py": "", "with space.py": "", "new\nline.py": "", "tab\there.md": ""}
    project = repository(in_tmp, names, {"untracked space.py": ""})
    (project / "gone.py").unlink()
    (project / os.fsdecode(b"caf\xe9.py")).write_text("")  # not UTF-8: os.walk and git both give the raw bytes
    (project / "pkg" / "alias.py").symlink_to(project / "pkg" / "real.py")
    (project / "leak.py").symlink_to(outside / "secret.py")
    (project / "outside_dir").symlink_to(outside, target_is_directory=True)
    (project / "loop").symlink_to(project / "pkg", target_is_directory=True)
    (project / "dir.py").symlink_to(project / "pkg", target_is_directory=True)
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    (project / "inner.py").symlink_to(Path("pkg", "real.py"))
    git(project, "add", "pkg/alias.py", "leak.py", "dir.py")  # tracked links as well as untracked ones
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."))
    assert with_git == walked
    assert with_git == [os.fsdecode(b"caf\xe9.py"), "new\nline.py", "pkg/real.py", "tab\there.md", "untracked space.py", "with space.py"]


def test_a_tracked_file_behind_a_folder_since_replaced_by_a_link_is_not_read(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git's index still lists pkg/a.py; the walk never enters a link to a folder."""
    repository(in_tmp, {"pkg/a.py": "", "other/a.py": "", "b.py": ""})
    shutil.rmtree(in_tmp / "pkg")
    (in_tmp / "pkg").symlink_to(in_tmp / "other", target_is_directory=True)
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."))
    assert with_git == walked == ["b.py", "other/a.py"]


def test_submodules_and_nested_repositories_are_read_as_the_walk_reads_them(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git lists them as one entry and does not enter them; the walk does, with the outer
    ignore files and their own `.gitignore` (not their info/exclude)."""
    project = repository(in_tmp, {".gitignore": "*.log.py\n", "top.py": ""})
    for name in ("vendor/sub", "nested", "ignored_repo"):
        inner = repository(project / name, {"lib.py": "", "x.log.py": "", ".gitignore": "skip.py\n"}, {"skip.py": "", "new.py": ""})
        (inner / ".git" / "info" / "exclude").write_text("new.py\n")
    git(project, "add", "vendor/sub")  # a gitlink: a submodule without .gitmodules
    (project / ".gitignore").write_text("*.log.py\nignored_repo/\n")
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."))
    assert with_git == walked == ["nested/lib.py", "nested/new.py", "top.py", "vendor/sub/lib.py", "vendor/sub/new.py"]


def test_tool_folders_and_environments_even_when_git_lists_their_files(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repository(
        in_tmp,
        {
            ".gitignore": "*.cfg\n",  # the environment's marker is ignored, its files are not
            "build/lib/x.py": "",
            "node_modules/p/i.json": "{}",
            "pkg.egg-info/x.py": "",
            ".hg/x.py": "",
            "env/pyvenv.cfg": "",
            "env/lib/site.py": "",
            "conda/conda-meta/history.json": "{}",
            "conda/lib/c.py": "",
            "src/ok.py": "",
        },
    )
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."))
    assert with_git == walked == ["src/ok.py"]
    with_git, walked = found_both_ways(monkeypatch, (Path("build"), Path("env")), Path("."))  # named: walked into
    assert with_git == walked == ["build/lib/x.py", "env/lib/site.py"]


def test_a_subfolder_a_file_and_several_paths(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repository(
        in_tmp,
        {
            ".gitignore": "/src/gen/\nsecret.py\n",
            "src/a.py": "",
            "src/gen/g.py": "",
            "src/deep/b.py": "",
            "src/deep/secret.py": "",
            "docs/d.md": "",
            "docs/secret.py": "",
        },
    )
    for paths in [(Path("src"),), (Path("src/deep"),), (Path("src"), Path("docs"), Path("src/deep"), Path("docs/secret.py"))]:
        with_git, walked = found_both_ways(monkeypatch, paths, Path("."))
        assert with_git == walked, paths
    assert with_git == ["docs/d.md", "docs/secret.py", "src/a.py", "src/deep/b.py"]  # a file named explicitly is always read
    assert found_both_ways(monkeypatch, (Path("src/deep/secret.py"),), Path("."), asks_git=False)[0] == ["src/deep/secret.py"]
    monkeypatch.chdir(in_tmp / "src")
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path(".."))
    assert with_git == walked == ["a.py", "deep/b.py"]


def test_exclude_patterns_apply_and_the_same_ones_are_reported_unused(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern that matches only a folder git ignores (`logs/`) or nothing at all is unused
    for git's listing; then the walk runs too, and only a pattern it finds no match for is reported."""
    repository(in_tmp, {".gitignore": "logs/\n", "src/a.py": "", "src/gen/g.py": "", "tests/t.py": "", "b_pb2.py": ""}, {"logs/l.py": ""})
    for exclude in [("tests", "*_pb2.py", "src/gen/"), ("**/tests", "logs/"), ("/tests", "nothing/"), ("gen",)]:
        with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."), exclude)
        assert with_git == walked, exclude
    assert with_git == ["b_pb2.py", "src/a.py", "tests/t.py"]
    with_git, walked = found_both_ways(monkeypatch, (Path("."),), Path("."), ("logs/", "nothing/"))
    assert with_git == walked == ["b_pb2.py", "src/a.py", "src/gen/g.py", "tests/t.py", "unused nothing/"]


def test_a_folder_git_ignores_named_explicitly_is_walked(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repository(in_tmp, {".gitignore": "vendor/\n", "a.py": ""}, {"vendor/v.py": "", "vendor/.gitignore": "skip.py\n", "vendor/skip.py": ""})
    monkeypatch.setattr(discover_module, "listed", lambda folder, top: pytest.fail("git asked about an ignored folder"))
    assert [p.as_posix() for p in discover((Path("vendor"),), (), Path("."), SUFFIXES)] == ["vendor/v.py"]


def fake_git(folder: Path, script: str) -> str:
    """A PATH holding only a `git` that runs `script` (a shell script's body)."""
    folder.mkdir()
    program = folder / "git"
    program.write_text(f"#!/bin/sh\n{script}\n")
    program.chmod(0o755)
    return str(folder)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (None, ["a.py", "b.py"]),  # no git at all
        ("exit 128", ["a.py", "b.py"]),  # fails
        ("echo 'warning: unable to access x/.gitignore' >&2; printf 'a.py\\0'", ["a.py", "b.py"]),  # answers, with a warning
        ("exec sleep 5", ["a.py", "b.py"]),  # hangs
        ('case "$*" in *--others*) printf "b.py\\0";; esac', ["b.py"]),  # answers: then its answer is used
    ],
    ids=["absent", "fails", "warns", "hangs", "answers"],
)
def test_the_walk_runs_when_git_is_missing_fails_warns_or_hangs(
    in_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
    script: str | None,
    expected: list[str],
) -> None:
    repository(in_tmp / "p", {"a.py": "", "b.py": ""})
    monkeypatch.chdir(in_tmp / "p")
    monkeypatch.setenv("PATH", fake_git(in_tmp / "bin", script) if script else str(in_tmp / "empty"))
    monkeypatch.setattr(gitls, "TIMEOUT", 0.5)
    assert [p.as_posix() for p in discover((Path("."),), (), Path("."), SUFFIXES)] == expected


def test_a_gitignore_that_is_a_fifo_is_not_waited_for(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git opens each folder's .gitignore, and opening a FIFO waits for a writer: a run waited
    for git's TIMEOUT, twice (20 s), before the walk, which skips a .gitignore that is no file."""
    project = repository(in_tmp / "p", {"a.py": "", "sub/b.py": ""})
    os.mkfifo(project / "sub" / ".gitignore")
    monkeypatch.chdir(project)
    started = time.monotonic()
    assert [p.as_posix() for p in discover((Path("."),), (), Path("."), SUFFIXES)] == ["a.py", "sub/b.py"]
    assert time.monotonic() - started < 2


def test_a_git_program_of_the_checked_tree_is_never_run(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With "." (or any relative folder) on PATH, `git` could be a program the tree brings."""
    project = repository(in_tmp / "p", {"a.py": ""})
    fake_git(project / "tools", f"touch {in_tmp / 'ran'}; printf 'x.py\\0'")
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", "tools")
    assert [p.as_posix() for p in discover((Path("."),), (), Path("."), SUFFIXES)] == ["a.py"]
    assert not (in_tmp / "ran").exists()


def test_git_is_not_asked_outside_a_repository_or_about_another_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a repository the walk applies the project's .gitignore files itself; in a
    repository nested in the project, git would apply that repository's alone."""
    project = write_project(tmp_path / "p", {".gitignore": "*.gen.py\n", "a.py": "", "b.gen.py": ""})
    inner = repository(project / "inner", {"c.py": "", "d.gen.py": ""})
    monkeypatch.setattr(discover_module, "listed", lambda folder, top: pytest.fail(f"git asked about {folder}"))
    assert [p.relative_to(project).as_posix() for p in discover((project,), (), project, SUFFIXES)] == ["a.py", "inner/c.py"]
    assert [p.name for p in discover((inner,), (), project, SUFFIXES)] == ["c.py"]


def test_a_hook_s_git_environment_does_not_point_git_elsewhere(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pre-commit runs hooks with GIT_INDEX_FILE (and a worktree's hooks get GIT_DIR) set."""
    other = repository(in_tmp / "other", {"elsewhere.py": ""})
    project = repository(in_tmp / "p", {"a.py": ""})
    monkeypatch.chdir(project)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert gitls.listed(Path("."), project.resolve()) == ["a.py"]


def test_check_reports_the_same_with_and_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = copy_fixture(FIXTURES / "demo", tmp_path / "demo")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "demo")
    monkeypatch.chdir(project)
    with_git = invoke("check", ".", "--format", "json", "--no-cache")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    walked = invoke("check", ".", "--format", "json", "--no-cache")
    assert with_git.exit_code == walked.exit_code == 1
    assert with_git.output == walked.output


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_commit_checked_out_and_whether_the_work_tree_changed(tmp_path: Path) -> None:
    environment = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    (tmp_path / "a.py").write_text("x = 1\n")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True, env=environment)
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout.strip()
    assert gitls.commit(tmp_path) == head
    (tmp_path / "a.py").write_text("x = 2\n")
    assert gitls.commit(tmp_path) == head + "+"
    assert gitls.commit(tmp_path / "no-repository") is None
