"""`metriclint init`: a first registry, drafted from what the project already logs and says.

An entry for every key the code outside the tests logs a measurement under (a key logged only
with text, a flag, a container or a configuration field is a label or a setting:
sources/python/values.py), and every key a framework it uses logs from its own loop (the
Hugging Face Trainer's `grad_norm`: rules/code/frameworks.yaml); templates kept with their
placeholders named, and a comment on a template whose placeholder starts a segment, since it
covers every key that fits. Names that documented values carry into a key become its aliases,
when they name only that key. A facet goes under `semantics` from what the code computes, else
only where every statement agrees (authoring/settle.py); a disagreement is listed with every
side, the code's included, in a comment, because settling a text is a human's call. A
description is never a text that contradicts the drafted semantics. The draft is written as
text (comments are the point), and passes registry validation.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

from metriclint.authoring.settle import FacetPosition, settle
from metriclint.base import keys
from metriclint.engine import Analysis, Collection
from metriclint.evidence import products
from metriclint.language.attribution import specific
from metriclint.language.phrases import read, sentences
from metriclint.model import Claim, CodeFact, Mention, SourceKind

SOURCE_RANK = {SourceKind.DOCSTRING: 0, SourceKind.COMMENT: 1, SourceKind.TOOLTIP: 2}


@dataclass
class DraftEntry:
    key: str
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    semantics: dict[str, str] = field(default_factory=dict)
    disputes: dict[str, tuple[FacetPosition, ...]] = field(default_factory=dict)


def draft(analysis: Analysis) -> list[DraftEntry]:
    """One entry per drafted key, sorted, with what the code and the project's texts say.

    `analysis` is a run without a registry: every key the code logs stands for itself."""
    collection = analysis.collection
    entries = {key: DraftEntry(key) for key in drafted_keys(collection)}
    mentions = list(analysis.mentions)
    _add_aliases(entries, mentions)
    claims: dict[str, list[Claim]] = defaultdict(list)
    for claim in analysis.claims:
        claims[claim.metric].append(claim)
    facts: dict[str, list[CodeFact]] = defaultdict(list)
    for code in analysis.code:
        facts[code.metric].append(code.fact)
    for key, entry in entries.items():
        _add_semantics(entry, claims[key], _computing(facts, key))
    _add_descriptions(entries, mentions, claims, collection)
    return list(entries.values())


def drafted_keys(collection: Collection) -> list[str]:
    """The keys some code outside the tests logs a measurement under, that a registry can hold:
    written in the code, or built by a call (the concrete series beside the template that covers
    them, so each can get its own description). A key only read back stays out: the code names
    it but does not show it logged, and in the registry its name would make every sentence
    that mentions it in passing speak for it (seen on miles: `ref_log_probs` in a list of dump
    columns)."""
    return sorted(
        {
            use.key
            for use in (*products.own_keys(collection.extractions, collection.made), *collection.made.built)
            if (use.measured or use.framework)
            and not use.from_keyword
            and use.span.path not in collection.tests
            and keys.registrable(use.key)
        }
    )


def _add_semantics(entry: DraftEntry, claims: list[Claim], facts: list[CodeFact]) -> None:
    # In the order the texts state them, then what only the code says, sorted: the code's
    # facts arrive in no particular order, and the draft must not change from run to run.
    for facet in dict.fromkeys([*(c.facet for c in claims), *sorted(f.facet for f in facts)]):
        settled = settle([c for c in claims if c.facet == facet], [f for f in facts if f.facet == facet])
        if settled.value is not None:
            entry.semantics[facet] = settled.value
        if settled.disagreement:
            entry.disputes[facet] = settled.disagreement


def _computing(facts: dict[str, list[CodeFact]], key: str) -> list[CodeFact]:
    """What the code computes for a key: its own facts and those of the keys that can name the
    same series. A key a call builds (`perf/cpu_memory_after_offload_gb`) is computed by the code
    that logs its template (`perf/cpu_memory_{label}_gb`), whose facts are the template's."""
    return [fact for metric, found in facts.items() if keys.same_metric(metric, key) for fact in found]


