"""`metriclint init`: a first registry, drafted from what the project already logs and says.

Every logged key becomes an entry (templates kept as written). Names that documented values
carry into a key become its aliases, when they name only that key. A facet goes under
`semantics` only where every text that states it agrees; where texts disagree, the draft lists
each side with its location in a comment, because choosing is a human's call. The draft is
written as text (comments are the point), and passes registry validation.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from metriclint import engine
from metriclint.language.attribution import specific
from metriclint.language.phrases import sentences
from metriclint.model import Claim, Mention

SOURCE_RANK = {"docstring": 0, "comment": 1, "tooltip": 2}


@dataclass
class Entry:
    key: str
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    semantics: dict[str, str] = field(default_factory=dict)
    disputes: dict[str, list[Claim]] = field(default_factory=dict)


def draft(collection: engine.Collection) -> list[Entry]:
    """One entry per logged key, sorted, with what the project's texts agree on. The
    description is the first sentence of the text that documents the value logged under the
    key (a docstring before a comment before a tooltip), else of the text that states its facets."""
    logged = sorted({use.key for e in collection.extractions for use in e.keys if not use.from_keyword})
    entries = {key: Entry(key) for key in logged}
    mentions = engine.texts(collection)
    _add_aliases(entries, mentions)
    by_statement = {m.span(0, len(m.text)): m for m in mentions}
    claims = engine.read_claims(collection, mentions)
    by_metric: dict[str, list[Claim]] = defaultdict(list)
    for claim in claims:
        if claim.metric in entries:
            by_metric[claim.metric].append(claim)
    for mention in sorted(mentions, key=lambda m: SOURCE_RANK.get(m.source, 3)):
        for key in mention.flows_to:
            if key in entries and not entries[key].description:
                entries[key].description = _first_sentence(mention)
    for key, found in by_metric.items():
        entry = entries[key]
        best = min(found, key=lambda c: (SOURCE_RANK.get(c.source, 3), c.statement))
        entry.description = entry.description or _first_sentence(by_statement[best.statement])
        for facet in dict.fromkeys(c.facet for c in found):
            stated = [c for c in found if c.facet == facet]
            values = {c.value for c in stated if not c.negated}
            if len(values) == 1 and not any(c.negated and c.value in values for c in stated):
                entry.semantics[facet] = values.pop()
            elif values:
                entry.disputes[facet] = [c for c in stated if not c.negated]
    return list(entries.values())


def _add_aliases(entries: dict[str, Entry], mentions: list[Mention]) -> None:
    """A documented name that flows into exactly one key, and is no key itself, is its alias.
    Plain words (`loss`) are left out: as aliases they would make every `loss` parameter in the
    project speak for one metric."""
    owners: dict[str, set[str]] = defaultdict(set)
    for mention in mentions:
        for name in mention.subjects:
            for key in mention.flows_to:
                if key in entries and specific(name):
                    owners[name].add(key)
    for name, found in sorted(owners.items()):
        if len(found) == 1 and name not in entries:
            entries[found.pop()].aliases.append(name)


def _first_sentence(mention: Mention) -> str:
    start, end = sentences(mention.text)[0]
    return " ".join(mention.text[start:end].split())


def render(entries: list[Entry], files: int) -> str:
    lines = [
        f"# Drafted by `metriclint init` from {files} files. Review every entry: descriptions and",
        "# semantics are what the texts say, not what the code does. Where texts disagree, a",
        "# comment lists each side; write the right value under `semantics` and fix the other texts.",
        "version: 1",
        "metrics:" if entries else "metrics: {}",
    ]
    for entry in entries:
        lines += _render_entry(entry)
    return "\n".join(lines) + "\n"


def _render_entry(entry: Entry) -> list[str]:
    body = []
    if entry.aliases:
        body.append(f"    aliases: [{', '.join(map(_quoted, entry.aliases))}]")
    if entry.description:
        body.append(f"    description: {_quoted(entry.description)}")
    if entry.semantics:
        body.append("    semantics:")
        body += [f"      {facet}: {_quoted(value)}" for facet, value in entry.semantics.items()]
    for facet, claims in entry.disputes.items():
        body.append(f"    # The texts disagree on {facet}:")
        body += [f'    #   {c.value} at {c.span.path}:{c.span.line} ({c.source}: "{c.phrase}")' for c in claims]
    header = f"  {_quoted(entry.key)}:"
    return [header, *body] if body else [header]


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar (JSON's string syntax is valid YAML), so no key or text can
    be misread as a number, a boolean or YAML syntax."""
    return json.dumps(text, ensure_ascii=False)
