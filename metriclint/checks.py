"""The rules: what each code finds, why it matters, and examples that the tests run.

Each rule is one `Rule` value holding its check function, its documentation and its good and
bad examples (tiny projects), the way Fixit rules carry VALID/INVALID cases. Documentation and
behaviour live in one place, so they cannot drift apart.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations, product
from typing import Callable, Iterator

from metriclint import keys
from metriclint.inventory import names_a_metric
from metriclint.model import Claim, CodeClaim, CodeFact, Finding, Related, Severity, Sighting, Span
from metriclint.registry import Registry
from metriclint.rewording import fix_for
from metriclint.tooltips import Mismatch, advice
from metriclint.vocabulary import Vocabulary


@dataclass(frozen=True, slots=True)
class Unreadable:
    span: Span
    message: str


@dataclass(frozen=True)
class Corpus:
    """Everything the checks look at, gathered by the pipeline before any check runs."""

    claims: tuple[Claim, ...]
    registry: Registry | None
    unreadable: tuple[Unreadable, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()  # tooltip entries shown for a metric they were not written for
    sightings: tuple[Sighting, ...] = ()  # the inventory (inventory.py), sorted by place
    vocabulary: Vocabulary | None = None  # the wording `fix` rewrites to; None: findings carry no fix
    code: tuple[CodeClaim, ...] = ()  # what the code computes, with the computing sites


@dataclass(frozen=True)
class Example:
    """A tiny project: `files` maps paths to contents; `expect` lists `CODE path:line` lines."""

    files: dict[str, str]
    registry: str | None = None
    expect: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    why: str
    fix: str
    check: Callable[[Corpus], Iterator[Finding]] | None  # None: a later pipeline stage reports it
    good: tuple[Example, ...] = field(default=())
    bad: tuple[Example, ...] = field(default=())
    by_comment: bool = True  # whether a suppression comment can silence it

    @property
    def silencing(self) -> str:
        if not self.by_comment:
            return (
                f'Switch it off for some files with `per-file-ignores = {{"glob" = ["{self.code}"]}}`, or '
                f'everywhere with `ignore = ["{self.code}"]`, in [tool.metriclint].'
            )
        return (
            f"Silence one finding with `# metriclint: ignore[{self.code}] reason` on its line (`//` in "
            f"JS/TS, `<!-- -->` in Markdown), a whole file with `ignore-file[{self.code}]`, or the rule with "
            f'`ignore = ["{self.code}"]` in [tool.metriclint].'
        )

    def finding(self, span: Span, message: str, **details: object) -> Finding:
        return Finding(self.code, self.name, self.severity, span, message, **details)  # type: ignore[arg-type]


def _found(claim: Claim) -> str:
    return f"not {claim.value}" if claim.negated else claim.value


def _by_statement(claims: tuple[Claim, ...]) -> dict[tuple[str, str, Span], list[Claim]]:
    groups: dict[tuple[str, str, Span], list[Claim]] = defaultdict(list)
    for claim in claims:
        groups[(claim.metric, claim.facet, claim.statement)].append(claim)
    return groups


def _allows(values: list[Claim], value: str) -> bool:
    """Whether one text's claims leave room for `value`: a text naming several values of a
    facet ("the current and the reference policy") agrees with any one of them."""
    positive = {c.value for c in values if not c.negated}
    negated = {c.value for c in values if c.negated}
    return value not in negated and (not positive or value in positive)


def registry_contradictions(corpus: Corpus) -> Iterator[Finding]:
    if corpus.registry is None:
        return
    for (metric, facet, _), group in _by_statement(corpus.claims).items():
        setting = corpus.registry.setting(metric, facet)
        if setting is None or _allows(group, setting.value):
            continue
        for claim in group:
            if claim.negated == (claim.value == setting.value):
                message = (
                    f'{metric}: {claim.source} says {facet}={_found(claim)} ("{claim.phrase}"); '
                    f"registry says {setting.value} ({setting.span.path}:{setting.span.line})"
                )
                yield ML001.finding(
                    claim.span, message, metric=metric, facet=facet, found=_found(claim),
                    expected=setting.value, source=claim.source, related=(Related(setting.span, setting.text),),
                    phrase=claim.phrase,
                    fix=fix_for(claim, group, setting.value, corpus.vocabulary) if corpus.vocabulary else None,
                )


def source_contradictions(corpus: Corpus) -> Iterator[Finding]:
    registry = corpus.registry
    unsettled = [c for c in corpus.claims if registry is None or registry.setting(c.metric, c.facet) is None]
    for (metric_a, span_a, a), (metric_b, span_b, b) in _comparable_pairs(_by_statement(tuple(unsettled))):
        if span_a.path == span_b.path and metric_a != metric_b and _tooltip(a) and _tooltip(b):
            continue  # one table gives two keys two texts by design, not by contradiction
        left = next((c for c in a if not _allows(b, c.value) and not c.negated), None)
        right = next((c for c in b if not _allows(a, c.value) and not c.negated), None)
        if left is None or right is None:
            continue
        facet = left.facet
        message = (
            f'{metric_a}: {left.source} says {facet}={left.value} ("{left.phrase}"); '
            f'{right.source} at {right.span.path}:{right.span.line} says {right.value} ("{right.phrase}")'
        )
        yield ML002.finding(
            left.span, message, metric=metric_a, facet=facet, found=left.value, expected=right.value,
            source=left.source, related=(Related(right.span, right.phrase),), phrase=left.phrase,
        )


Statement = tuple[str, Span, list[Claim]]  # metric, the text's span, its claims on one facet


def _comparable_pairs(groups: dict[tuple[str, str, Span], list[Claim]]) -> Iterator[tuple[Statement, Statement]]:
    """Pairs of different texts about the same metric and facet, the earlier text first.

    Metric names are compared with each other (templates can name the same series), not every
    text with every other, so the work grows with the pairs that matter, not with the square
    of all the texts in a large tree.
    """
    by_facet: dict[str, dict[str, list[Statement]]] = defaultdict(lambda: defaultdict(list))
    for (metric, facet, statement), claims in groups.items():
        by_facet[facet][metric].append((metric, statement, claims))
    for facet in sorted(by_facet):
        metrics = sorted(by_facet[facet])
        for i, metric_a in enumerate(metrics):
            for metric_b in metrics[i:]:
                if not keys.same_metric(metric_a, metric_b):
                    continue
                texts_a, texts_b = by_facet[facet][metric_a], by_facet[facet][metric_b]
                pairs = combinations(texts_a, 2) if metric_a == metric_b else product(texts_a, texts_b)
                for a, b in pairs:
                    if a[1] != b[1]:
                        yield (a, b) if (a[1], a[0]) < (b[1], b[0]) else (b, a)


def _tooltip(claims: list[Claim]) -> bool:
    return claims[0].source == "tooltip"


def tooltip_mismatches(corpus: Corpus) -> Iterator[Finding]:
    for item in corpus.mismatches:
        entry = item.entry
        message = (
            f"{item.key} shows the tooltip written for {item.owner} (entry '{entry.pattern}', {item.binding.match} match); "
            f"{advice(item)}"
        )
        yield ML003.finding(
            entry.span, message, metric=item.key, source="tooltip", phrase=entry.pattern,
            related=(Related(item.owner_span, item.owner), Related(entry.text.span(0, len(entry.text.text)), entry.text.text)),
        )


_SEEN_AS = {"code": "logged"}
_MORE_PLACES = 3  # other places quoted in `related`; the message gives the full count


def _seen(sighting: Sighting) -> str:
    return f"{_SEEN_AS.get(sighting.source, sighting.source + ' names it')} as '{sighting.name}'"


def unregistered_metrics(corpus: Corpus) -> Iterator[Finding]:
    registry = corpus.registry
    if registry is None:
        return
    places: dict[tuple[str, ...], list[Sighting]] = defaultdict(list)
    lines: set[tuple[tuple[str, ...], str, int]] = set()  # one place per line: a row's cells are one
    for sighting in corpus.sightings:
        if names_a_metric(sighting) and not any(m in registry.metrics for m in sighting.metrics):
            metrics = sighting.metrics or (sighting.name,)
            if (metrics, sighting.span.path, sighting.span.line) not in lines:
                lines.add((metrics, sighting.span.path, sighting.span.line))
                places[metrics].append(sighting)
    for metrics, group in places.items():
        group.sort(key=lambda s: (s.source != "code", s.span))  # report where the code logs it
        first, others = group[0], group[1:]
        more = f" (and {len(others)} more place{'s' if len(others) > 1 else ''})" if others else ""
        message = (
            f"{metrics[0]}: {_seen(first)}{more}, but no registry key, template or alias covers it; "
            f"add it to {registry.path}"
        )
        related = tuple(Related(s.span, _seen(s)) for s in others[:_MORE_PLACES])
        yield ML004.finding(first.span, message, metric=metrics[0], source=first.source, related=related, phrase=first.name)


def stale_registry_entries(corpus: Corpus) -> Iterator[Finding]:
    if corpus.registry is None:
        return
    # A tooltip pattern reaches registry keys too: only a written name shows the metric exists.
    seen = {metric for s in corpus.sightings if not s.inferred for metric in s.metrics}
    for key, entry in corpus.registry.metrics.items():
        if key not in seen:
            message = f"{key}: registered, but no checked file logs or mentions it; remove it or correct its key"
            yield ML005.finding(entry.span, message, metric=key, source="registry", related=(Related(entry.span, key),), phrase=key)


def _computed(corpus: Corpus, metric: str, facet: str) -> tuple[str, list[CodeFact]] | None:
    """The one value the code computes for a metric's facet, with every computing site; None
    when the code says nothing, or computes different values on different paths."""
    facts = {c.fact: None for c in corpus.code if c.fact.facet == facet and keys.same_metric(c.metric, metric)}
    values = {fact.value for fact in facts}
    if len(values) != 1:
        return None
    return values.pop(), sorted(facts, key=lambda f: (f.span, f.origin))


def _evidence(facts: list[CodeFact]) -> tuple[str, tuple[Related, ...]]:
    sites = "; and from ".join(f"{f.origin} ({f.span.path}:{f.span.line}), which {f.says}" for f in facts)
    return f"the value comes from {sites}", tuple(Related(f.span, f"{f.origin}: {f.says}") for f in facts)


def code_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """Texts and registry settings against what the code computes. A text that the registry
    already contradicts with the code's own value is left to ML001: one phrase, one finding."""
    registry = corpus.registry
    for (metric, facet, _), group in _by_statement(corpus.claims).items():
        computed = _computed(corpus, metric, facet)
        setting = registry.setting(metric, facet) if registry is not None else None
        if computed is None or _allows(group, computed[0]) or (setting is not None and setting.value == computed[0]):
            continue
        value, facts = computed
        evidence, related = _evidence(facts)
        for claim in group:
            if claim.negated == (claim.value == value):
                message = f'{metric}: {claim.source} says {facet}={_found(claim)} ("{claim.phrase}"); {evidence}'
                yield ML006.finding(
                    claim.span, message, metric=metric, facet=facet, found=_found(claim), expected=value,
                    source=claim.source, related=related, phrase=claim.phrase,
                )
    for metric, entry in (registry.metrics.items() if registry is not None else ()):
        for facet, setting in entry.semantics.items():
            computed = _computed(corpus, metric, facet)
            if computed is not None and computed[0] != setting.value:
                evidence, related = _evidence(computed[1])
                message = f"{metric}: registry says {facet}={setting.value}; {evidence}"
                yield ML006.finding(
                    setting.span, message, metric=metric, facet=facet, found=setting.value, expected=computed[0],
                    source="registry", related=related, phrase=setting.text,
                )


