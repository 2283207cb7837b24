"""ML001 registry-contradiction: a text states a facet value that the registry contradicts."""

from __future__ import annotations

from textwrap import dedent
from typing import Iterator

from metriclint.checks.ml006 import computed_value, restated
from metriclint.checks.rewording import fix_for
from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.snippets import REGISTRY
from metriclint.checks.statements import allows, by_statement, claim_finding, statements
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.model import Finding, Related, Severity


def registry_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts against the registry, but for a loose unit name (ML008) and a value one may state
    for the other (rules/code/ranks.yaml `alike`: "per GPU" of a per-rank value), as ML006 holds."""
    known = knowledge()
    return (
        f
        for f in all_registry_contradictions(corpus)
        if not known.loose(f.facet, f.found, f.expected) and not known.alike_values(f.facet, f.found, f.expected)
    )


def all_registry_contradictions(corpus: Corpus) -> Iterator[Finding]:
    if corpus.registry is None:
        return
    stated = statements(corpus.claims)
    for (metric, facet, statement), group in by_statement(corpus.claims).items():
        setting = corpus.registry.setting(metric, facet)
        if setting is None or allows(group, setting.value):
            continue
        computed = computed_value(corpus, metric, facet)
        for claim in group:
            if claim.negated == (claim.value == setting.value) and not (
                computed is not None and computed[0] == setting.value and restated(computed[1], claim.value, stated[(metric, statement)])
            ):  # the registry's value is the code's, and the text states the same number in other words
                evidence = f"registry says {setting.value} ({setting.span.path}:{setting.span.line})"
                fix = fix_for(claim, group, setting.value, corpus.vocabulary) if corpus.vocabulary else None
                yield claim_finding(ML001, claim, facet, setting.value, evidence, (Related(setting.span, setting.text),), fix)


# A docstring that says which side of clipping its `grad_norm` argument is.
_LOG_IT = dedent('''\
    def log(grad_norm):
        """Log it.

        Args:
            grad_norm: Norm {side} clipping.
        """
''')
_NEVER_CLIPPED = dedent('''\
    def log(grad_norm):
        """Args:
            grad_norm: Never the clipped value.
        """
''')


ML001 = Rule(
    code="ML001",
    name="registry-contradiction",
    severity=Severity.ERROR,
    kind="contradiction",
    summary="A text states a facet value that the registry contradicts.",
    why="Readers trust docstrings and tooltips. When one says a value the registry rules out, "
    "someone will read the metric wrongly (miles #2132: a norm documented as after clipping "
    "was the norm before clipping, so nobody saw that clipping fired every step).",
    fix="Reword the text to the registry's value, or fix the registry if the text is right.",
    check=registry_contradictions,
    good=(
        Example({"train.py": _LOG_IT.format(side="before")}, REGISTRY),
        Example({"train.py": _NEVER_CLIPPED}, REGISTRY),
    ),
    bad=(
        Example(
            {"train.py": _LOG_IT.format(side="after")},
            REGISTRY,
            ("ML001 train.py:5",),
        ),
    ),
)
