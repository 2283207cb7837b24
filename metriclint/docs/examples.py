"""What metriclint reports on a rule's bad example: the messages its page shows.

The example is written to a temporary folder and checked by `python -m metriclint` in a
process of its own, exactly as a user would run it, so a page quotes the messages of the code
that generated it (tests/test_rules.py pins the same lines in tests/golden/rules/).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from metriclint.checks import Example

PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent  # on the path of the process that runs the example


def project_files(example: Example) -> dict[str, str]:
    """The example's files by name, its registry as `metrics.yaml`."""
    return {**example.files, **({"metrics.yaml": example.registry} if example.registry is not None else {})}


def reported(example: Example, code: str) -> list[str]:
    """The lines of rule `code` that the example's command prints, as the text format writes
    them; where the command cannot run (exit 2), its last line of error instead."""
    with tempfile.TemporaryDirectory(prefix="metriclint-example-") as folder:
        for name, text in project_files(example).items():
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        environment = {
            key: value for key, value in os.environ.items() if not key.startswith(("METRICLINT_", "PYTHON", "FORCE_COLOR"))
        }
        environment.update(PYTHONPATH=str(PACKAGE_PARENT), NO_COLOR="1", PYTHONUTF8="1")
        done = subprocess.run(
            [sys.executable, "-m", "metriclint", *example.command, "--no-cache"],
            cwd=folder, env=environment, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False,
        )
    lines = [line for line in done.stdout.splitlines() if line.split(": ", 1)[-1].startswith(f"{code} ")]
    if not lines and done.returncode not in (0, 1):  # it could not run here (an extra missing): say why, not "nothing"
        return done.stderr.strip().splitlines()[-1:]
    return lines
