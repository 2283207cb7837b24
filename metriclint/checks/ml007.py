"""ML007 name-contradiction: a name states a facet value that the code computing the value, or
the registry, rules out."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from metriclint.checks.ml006 import code_evidence, computed_value, estimated
from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.model import Finding, NameClaim, Related, Severity, SourceKind


def name_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """One finding per metric and facet, at the first name that is ruled out; the registry, when
    it states the facet, is what the names are held against (ML006 holds it against the code).
    A name that states what the code's value is also an estimate of (CodeFact.also) is not ruled
    out where the code agrees with what it is held against."""
    groups: dict[tuple[str, str], list[NameClaim]] = defaultdict(list)
    for claim in corpus.names:
        groups[(claim.metric, claim.facet)].append(claim)
    registry = corpus.registry
    for (metric, facet), claims in sorted(groups.items()):
        related: tuple[Related, ...]
        setting = registry.setting(metric, facet) if registry is not None else None
        computed = computed_value(corpus, metric, facet)
        if setting is not None:
            value, related = setting.value, (Related(setting.span, setting.text),)
            evidence = f"registry says {value} ({setting.span.path}:{setting.span.line})"
        elif computed is not None:
            value = computed[0]
            evidence, related = code_evidence(computed[1])
        else:
            continue
        alike = knowledge().alike_values
        # what the code's value is also an estimate of, where the code says what is held against the
        # name: a mean over processes of each one's standard deviation is a standard deviation too
        estimates = computed[1] if computed is not None and computed[0] == value else []
        against = [
            c
            for c in claims
            if value != c.value and value not in c.also and not alike(facet, c.value, value) and not estimated(estimates, c.value)
        ]  # a key's own name first
        if not against:
            continue
        first, others = against[0], tuple(Related(c.span, c.name) for c in against[1:])
        message = f'{metric}: the name {first.name} says {facet}={first.value} ("{first.part}"); {evidence}'
        yield ML007.finding(
            first.span,
            message,
            metric=metric,
            facet=facet,
            found=first.value,
            expected=value,
            source=SourceKind.NAME,
            related=related + others,
            phrase=first.name,
        )


_MEMORY = """import psutil


def report(tracker):
    used = psutil.virtual_memory().used / {divisor}
    tracker.log({{"perf/host_memory_{unit}": used}})
"""

ML007 = Rule(
    code="ML007",
    name="name-contradiction",
    severity=Severity.WARNING,
    kind="contradiction",
    summary="A name states a facet value that the code computing the value, or the registry, rules out.",
    why="A name is the first thing a reader sees of a metric, on every chart and in every query: "
    "`host_memory_gib` divided by 1e9 is read as GiB and is 7% off, `step_time_ms` that holds "
    "seconds is off by a thousand. The parts a name is read by, with examples, are in "
    "`rules/names.yaml`; a part used loosely in practice (`gb` for GiB) is not held to the letter. "
    "A name is the weakest statement: only a logged key's own name, and only for a unit or a scope, "
    "is held against a text, as one more side of ML002.",
    fix="Rename the key (keep the old name as a registry alias while dashboards use it) or the "
    "variable, or change the computation to match the name.",
    check=name_contradictions,
    good=(
        Example({"report.py": _MEMORY.format(divisor="2**30", unit="gib")}),
        Example({"report.py": _MEMORY.format(divisor="2**30", unit="gb")}),
    ),
    bad=(
        Example({"report.py": _MEMORY.format(divisor="1e9", unit="gib")}, None, ("ML007 report.py:6",)),
        Example(
            {"report.py": _MEMORY.format(divisor="2**30", unit="gib")},
            "version: 1\nmetrics:\n  perf/host_memory_gib:\n    semantics:\n      unit: GB\n",
            ("ML007 report.py:6",),
        ),
    ),
)