def unreadable_sources(corpus: Corpus) -> Iterator[Finding]:
    for item in corpus.unreadable:
        yield ML900.finding(item.span, item.message, phrase=item.message)


_REGISTRY = """version: 1
metrics:
  train/grad_norm:
    aliases: [grad_norm]
    semantics:
      clipping: before
"""

ML001 = Rule(
    "ML001",
    "registry-contradiction",
    Severity.ERROR,
    "A text states a facet value that the registry contradicts.",
    "Readers trust docstrings and tooltips. When one says a value the registry rules out, "
    "someone will read the metric wrongly (miles #2132: a norm documented as after clipping "
    "was the norm before clipping, so nobody saw that clipping fired every step).",
    "Reword the text to the registry's value, or fix the registry if the text is right.",
    registry_contradictions,
    good=(
        Example({"train.py": 'def log(grad_norm):\n    """Log it.\n\n    Args:\n        grad_norm: Norm before clipping.\n    """\n'}, _REGISTRY),
        Example({"train.py": 'def log(grad_norm):\n    """Args:\n        grad_norm: Never the clipped value.\n    """\n'}, _REGISTRY),
    ),
    bad=(
        Example(
            {"train.py": 'def log(grad_norm):\n    """Log it.\n\n    Args:\n        grad_norm: Norm after clipping.\n    """\n'},
            _REGISTRY,
            ("ML001 train.py:5",),
        ),
    ),
)