def _add_aliases(entries: dict[str, DraftEntry], mentions: list[Mention]) -> None:
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


def _add_descriptions(
    entries: dict[str, DraftEntry], mentions: list[Mention], claims: dict[str, list[Claim]], collection: Collection
) -> None:
    """The first sentence of the text that documents the value logged under the key (a
    docstring before a comment before a tooltip), else of a text that states its facets; never
    one that says what the drafted semantics rule out or that a disagreement is about."""
    by_statement = {m.span(0, len(m.text)): m for m in mentions}
    ranked = sorted(mentions, key=lambda m: SOURCE_RANK.get(m.source, 3))
    for key, entry in entries.items():
        documenting = [m for m in ranked if key in m.flows_to and _documents(m)]
        stating = [by_statement[c.statement] for c in sorted(claims[key], key=lambda c: (SOURCE_RANK.get(c.source, 3), c.statement))]
        for mention in [*documenting, *stating]:
            sentence = _first_sentence(mention)
            if mention.path not in collection.tests and _fits(sentence, entry, collection):
                entry.description = sentence
                break


def _documents(mention: Mention) -> bool:
    """Whether a text whose value is logged is that value's own: an entry for a parameter or a
    return, a comment. A function's free text is about what the function does ("Send the
    gradient norm."), even where the one key the function logs makes its statements the key's."""
    return mention.source is not SourceKind.DOCSTRING or bool(mention.subjects)


def _fits(sentence: str, entry: DraftEntry, collection: Collection) -> bool:
    """Whether a description says nothing the entry's semantics or disputes rule out."""
    for reading in read(sentence, collection.vocabulary):
        drafted = entry.semantics.get(reading.facet)
        if reading.facet in entry.disputes or (drafted is not None and (reading.value != drafted or reading.negated)):
            return False
    return True


def _first_sentence(mention: Mention) -> str:
    start, end = sentences(mention.text)[0]
    return " ".join(mention.text[start:end].split())


def render(entries: list[DraftEntry], files: int) -> str:
    lines = [
        f"# Drafted by `metriclint init` from {files} files. Review every entry: semantics come from",
        "# what the code computes where metriclint can tell, else from texts that all agree; a",
        "# description is the first sentence of a text about the key. Where sources disagree, a",
        "# comment lists every side; settle it under `semantics` and fix the texts that are wrong.",
        "version: 1",
        "metrics:" if entries else "metrics: {}",
    ]
    for entry in entries:
        lines += _render_entry(entry)
    return "\n".join(lines) + "\n"


def _render_entry(entry: DraftEntry) -> list[str]:
    body = []
    if keys.broad(entry.key):
        body.append(f"    # A broad template: {', '.join(keys.placeholders(entry.key))} may be any text within its segment;")
        body.append("    # check that every key it fits is this metric.")
    if entry.aliases:
        body.append(f"    aliases: [{', '.join(map(_quoted, entry.aliases))}]")
    if entry.description:
        body.append(f"    description: {_quoted(entry.description)}")
    if entry.semantics:
        body.append("    semantics:")
        body += [f"      {facet}: {_quoted(value)}" for facet, value in entry.semantics.items()]
    for facet, sides in entry.disputes.items():
        settled = entry.semantics.get(facet)
        why = f"the code computes {settled}, written above" if settled is not None else "write the right value under `semantics`"
        body.append(f"    # Sources disagree on {facet} ({why}):")
        body += [f"    #   {_one_line(str(side))}" for side in sides]
    header = f"  {_quoted(entry.key)}:"
    return [header, *body] if body else [header]


def _one_line(text: str) -> str:
    """A comment stays one line whatever a quoted phrase holds."""
    return " ".join(text.split())


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar (JSON's string syntax is valid YAML), so no key or text can
    be misread as a number, a boolean or YAML syntax."""
    return json.dumps(text, ensure_ascii=False)
