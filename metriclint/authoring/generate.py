"""Files generated from the registry, so dashboards and docs import the truth instead of
keeping their own copy of it: a tooltip table (JS, TS or JSON) and a Markdown table.

A Markdown page may hold the table between `<!-- metriclint:begin -->` and
`<!-- metriclint:end -->`; only that region is refreshed, the rest of the page is the author's.
"""

from __future__ import annotations

import json

from metriclint.knowledge.registry import Registry

BEGIN, END = "<!-- metriclint:begin -->", "<!-- metriclint:end -->"
TABLE_NAME = "METRIC_DESCRIPTIONS"
FORMATS = ("js", "ts", "json")


class RegionError(Exception):
    """A page whose metriclint region cannot be found or is malformed."""


def descriptions(registry: Registry) -> dict[str, str]:
    """Key -> description, in registry order; metrics without a description are left out."""
    return {key: " ".join(entry.description.text.split()) for key, entry in registry.metrics.items() if entry.description}


def tooltips(registry: Registry, fmt: str) -> str:
    """The dashboard's description table. The JS/TS form is an exported object that metriclint's
    tooltip source reads back (exact keys), so the generated table is checked like a written one."""
    table = descriptions(registry)
    if fmt == "json":
        return json.dumps(table, indent=2, ensure_ascii=False) + "\n"
    rows = "".join(f"  {json.dumps(key, ensure_ascii=False)}: {json.dumps(text, ensure_ascii=False)},\n" for key, text in table.items())
    annotation = ": Record<string, string>" if fmt == "ts" else ""
    header = f"// Generated from the metric registry by `metriclint generate tooltips --format {fmt}`; do not edit.\n"
    return f"{header}export const {TABLE_NAME}{annotation} = {{\n{rows}}};\n"


def docs_table(registry: Registry) -> str:
    """One row per metric: key, description, and its facets as `facet: value`."""
    lines = ["| Metric | Description | Facets |", "|---|---|---|"]
    texts = descriptions(registry)
    for key, entry in registry.metrics.items():
        text = texts.get(key, "")
        facets = ", ".join(f"{facet}: {setting.value}" for facet, setting in entry.semantics.items())
        lines.append(f"| `{key}` | {_cell(text)} | {_cell(facets)} |")
    return "\n".join(lines) + "\n"


def docs(registry: Registry, page: str | None) -> str:
    """The page with its region refreshed; a new page (None) is just the region."""
    region = f"{BEGIN}\n{docs_table(registry)}{END}"
    if page is None:
        return region + "\n"
    if page.count(BEGIN) != 1 or page.count(END) != 1 or page.index(BEGIN) > page.index(END):
        raise RegionError(f"needs exactly one '{BEGIN}' followed by one '{END}'")
    newline = "\r\n" if "\r\n" in page else "\n"
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + region.replace("\n", newline) + tail


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")
