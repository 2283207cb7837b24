"""ML006 code-contradiction: a text or the registry states a facet value that the code
computing the metric rules out."""

from __future__ import annotations

from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.statements import allows, by_statement, claim_finding, statements
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.knowledge.registry import Setting
from metriclint.model import Claim, CodeFact, Finding, Related, Severity, SourceKind


def computed_value(corpus: Corpus, metric: str, facet: str) -> tuple[str, list[CodeFact]] | None:
    """The one value the code computes for a metric's facet, with every computing site; None
    when the code says nothing, or computes different values on different paths."""
    facts = dict.fromkeys(corpus.code_facts(metric, facet))
    values = {fact.value for fact in facts}
    if len(values) != 1:
        return None
    return values.pop(), sorted(facts, key=lambda f: (f.span, f.origin))


def at_site(corpus: Corpus, claim: Claim) -> tuple[str, list[CodeFact]] | None:
    """Where the code computes a metric differently on different paths, the one value of the
    path a comment sits at: right above the call or key that logs it, or trailing it. Another
    trainer's way of computing the same key says nothing about this one."""
    if claim.source is not SourceKind.COMMENT:
        return None
    where = claim.statement
    for line in dict.fromkeys((where.end_line + 1, where.line)):
        facts = dict.fromkeys(corpus.code_facts_at(claim.metric, claim.facet, where.path, line))
        if {fact.value for fact in facts} and len({fact.value for fact in facts}) == 1:
            return next(iter(facts)).value, sorted(facts, key=lambda f: (f.span, f.origin))
    return None


def estimated(facts: list[CodeFact], value: str, stated: frozenset[str] = frozenset()) -> bool:
    """Whether every computing site's value is also an estimate of `value` (rules/code/ `also`):
    a policy's NLL of the tokens it drew is an estimate of its entropy. Some hold only of a text
    that `stated` more (`also_with`): one device's share of a total is the mean over the devices."""
    return bool(facts) and all(value in fact.also and stated.issuperset(fact.also_with) for fact in facts)


def restated(facts: list[CodeFact], value: str, stated: frozenset[str]) -> bool:
    """Whether a text that states `value` (and `stated`) says the same number as every computing
    site's value in other words: an `also` that holds only of a text stating more (`also_with`:
    a mean over the devices is one device's share). An estimate (an NLL for an entropy) is
    another number, which a registry's own word rules out (ML001)."""
    return estimated(facts, value, stated) and all(fact.also_with for fact in facts)


def code_evidence(facts: list[CodeFact]) -> tuple[str, tuple[Related, ...]]:
    related = (Related(f.span, f"{f.origin}: {f.says}") for f in facts)
    return f"the value comes from {_sites(facts)}", (*related, *dict.fromkeys(f.context for f in facts if f.context is not None))


def _sites(facts: list[CodeFact]) -> str:
    return "; and from ".join(f"{f.origin} ({f.span.path}:{f.span.line}), which {f.says}" for f in facts)


def default_placeholder(corpus: Corpus, metric: str, facet: str) -> tuple[str, str, tuple[Related, ...]] | None:
    """When every fact the code computes for a metric's facet waits for one flag that the
    project defines off by default, the value logged by default is the placeholder constant:
    that constant, and the evidence (the placeholder, the flag's definition, the computing
    sites). None otherwise: a flag on by default, or not found, leaves the computed value."""
    facts = sorted(dict.fromkeys(corpus.code_facts(metric, facet)), key=lambda f: (f.span, f.origin))
    held = {f.placeholder for f in facts}
    placeholder = held.pop() if len(held) == 1 else None
    flag = corpus.off_by_default(placeholder.flag_name) if placeholder is not None else None
    if placeholder is None or flag is None:
        return None
    where, defined = placeholder.span, flag.span
    _, related = code_evidence(facts)
    evidence = (
        f"by default the value is the constant {placeholder.constant} ({where.path}:{where.line}): {placeholder.flag} is off"
        f" unless given ({defined.path}:{defined.line}), and only then does it come from {_sites(facts)}"
    )
    own = (
        Related(where, f"the constant {placeholder.constant} unless {placeholder.flag}"),
        Related(defined, f"{placeholder.flag} off by default"),
    )
    return placeholder.constant, evidence, own + related


