"""The pre-commit hook, run by the real pre-commit (`try-repo`) in a throwaway git repository.

Slow (pre-commit builds an environment for the hook), so marked `slow`: the README's test
command runs it, `-m "not slow"` leaves it out. It needs no network: the hook is installed from
this checkout without its dependencies, which the hook's environment finds in this one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, copy_fixture

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
DOCSTRING = "Gradient norm after clipping."


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}).stdout


def snapshot_of_this_repo(target: Path) -> str:
    """This working tree, committed as it is now: try-repo installs the hook from a commit."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-qm", "snapshot")
    return git(target, "rev-parse", "HEAD").strip()


# pip in the hook's environment installs the checkout offline: no index, no dependencies (they
# come from this environment's site-packages), and the build backend from here too.
OFFLINE = {
    "PIP_CONFIG_FILE": os.devnull,  # no index or find-links from the machine's pip configuration
    "PIP_NO_INDEX": "1",
    "PIP_NO_DEPS": "1",
    "PIP_NO_BUILD_ISOLATION": "0",  # pip reads this inverted: "0" turns build isolation off
    "PYTHONPATH": os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))),
}


def try_repo(project: Path, hooks: Path, ref: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "metriclint", "--ref", ref],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, **OFFLINE, "PRE_COMMIT_HOME": str(home)},
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_hook_fails_on_a_staged_contradiction_and_passes_after_the_fix(tmp_path: Path) -> None:
    hooks, project = tmp_path / "metriclint", tmp_path / "project"
    hooks.mkdir()
    project.mkdir()
    ref = snapshot_of_this_repo(hooks)
    shutil.copy(FIXTURES / "demo" / "metrics.yaml", project / "metrics.yaml")
    copy_fixture(FIXTURES / "demo" / "trainer", project / "trainer")
    module = project / "trainer" / "logging_utils.py"
    contradiction = module.read_text(encoding="utf-8")
    module.write_text(contradiction.replace(DOCSTRING, "Gradient norm before clipping."), encoding="utf-8")
    # An old contradiction in a committed, unstaged file: the hook must not report it.
    (project / "legacy.py").write_text('def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n')
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")

    module.write_text(contradiction, encoding="utf-8")
    git(project, "add", "trainer/logging_utils.py")
    failed = try_repo(project, hooks, ref, tmp_path / "home")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "trainer/logging_utils.py:10:34: ML001 train/grad_norm: docstring says clipping=after" in failed.stdout
    assert "legacy.py" not in failed.stdout

    module.write_text(contradiction.replace(DOCSTRING, "Global gradient L2 norm, before clipping."), encoding="utf-8")
    git(project, "add", "trainer/logging_utils.py")
    passed = try_repo(project, hooks, ref, tmp_path / "home")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "metriclint" in passed.stdout and "Passed" in passed.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_the_first_run_in_a_fresh_clone_leaves_nothing_for_git_to_add(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook's lock makes the cache folder: it must come git-ignored and tagged, as the cache
    makes it, or `git add -A` picks it up and the next commit fails on a changed file."""
    monkeypatch.delenv("METRICLINT_CACHE_DIR")  # the default folder, in the project
    hooks, origin, clone = tmp_path / "metriclint", tmp_path / "origin", tmp_path / "clone"
    hooks.mkdir()
    ref = snapshot_of_this_repo(hooks)
    copy_fixture(FIXTURES / "demo", origin)
    git(origin, "init", "-q")
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "start")
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    module = clone / "trainer" / "step.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    git(clone, "add", "trainer/step.py")
    run = try_repo(clone, hooks, ref, tmp_path / "home")
    assert run.returncode == 0, run.stdout + run.stderr
    cache = clone / ".metriclint_cache"
    assert {".gitignore", "CACHEDIR.TAG", ".metriclint-cache", "lock"} <= {p.name for p in cache.iterdir()}
    git(clone, "add", "-A")
    assert git(clone, "status", "--porcelain", "--untracked-files=all") == "M  trainer/step.py\n"


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """This checkout as a hook repository, its commit, and a pre-commit home the tests share
    (the hook's environment is built once)."""
    hooks = tmp_path_factory.mktemp("metriclint")
    return hooks, snapshot_of_this_repo(hooks), tmp_path_factory.mktemp("home")


def run_hook(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run` on the staged files, with the project's .pre-commit-config.yaml."""
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, **OFFLINE, "PRE_COMMIT_HOME": str(home)},
    )


def _config(project: Path, hooks: Path, ref: str, args: str = "") -> None:
    hook = "      - id: metriclint\n" + (f"        args: {args}\n" if args else "")
    (project / ".pre-commit-config.yaml").write_text(f"repos:\n  - repo: {hooks}\n    rev: {ref}\n    hooks:\n{hook}", encoding="utf-8")


def _project_with_an_old_finding(tmp_path: Path, hooks: Path, ref: str) -> Path:
    """A committed project whose hook is configured and whose code holds a finding already."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(FIXTURES / "demo" / "metrics.yaml", project / "metrics.yaml")
    copy_fixture(FIXTURES / "demo" / "trainer", project / "trainer")  # its docstring contradicts metrics.yaml (ML001)
    _config(project, hooks, ref)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "start")
    return project


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_adopting_the_hook_with_a_baseline_as_the_readme_says(tmp_path: Path, hook_repo: tuple[Path, str, Path]) -> None:
    hooks, ref, home = hook_repo
    project = _project_with_an_old_finding(tmp_path, hooks, ref)
    registry = project / "metrics.yaml"
    registry.write_text(registry.read_text(encoding="utf-8") + "  train/tokens:\n    description: Tokens seen.\n", encoding="utf-8")
    git(project, "add", "metrics.yaml")  # an unrelated edit of the file an old finding's other side is in
    refused = run_hook(project, home)
    assert refused.returncode == 1 and "trainer/logging_utils.py:10:34: ML001" in refused.stdout, refused.stdout + refused.stderr
    # The README's adoption: record the findings, and hand the baseline to the hook.
    recorded = subprocess.run(
        [sys.executable, "-m", "metriclint", "check", "--write-baseline", ".metriclint-baseline.json"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert recorded.returncode == 0, recorded.stderr
    _config(project, hooks, ref, "[--baseline, .metriclint-baseline.json]")
    git(project, "add", "-A")
    adopted = run_hook(project, home)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    module = project / "trainer" / "step.py"
    module.write_text(
        module.read_text(encoding="utf-8") + '\n\ndef h(grad_norm):\n    """Args:\n        grad_norm: the post-clip norm.\n    """\n',
        encoding="utf-8",
    )
    git(project, "add", "trainer/step.py")
    new = run_hook(project, home)
    assert new.returncode == 1 and "trainer/step.py:" in new.stdout and "logging_utils.py" not in new.stdout, new.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_split_invocations_print_summaries_that_agree(tmp_path: Path, hook_repo: tuple[Path, str, Path]) -> None:
    # Over 128 KiB of file names: pre-commit splits them into several invocations. The finding
    # touches the first (its file) and the last (metrics.yaml, its other side); the last must
    # not say "All checks passed" after the first said "Found 1 error".
    hooks, ref, home = hook_repo
    project = _project_with_an_old_finding(tmp_path, hooks, ref)
    notes = project / "m"
    notes.mkdir()
    names = [f"m/{'n' * 90}{number:04d}.md" for number in range(1400)]
    for name in names:
        (project / name).write_text("# Notes\n", encoding="utf-8")
    git(project, "add", "-A")
    result = run_hook(project, home, "--files", "trainer/logging_utils.py", *names, "metrics.yaml")
    summaries = [line for line in result.stdout.splitlines() if line.startswith(("Found", "All checks passed"))]
    assert len(summaries) >= 2, result.stdout
    assert result.returncode == 1
    assert not any(line.startswith("All checks passed") for line in summaries), result.stdout
    assert result.stdout.count("ML001") == 1
