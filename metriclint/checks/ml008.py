"""ML008 loose-unit-name: a text or the registry names a unit loosely (GB for a value the code,
or the registry, has in GiB), a class of its own so that a project that writes GB for 2**30
bytes can silence it with `ignore = ["ML008"]` and still get ML001 and ML006."""

from __future__ import annotations

from dataclasses import replace
from itertools import chain
from typing import Iterator

from metriclint.checks.ml001 import all_registry_contradictions
from metriclint.checks.ml006 import all_contradictions
from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.model import Finding, Severity


def loose_unit_names(corpus: Corpus) -> Iterator[Finding]:
    for finding in chain(all_registry_contradictions(corpus), all_contradictions(corpus)):
        if knowledge().loose(finding.facet, finding.found, finding.expected):
            yield replace(
                finding,
                rule=ML008.code,
                name=ML008.name,
                severity=ML008.severity,
                fix=None,
                message=f"{finding.message}; {finding.found} is a decimal unit and {finding.expected} a binary one, or the other way round",
            )


_MEMORY = """import torch

GIB = 1024 ** 3


def report(tracker):
    peak = torch.cuda.max_memory_allocated() / GIB
    tracker.log({{"perf/peak_memory": peak}})  # peak memory on this GPU, in {unit}
"""

ML008 = Rule(
    code="ML008",
    name="loose-unit-name",
    severity=Severity.WARNING,
    kind="contradiction",
    summary="A text or the registry gives a decimal unit (GB, MB) where the code or the registry has the binary one (GiB, MiB), or the other way round.",
    why="Many projects write GB for 2**30 bytes; the two differ by 7%, enough to misread a memory "
    "budget. It is kept apart from ML006 so that a project that uses GB loosely on purpose can "
    "turn this class off and still hear about every other contradiction.",
    fix="Write the unit the code computes (GiB for a division by 1024**3), or divide by 1e9. "
    "To accept the loose name project-wide, add ML008 to `ignore`.",
    check=loose_unit_names,
    good=(Example({"train.py": _MEMORY.format(unit="GiB")}),),
    bad=(Example({"train.py": _MEMORY.format(unit="GB")}, None, ("ML008 train.py:8",)),),
)
