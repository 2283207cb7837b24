"""The paths git lists under a folder of a work tree: tracked or untracked, less what an
ignore file ignores. git answers from its index and a walk in C, in a few hundredths of a
second where a walk in Python that matches every `.gitignore` takes a tenth (Megatron-LM).

git is asked for what extract/discover.py's own walk would find, not for its own idea of
the file set: the ignore files are the same (each folder's `.gitignore` and the
`info/exclude` the walk reads, not the user's global excludes file, which would make a run
depend on the machine), matched case-sensitively as pathspec does, and a tracked file that a
`.gitignore` ignores is left out, as the walk and ruff leave it out. Whenever git cannot answer
exactly (not installed, not this repository, an error, a warning such as an unreadable folder
or a `.gitignore` that is a link, or too slow), the answer is None and the caller walks.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

from metriclint.base.files import MAX_BYTES

TIMEOUT = 10.0  # seconds for both listings; a git that hangs (a hook, a locked network drive) costs this, then the walk
_POLL = 0.05  # seconds between looks at what a listing that has not ended waits for
# What locates a repository other than the `.git` above the folder (`git rev-parse --local-env-vars`):
# set by a hook that runs us (pre-commit sets GIT_INDEX_FILE), they would point git elsewhere.
_LOCAL_ENV = frozenset(
    {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
    }
)
_CONFIG = (
    "-c",
    "core.fsmonitor=false",  # a repository's config could name a program for git to run
    "-c",
    "core.ignoreCase=false",  # the walk matches names as written
)


def listed(folder: Path, top: Path) -> list[str] | None:
    """The paths under `folder` that git lists, relative to it, "/"-separated, decoded as
    os.walk decodes names: tracked files (also those deleted since), untracked files that no
    ignore file ignores, and a nested repository or submodule as one entry (git does not enter
    them). `top` is the repository's top as the walk found it (the nearest folder holding
    `.git`); git may use no other. None when git cannot tell."""
    found = _git(top)
    if found is None:
        return None
    program, env = found
    listing = [program, "--no-pager", *_CONFIG, "ls-files", "-z", "--exclude-per-directory=.gitignore", *_excludes_file(top)]
    try:
        kept, tracked_ignored = _outputs([[*listing, "--cached", "--others"], [*listing, "--cached", "--ignored"]], folder, env)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    dropped = set(_paths(tracked_ignored))
    return [path for path in dict.fromkeys(_paths(kept)) if path not in dropped]  # a conflicted file is listed once per stage


def commit(top: Path) -> str | None:
    """The commit checked out in the repository at `top` (its short name, `+` if the work tree
    has changes), or None when git cannot tell."""
    found = _git(top)
    if found is None:
        return None
    program, env = found
    try:
        head, changes = _outputs(
            [
                [program, "--no-pager", *_CONFIG, "rev-parse", "--short=12", "HEAD"],
                [program, "--no-pager", *_CONFIG, "status", "--porcelain", "--untracked-files=no"],
            ],
            top,
            env,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return os.fsdecode(head.strip()) + ("+" if changes.strip() else "")


def _git(top: Path) -> tuple[str, dict[str, str]] | None:
    """git, and the environment to run it in on the repository at `top` and no other; None when
    no git can be trusted to (none, or one found inside the checked tree)."""
    program = shutil.which("git")
    if program is None or os.pathsep in str(top.parent):  # no ceiling could stop git before a repository further up
        return None
    program = os.path.abspath(program)
    if Path(os.path.realpath(program)).is_relative_to(top):
        return None  # found through "." or a relative PATH entry: a program of the checked tree's, not git
    env = {name: value for name, value in os.environ.items() if name not in _LOCAL_ENV}
    env["GIT_CEILING_DIRECTORIES"] = str(top.parent)  # git looks up to `top`, not above
    return program, env


def _excludes_file(top: Path) -> list[str]:
    """The option naming `.git/info/exclude` when the walk reads it: a regular file within the
    size limit (extract/discover.py reads it with base/files.read_regular)."""
    path = top / ".git" / "info" / "exclude"
    try:
        status = os.stat(path)
    except OSError:
        return []
    return [f"--exclude-from={path}"] if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_BYTES else []


def _outputs(commands: list[list[str]], folder: Path, env: dict[str, str]) -> list[bytes]:
    """The standard output of each command, run at once in `folder`. Raises OSError (no git),
    SubprocessError (one failed, wrote to standard error, or all took longer than TIMEOUT)."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        for command in commands:
            started.append(
                subprocess.Popen(
                    command,
                    cwd=folder,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
        deadline = time.monotonic() + TIMEOUT
        results = [_finished(process, deadline) for process in started]
    finally:
        for process in started:
            if process.poll() is None:  # timed out, or interrupted: nothing of ours outlives the run
                process.kill()
                process.communicate()
    for process, (_, errors) in zip(started, results):
        if process.returncode != 0 or errors:
            raise subprocess.CalledProcessError(process.returncode, process.args, stderr=errors)
    return [output for output, _ in results]


def _finished(process: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes]:
    """What `process` wrote, once it ends. Raises TimeoutExpired past `deadline`, or as soon as
    it waits to open a FIFO: git opens each folder's `.gitignore`, and opening a FIFO waits for
    a writer that may never come (a run waited TIMEOUT for each listing)."""
    while True:
        try:
            return process.communicate(timeout=max(0.0, min(_POLL, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline or _opening_a_fifo(process.pid):
                raise


def _opening_a_fifo(pid: int) -> bool:
    """Whether process `pid` waits in the kernel for a FIFO's other end (Linux says so in /proc;
    elsewhere only the deadline tells)."""
    try:
        return Path(f"/proc/{pid}/wchan").read_text(encoding="ascii") == "wait_for_partner"
    except (OSError, UnicodeDecodeError):
        return False


def _paths(output: bytes) -> list[str]:
    return [os.fsdecode(path) for path in output.split(b"\0") if path]
