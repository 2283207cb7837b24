"""ML006 code-contradiction: a text or the registry states a facet value that the code
computing the metric rules out."""

from __future__ import annotations

from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.statements import allows, by_statement, found
from metriclint.knowledge.code import knowledge
from metriclint.model import CodeFact, Finding, Related, Severity, SourceKind


def computed_value(corpus: Corpus, metric: str, facet: str) -> tuple[str, list[CodeFact]] | None:
    """The one value the code computes for a metric's facet, with every computing site; None
    when the code says nothing, or computes different values on different paths."""
    facts = dict.fromkeys(corpus.code_facts(metric, facet))
    values = {fact.value for fact in facts}
    if len(values) != 1:
        return None
    return values.pop(), sorted(facts, key=lambda f: (f.span, f.origin))


def code_evidence(facts: list[CodeFact]) -> tuple[str, tuple[Related, ...]]:
    sites = "; and from ".join(f"{f.origin} ({f.span.path}:{f.span.line}), which {f.says}" for f in facts)
    return f"the value comes from {sites}", tuple(Related(f.span, f"{f.origin}: {f.says}") for f in facts)


def code_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts and registry settings against what the code computes, but for a loose unit name (ML008)."""
    return (f for f in all_contradictions(corpus) if not knowledge().loose(f.facet, f.found, f.expected))


def all_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts and registry settings against what the code computes. A text that the registry
    already contradicts with the code's own value is left to ML001: one phrase, one finding."""
    registry, known = corpus.registry, knowledge()
    for (metric, facet, _), group in by_statement(corpus.claims).items():
        computed = computed_value(corpus, metric, facet)
        setting = registry.setting(metric, facet) if registry is not None else None
        if computed is None or allows(group, computed[0]) or (setting is not None and setting.value == computed[0]):
            continue
        value, facts = computed
        evidence, related = code_evidence(facts)
        for claim in group:
            if claim.negated == (claim.value == value) and not known.alike_values(facet, claim.value, value):
                message = f'{metric}: {claim.source} says {facet}={found(claim)} ("{claim.phrase}"); {evidence}'
                yield ML006.finding(
                    claim.span, message, metric=metric, facet=facet, found=found(claim), expected=value,
                    source=claim.source, related=related, phrase=claim.phrase,
                )
    for metric, entry in (registry.metrics.items() if registry is not None else ()):
        for facet, setting in entry.semantics.items():
            computed = computed_value(corpus, metric, facet)
            if computed is not None and computed[0] != setting.value and not known.alike_values(facet, setting.value, computed[0]):
                evidence, related = code_evidence(computed[1])
                message = f"{metric}: registry says {facet}={setting.value}; {evidence}"
                yield ML006.finding(
                    setting.span, message, metric=metric, facet=facet, found=setting.value, expected=computed[0],
                    source=SourceKind.REGISTRY, related=related, phrase=setting.text,
                )


_CLIPPED = """import torch


def log_step(grad_norm):
    \"\"\"Args:
        grad_norm: Gradient norm {says}.
    \"\"\"
    return {{"train/grad_norm": float(grad_norm)}}


def step(model):
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    log_step(norm)
"""

ML006 = Rule(
    "ML006",
    "code-contradiction",
    Severity.ERROR,
    "A text or the registry states a facet value that the code computing the metric rules out.",
    "The code is the ground truth a reader cannot check at a glance: `clip_grad_norm_` returns "
    "the norm before clipping, whatever a docstring says (miles #2132). The knowledge base in "
    "`rules/code/` says what known calls compute; metriclint follows the value to the metric.",
    "Reword the text (or the registry) to what the cited call computes. If the code is what is "
    "wrong, change the computation; the finding goes away with it.",
    code_contradictions,
    good=(
        Example({"train.py": _CLIPPED.format(says="before clipping")}),
        Example({"train.py": _CLIPPED.format(says="after clipping").replace("log_step(norm)", "log_step(min(norm, 1.0))")}),
    ),
    bad=(
        Example({"train.py": _CLIPPED.format(says="after clipping")}, None, ("ML006 train.py:6",)),
        Example(
            {"train.py": _CLIPPED.format(says="norm")},
            "version: 1\nmetrics:\n  train/grad_norm:\n    semantics:\n      clipping: after\n",
            ("ML006 metrics.yaml:5",),
        ),
    ),
)
