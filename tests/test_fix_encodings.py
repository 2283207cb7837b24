"""`fix` decodes a file the way its source did, so a phrase on the first line of a file that
starts with a byte-order mark is found where the finding says, and the mark is kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, write_project

BOM = b"\xef\xbb\xbf"
REGISTRY = "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: before\n"
TABLE = '[tool.metriclint]\n[[tool.metriclint.tooltips]]\npath = "ui/*"\ntable = "DESCRIPTIONS"\n'

# name -> (first line, holding the phrase; a config the source needs)
CASES = {
    "docs/metrics.md": ("- `train/grad_norm`: norm after clipping\n", None),
    "ui/metrics.js": ('export const DESCRIPTIONS = {"train/grad_norm": "norm after clipping"};\n', TABLE),
    "ui/metrics.ts": ('export const DESCRIPTIONS = {"train/grad_norm": "norm after clipping"};\n', TABLE),
    "train.py": ('x = {"train/grad_norm": 1.0}  # norm after clipping\n', None),
}


@pytest.mark.parametrize("name", CASES)
def test_fix_rewrites_the_first_line_of_a_file_with_a_byte_order_mark(name: str, in_tmp: Path) -> None:
    line, config = CASES[name]
    write_project(in_tmp, {"pyproject.toml": config} if config else {}, REGISTRY)
    (in_tmp / name).parent.mkdir(parents=True, exist_ok=True)
    (in_tmp / name).write_bytes(BOM + line.encode())
    result = invoke("fix", ".", "--no-cache")
    assert f"{name}:1:" in result.output and 'fixed "after clipping" -> "before clipping"' in result.output, result.output
    assert (in_tmp / name).read_bytes() == BOM + line.replace("after", "before").encode()
