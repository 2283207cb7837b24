"""What metriclint reports on a rule's bad example: the messages its page shows.

The example is written to a temporary folder and checked by metriclint's own command line, in
this process, exactly as a user would run it there, so a page quotes the messages of the code
that generated it (tests/test_rules.py pins the same lines in tests/golden/rules/). The run
works in the example's folder, so examples run one at a time.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import tempfile
from pathlib import Path

from metriclint.checks import Example
from metriclint.cli import main


def project_files(example: Example) -> dict[str, str]:
    """The example's files by name, its registry as `metrics.yaml`."""
    return {**example.files, **({"metrics.yaml": example.registry} if example.registry is not None else {})}


def reported(example: Example, code: str) -> list[str]:
    """The lines of rule `code` that the example's command prints, as the text format writes
    them; where the command cannot run (exit 2), its last line of error instead."""
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="metriclint-example-") as folder:
        for name, text in project_files(example).items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chdir(folder)  # findings name their files from here, as in `cd example && metriclint check .`
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = _run([*example.command, "--no-cache", "--jobs", "1"])
        finally:
            os.chdir(here)
            gc.unfreeze()  # a command freezes what it made (cli/project.py); here the process goes on
    lines = [line for line in out.getvalue().splitlines() if line.split(": ", 1)[-1].startswith(f"{code} ")]
    if not lines and status not in (0, 1):  # it could not run here (an extra missing): say why, not "nothing"
        return err.getvalue().strip().splitlines()[-1:]
    return lines


def _run(arguments: list[str]) -> int:
    """Run the command line on `arguments`; its exit status."""
    try:
        main.main(arguments, prog_name="metriclint", standalone_mode=False)
    except SystemExit as ended:
        return ended.code if isinstance(ended.code, int) else 1
    return 0
