"""Texts that break a parser run in the metriclint process itself, as the second probe of
issue 36 found them: each kills, stalls or floods its parser within the limits `LIMITED` sets
(a file's limits lowered, so that a test ends in seconds). The command line and the server
must answer each with ML900 for that text, and go on."""

from __future__ import annotations

import sys

import pytest

SECONDS, MEMORY = 3, 128 * 2**20

# kind: (file name, text, what its ML900 says)
HOSTILE = {
    # Two BOMs send it to libcst (CPython rejects the second), whose native parser overflows
    # its stack on the nesting: SIGSEGV.
    "crash": ("b.py", "\ufeff\ufeff" + "[" * 5000, "the process reading this file died"),
    # Syntax newer than Python 3.11 sends it to libcst, whose native parser takes time cubic
    # in a chain of subscripts (over 100 s here), holding the GIL, where no signal handler runs.
    "stall": ("b.py", "type Scalar = float\nx = table" + "[0]" * 4500 + "\n", f"reading this file took longer than {SECONDS} s"),
    # Two million objects from 6 MB of JSON: about 200 MB.
    "flood": ("b.json", "[" + "{}," * 2_000_000 + "{}]", f"reading this file needed more than {MEMORY // 2**20} MiB of memory"),
}

# The stall needs syntax the running CPython lacks (a `type` statement, Python 3.12), so that the
# text reaches libcst; from 3.12 CPython parses it and refuses the nesting at once, another ML900.
STALLS = pytest.mark.skipif(sys.version_info >= (3, 12), reason="CPython 3.12+ parses `type` statements: the text never reaches libcst")
KINDS = [pytest.param(kind, marks=STALLS) if kind == "stall" else kind for kind in sorted(HOSTILE)]

# `python -c LIMITED ARGS...` is `metriclint ARGS...` with those limits.
LIMITED = f"""
import sys
from metriclint.extract import runner
runner.FILE_SECONDS, runner.FILE_MEMORY = {SECONDS}, {MEMORY}
from metriclint.cli import main
main(sys.argv[1:])
"""