ML002 = Rule(
    "ML002",
    "source-contradiction",
    Severity.ERROR,
    "Two texts state different values for a facet that the registry does not settle.",
    "When a docstring and a dashboard disagree, at least one of them is wrong, and nothing "
    "tells the reader which.",
    "Decide which is right, fix the other, and record the answer in the registry so the "
    "next change is checked against it.",
    source_contradictions,
    good=(
        Example({"train.py": 'def log(norm):\n    """Args:\n        norm: Norm before clipping.\n    """\n    m = {"train/grad_norm": norm}  # pre-clip\n'}),
    ),
    bad=(
        Example(
            {"train.py": 'def log(norm):\n    """Args:\n        norm: Norm after clipping.\n    """\n    m = {"train/grad_norm": norm}  # pre-clip\n'},
            None,
            ("ML002 train.py:3",),
        ),
    ),
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

ML900 = Rule(
    "ML900",
    "unparsable-source",
    Severity.WARNING,
    "A file could not be read, decoded or parsed; the rest of the run went on.",
    "Whatever the file says about metrics was not checked.",
    "Fix the syntax or encoding, or exclude the file in `[tool.metriclint] exclude`.",
    unreadable_sources,
    good=(Example({"ok.py": "x = 1\n"}),),
    bad=(Example({"broken.py": "def f(:\n    pass\n"}, None, ("ML900 broken.py:1",)),),
    by_comment=False,  # a file that cannot be parsed yields no comments
)

_DOC = 'def log(grad_norm):\n    """Args:\n        grad_norm: Norm {value} clipping.\n    """  {comment}\n'

ML010 = Rule(
    "ML010",
    "unused-suppression",
    Severity.WARNING,
    "A `metriclint: ignore[...]` comment silences nothing.",
    "A suppression outlives the finding it was written for; left in place, it would silence "
    "the next real contradiction on that line without anyone deciding to.",
    "Remove the stale code from the comment, or the whole comment when no code is left.",
    None,  # metriclint.suppress reports it, after every other rule has run
    good=(
        Example(
            {"train.py": _DOC.format(value="after", comment="# metriclint: ignore[ML001] legacy wording")},
            _REGISTRY,
        ),
    ),
    bad=(
        Example(
            {"train.py": _DOC.format(value="before", comment="# metriclint: ignore[ML001]")},
            _REGISTRY,
            ("ML010 train.py:4",),
        ),
    ),
    by_comment=False,  # it reports the comments themselves
)


_TABLE = """// Hover texts, matched by substring against the key after its category.
export const DESCRIPTIONS = [
  ["value", "value-head estimate"],
  ["value_loss", "critic regression loss"],
];
"""
_LOGGED = 'def log(tracker, v, loss):\n    tracker.log({"train/value": v, "train/value_loss": loss})\n'
_CONFIG = '[tool.metriclint]\n[[tool.metriclint.tooltips]]\npath = "ui/*.js"\ntable = "DESCRIPTIONS"\nmatch = "substring"\nstrip_prefix = true\n'

ML003 = Rule(
    "ML003",
    "tooltip-mismatch",
    Severity.ERROR,
    "The tooltip a dashboard shows for a metric was written for another metric.",
    "Pattern tables match loosely: with first-substring matching, `value` listed before "
    "`value_loss` gives `train/value_loss` the text written for `train/value`, and the reader "
    "of that chart is told what another chart means.",
    "Add a more specific entry for the key (before the generic one when the first match "
    "wins), or make the generic entry's text true of every key it reaches.",
    tooltip_mismatches,
    good=(
        Example({
            "pyproject.toml": _CONFIG, "train.py": _LOGGED,
            "ui/metrics.js": 'export const DESCRIPTIONS = [\n  ["value_loss", "critic regression loss"],\n  ["value", "value-head estimate"],\n];\n',
        }),
    ),
    bad=(
        Example({"pyproject.toml": _CONFIG, "train.py": _LOGGED, "ui/metrics.js": _TABLE}, None, ("ML003 ui/metrics.js:3",)),
    ),
)


_WANDB = 'def log(total):\n    wandb.log({"train/grad_norm": total})\n'

ML004 = Rule(
    "ML004",
    "unregistered-metric",
    Severity.WARNING,
    "A key the code logs, or a docs page or tooltip names, that no registry key, template or alias covers.",
    "Nothing is checked for a metric the registry does not know: its texts can contradict each "
    "other on any facet the registry would have settled, and readers find no one definition.",
    "Add the key (or a `{name}` template covering it) to the registry with a description and "
    "its semantics, or an alias if it is another name of a registered metric.",
    unregistered_metrics,
    good=(
        Example({"train.py": _WANDB}, _REGISTRY),
        Example({"train.py": _WANDB + 'wandb.log({f"eval/{task}/accuracy": 0.5})\n'}, _REGISTRY + "  eval/{task}/accuracy: {}\n"),
        Example({"docs/metrics.md": "| Metric | Meaning |\n|---|---|\n| `grad_norm` | norm before clipping |\n"}, _REGISTRY),
        # A list of options is not an inventory: unknown names count only where the page is about metrics.
        Example({"train.py": _WANDB, "docs/flags.md": "## Options\n\n- `timeout`: seconds to wait\n"}, _REGISTRY),
    ),
    bad=(
        Example({"train.py": _WANDB + 'wandb.log({"train/loss": 0.1})\n'}, _REGISTRY, ("ML004 train.py:3",)),
        Example(
            {"train.py": _WANDB, "docs/metrics.md": "## Metrics\n\n- `train/grad_norm`: norm before clipping\n- `eval/accuracy`: solved\n"},
            _REGISTRY,
            ("ML004 docs/metrics.md:4",),
        ),
    ),
)

ML005 = Rule(
    "ML005",
    "stale-registry-entry",
    Severity.WARNING,
    "A registry metric that no checked file logs or mentions.",
    "A renamed or removed metric leaves its entry behind: the registry then describes a metric "
    "nobody can see, and the real one goes unchecked.",
    "Remove the entry, or correct its key to the one the code logs now (keep the old one as an "
    "alias if dashboards still use it). Run the check on the whole project: a partial run sees "
    "only part of the inventory.",
    stale_registry_entries,
    good=(
        Example({"train.py": _WANDB}, _REGISTRY),
        Example({"docs/metrics.md": "## `grad_norm`\n\nThe norm before clipping.\n"}, _REGISTRY),
    ),
    bad=(
        Example({"train.py": 'wandb.log({"train/gradient_norm": 1.0})\n'}, _REGISTRY, ("ML005 metrics.yaml:3",)),
        # A tooltip pattern that would match the key if it were logged does not mention it.
        Example(
            {"pyproject.toml": _CONFIG, "ui/metrics.js": 'export const DESCRIPTIONS = [\n  ["grad_norm", "norm before clipping"],\n];\n'},
            _REGISTRY,
            ("ML005 metrics.yaml:3",),
        ),
    ),
    by_comment=False,  # it reports a registry line, and the registry's comments are not read
)


RULES: tuple[Rule, ...] = (ML001, ML002, ML003, ML004, ML005, ML006, ML010, ML900)