def code_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts and registry settings against what the code computes, but for a loose unit name (ML008)."""
    return (f for f in all_contradictions(corpus) if not knowledge().loose(f.facet, f.found, f.expected))


def all_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts and registry settings against what the code computes. A text that the registry
    already contradicts with the code's own value is left to ML001: one phrase, one finding."""
    registry, known, stated = corpus.registry, knowledge(), statements(corpus.claims)
    for (metric, facet, statement), group in by_statement(corpus.claims).items():
        held = default_placeholder(corpus, metric, facet)
        if held is not None:
            if statement not in corpus.naming_flags:  # a text naming the flag states the condition
                yield from _placeholder_findings(group, metric, facet, held)
            continue
        computed = computed_value(corpus, metric, facet)
        setting = registry.setting(metric, facet) if registry is not None else None
        if computed is None:
            computed = at_site(corpus, group[0])
        if computed is None or allows(group, computed[0]) or (setting is not None and setting.value == computed[0]):
            continue
        value, facts = computed
        if any(not c.negated and estimated(facts, c.value, stated[(metric, statement)]) for c in group):
            continue  # naming what the value also estimates among other values, the text agrees with it (`allows`)
        evidence, related = code_evidence(facts)
        for claim in group:
            if (
                claim.negated == (claim.value == value)
                and not known.alike_values(facet, claim.value, value)
                and not estimated(facts, claim.value, stated[(metric, statement)])
            ):
                yield claim_finding(ML006, claim, facet, value, evidence, related)
    for metric, entry in registry.metrics.items() if registry is not None else ():
        for facet, setting in entry.semantics.items():
            held = default_placeholder(corpus, metric, facet)
            if held is not None:
                yield _registry_finding(setting, metric, facet, *held)
                continue
            computed = computed_value(corpus, metric, facet)
            if (
                computed is not None
                and computed[0] != setting.value
                and not known.alike_values(facet, setting.value, computed[0])
                and not estimated(computed[1], setting.value)
            ):
                yield _registry_finding(setting, metric, facet, computed[0], *code_evidence(computed[1]))


def _placeholder_findings(group: list[Claim], metric: str, facet: str, held: tuple[str, str, tuple[Related, ...]]) -> Iterator[Finding]:
    """A text that states what the flagged path computes, and not the flag: on the default
    path it describes a constant. A negated claim ("not the maximum") is true of it."""
    for claim in group:
        if not claim.negated:
            yield claim_finding(ML006, claim, facet, *held)


def _registry_finding(setting: Setting, metric: str, facet: str, expected: str, evidence: str, related: tuple[Related, ...]) -> Finding:
    """A registry setting against what the code computes."""
    message = f"{metric}: registry says {facet}={setting.value}; {evidence}"
    return ML006.finding(
        setting.span,
        message,
        metric=metric,
        facet=facet,
        found=setting.value,
        expected=expected,
        source=SourceKind.REGISTRY,
        related=related,
        phrase=setting.text,
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
    code="ML006",
    name="code-contradiction",
    severity=Severity.ERROR,
    kind="contradiction",
    summary="A text or the registry states a facet value that the code computing the metric rules out.",
    why="The code is the ground truth a reader cannot check at a glance: `clip_grad_norm_` returns "
    "the norm before clipping, whatever a docstring says (miles #2132). The knowledge base in "
    "`rules/code/` says what known calls compute; metriclint follows the value to the metric.",
    fix="Reword the text (or the registry) to what the cited call computes. If the code is what is "
    "wrong, change the computation; the finding goes away with it.",
    check=code_contradictions,
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
