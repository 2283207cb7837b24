"""The facet vocabulary page, from `rules/facets/*.yaml`: each facet's values with their
phrases (the first one canonical, the wording `fix` writes), the phrases that state nothing,
and the examples the tests run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from metriclint.docs.markdown import cell

INTRO = (
    "# Facet vocabulary\n\n"
    "Generated from `rules/facets/*.yaml`, one file per facet. Each value lists its phrases; the "
    "first (in bold) is the canonical wording, the one `metriclint fix` writes. Phrases that look "
    "like a value but state none are listed apart. The examples are run by the tests: each text "
    "must state exactly the values shown. How phrases are matched and read is on the "
    "[Facets](../facets.md) page; a registry adds facets and phrases in its `facets:` section.\n"
)


def page(folder: Path) -> str:
    """The page for the facet files in `folder`, in the order of their names."""
    return "\n".join([INTRO, *(_facet(yaml.safe_load(path.read_text(encoding="utf-8"))) for path in sorted(folder.glob("*.yaml")))])


def _phrases(phrases: list[str]) -> str:
    """The canonical phrase in bold, then the others; a value only the code computes has none."""
    if not phrases:
        return "none: only the code has this value"
    return ", ".join([f"**{cell(phrases[0])}**", *map(cell, phrases[1:])])


def _facet(data: dict[str, Any]) -> str:
    rows = "".join(f"| `{value}` | {_phrases(phrases)} |\n" for value, phrases in data["values"].items())
    parts = [f"## {data['facet']}\n", f"{data['description']}\n", "| Value | Phrases |\n|---|---|\n" + rows]
    if data.get("ignore"):
        parts.append("Phrases that state nothing: " + ", ".join(cell(p) for p in data["ignore"]) + ".\n")
    if data.get("examples"):
        examples = "".join(f"| {cell(e['text'])} | {', '.join(e['claims']) if e['claims'] else 'nothing'} |\n" for e in data["examples"])
        parts.append("| Example | States |\n|---|---|\n" + examples)
    return "\n".join(parts)
