"""ML002 source-contradiction: texts state different values for a facet that the registry
does not settle. Grouped per metric and facet: each text that dissents from the majority is one
finding against it; with no majority, one finding lists every side. A logged key's own name is
one more side where it states a facet names are sure of (rules/names.yaml `against_texts`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from textwrap import dedent
from typing import Iterator

from metriclint.base import keys
from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.checks.statements import by_statement, statements
from metriclint.knowledge.code_knowledge import knowledge
from metriclint.knowledge.names import against_texts
from metriclint.model import Claim, Finding, NameClaim, Related, Severity, SourceKind, Span


def source_contradictions(corpus: Corpus) -> Iterator[Finding]:
    """One finding per text that dissents from the majority of the texts about a metric and
    facet, or, where no side has a majority, one finding that lists every side: a misread
    text shows up once, not once for every text it disagrees with."""
    registry = corpus.registry
    unsettled = tuple(c for c in corpus.claims if registry is None or registry.setting(c.metric, c.facet) is None)
    stated = statements(unsettled)
    sides = [side for key, claims in by_statement(unsettled).items() if (side := _side(key, claims, stated)) is not None]
    names = [n for n in corpus.names if n.own and n.outright and n.facet in against_texts() and _unsettled(corpus, n.metric, n.facet)]
    for family in _families(sides + _named(names)):
        yield from _disagreements(family)


@dataclass(frozen=True)
class TextStance:
    """What one text states about a metric's facet: the values it asserts and does not deny."""

    metric: str
    facet: str
    statement: Span  # the whole text
    values: tuple[str, ...]  # in the order the text states them
    claim: Claim  # the first claim stating one of them: where a finding points, what it quotes
    stated: frozenset[str] = frozenset()  # everything the text states of the metric, as `facet=value`
    restated: tuple[tuple[str, frozenset[str]], ...] = ()  # a name's: a value a text may state with these

    def shown(self) -> str:
        return " and ".join(self.values)

    @property
    def named(self) -> bool:
        return self.claim.source == SourceKind.NAME


def _side(key: tuple[str, str, Span], claims: list[Claim], stated: dict[tuple[str, Span], frozenset[str]]) -> TextStance | None:
    """None for a text that only denies values, or asserts and denies the same one ("the
    minimum over ranks, not the minimum per rank"): it takes no side."""
    denied = {c.value for c in claims if c.negated}
    stating = [c for c in claims if not c.negated and c.value not in denied]
    if not stating:
        return None
    values = tuple(dict.fromkeys(c.value for c in stating))
    return TextStance(key[0], key[1], key[2], values, stating[0], stated.get((key[0], key[2]), frozenset()))


def _unsettled(corpus: Corpus, metric: str, facet: str) -> bool:
    """Whether neither the registry nor the code says a facet of a metric: where one does, the
    texts are held against it (ML001, ML006) and so is the name (ML007)."""
    registry = corpus.registry
    return (registry is None or registry.setting(metric, facet) is None) and not corpus.code_facts(metric, facet)


def _named(names: list[NameClaim]) -> list[TextStance]:
    """The sides logged keys' own names take: one per metric, facet and what the name states,
    at its first use. A loosely used part (`gb`, also written for GiB) states each of its values."""
    sides: dict[tuple[str, str, tuple[str, ...]], TextStance] = {}
    for name in sorted(names, key=lambda n: n.span):
        values = (name.value, *name.also)
        if (name.metric, name.facet, values) not in sides:
            claim = Claim(name.metric, name.facet, name.value, False, name.name, name.span, SourceKind.NAME, name.span)
            restated = _restated(name.facet, name.value)
            sides[(name.metric, name.facet, values)] = TextStance(name.metric, name.facet, name.span, values, claim, restated=restated)
    return list(sides.values())


def _restated(facet: str, value: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """What a text may state of a name's value in other words, and what else it then states
    (rules/code/ranks.yaml: one device's share is the mean over the devices, so "averaged over
    all GPUs" says what `tokens_per_gpu` and `tokens_per_rank` say)."""
    known = knowledge()
    kind = known.alike_kind(facet, value)
    return tuple(
        (also, frozenset(f"{f}={v}" for f, v in derivation.also_with))
        for derivations in known.derivations.values()
        for derivation in derivations
        if derivation.also_with and any(f == facet and known.alike_kind(f, v) == kind for f, v in derivation.gives)
        for also_facet, also in derivation.also
        if also_facet == facet
    )


def _families(sides: list[TextStance]) -> Iterator[list[TextStance]]:
    """The sides about one facet of one metric, where templates join the keys that can name
    the same series. Metric names are compared with each other, not texts with texts, and
    each only with the names that can match it (`keys.KeySet`)."""
    by_facet: dict[str, dict[str, list[TextStance]]] = defaultdict(lambda: defaultdict(list))
    for side in sides:
        by_facet[side.facet][side.metric].append(side)
    for facet in sorted(by_facet):
        metrics = sorted(by_facet[facet])
        index = keys.KeySet(metrics)
        family = {metric: metric for metric in metrics}
        for metric in metrics:
            for other in index.same_metric(metric):
                family[_root(family, other)] = _root(family, metric)
        members: dict[str, list[TextStance]] = defaultdict(list)
        for metric in metrics:
            members[_root(family, metric)].extend(by_facet[facet][metric])
        for group in members.values():
            yield sorted(group, key=lambda side: (side.statement, side.metric))


def _root(family: dict[str, str], metric: str) -> str:
    while family[metric] != metric:
        family[metric] = family[family[metric]]  # halve the path: later look-ups stay short
        metric = family[metric]
    return metric


def _conflict(a: TextStance, b: TextStance) -> bool:
    """Two texts disagree when neither leaves room for what the other states: a text naming
    several values ("the current and the reference policy") agrees with any one of them."""
    if a.statement == b.statement or not keys.same_metric(a.metric, b.metric):
        return False
    if a.statement.path == b.statement.path and a.metric != b.metric and a.claim.source == b.claim.source == SourceKind.TOOLTIP:
        return False  # one table gives two keys two texts by design, not by contradiction
    if a.statement.path != b.statement.path and a.claim.source == b.claim.source == SourceKind.DOC:
        # each page documents its own part (a trainer's logged metrics, an algorithm's): the SFT
        # page's "cross-entropy loss" and the DPO page's "DPO loss" are both right for `loss`
        return False
    if a.named or b.named:
        return _against_name(*((a, b) if a.named else (b, a)))
    return _incomparable(_kinds(a), _kinds(b))


def _against_name(name: TextStance, text: TextStance) -> bool:
    """A text disagrees with a key's own name unless it states one of the name's values, its
    loose name (GB for GiB: ML008's), or may say the same number in other words: "across all
    GPUs" of `tokens_per_gpu` may be the mean over the GPUs unless the text states another
    reduction. A unit is held against a unit of the same measure only (seconds against
    milliseconds, not the 30 seconds a `tokens_per_sec` is measured over). Two names are never
    sides against each other."""
    if text.named:
        return False
    known = knowledge()
    pairs = [(stated, value) for stated in text.values for value in name.values]
    if any(known.loose(name.facet, *pair) for pair in pairs) or not all(known.convertible(name.facet, *pair) for pair in pairs):
        return False
    restated = frozenset(also for also, needs in name.restated if all(_leaves_room(text.stated, need) for need in needs))
    return _incomparable(_kinds(name) | frozenset(known.alike_kind(name.facet, v) for v in restated), _kinds(text))


def _leaves_room(stated: frozenset[str], need: str) -> bool:
    """Whether a text that states `stated` states `need` (`facet=value`) or nothing of its facet."""
    facet = need.split("=", 1)[0] + "="
    return need in stated or not any(s.startswith(facet) for s in stated)


def _kinds(side: TextStance) -> frozenset[str]:
    """The values a text states, those one may state for another (rules/code/ranks.yaml
    `alike`) as one: "per GPU" and "per rank" say the same where one rank drives one device."""
    return frozenset(knowledge().alike_kind(side.facet, value) for value in side.values)


def _incomparable(a: frozenset[str], b: frozenset[str]) -> bool:
    return not a <= b and not b <= a


def _disagreements(family: list[TextStance]) -> Iterator[Finding]:
    involved = _involved(family)
    if not involved:
        return
    (top, count), *_ = Counter(frozenset(side.values) for side in involved).most_common(1)
    if 2 * count <= len(involved):
        first = next((side for side in involved if not side.named), involved[0])  # a text, not a name it is held against
        yield _finding(first, [side for side in involved if side is not first])
        return
    majority = [side for side in involved if frozenset(side.values) == top]
    for side in involved:
        if frozenset(side.values) == top:
            continue  # it states what the majority states: it disagrees with none of them
        against = [m for m in majority if _conflict(side, m)]
        if against:
            yield _finding(side, against)


def _involved(family: list[TextStance]) -> list[TextStance]:
    """The sides that disagree with another, in family order. Thousands of texts may state
    the same about one metric, so a side is compared only with the sides that state values
    it leaves no room for, about a metric that can be its own (`keys.KeySet`); the first of
    them it conflicts with settles it (it may not when both are one text, or entries of one
    tooltip table)."""
    by_values: dict[frozenset[str], dict[str, list[TextStance]]] = defaultdict(lambda: defaultdict(list))
    for side in family:
        by_values[frozenset(side.values)][side.metric].append(side)
    indexes = {values: keys.KeySet(metrics) for values, metrics in by_values.items()}

    def rivals(side: TextStance) -> Iterator[TextStance]:
        for values, index in indexes.items():
            if _incomparable(values, frozenset(side.values)):
                for metric in index.same_metric(side.metric):
                    yield from by_values[values][metric]

    return [side for side in family if any(_conflict(side, other) for other in rivals(side))]


def _finding(side: TextStance, others: list[TextStance]) -> Finding:
    """`side` against `others`, which are grouped by what they state, so no two groups in the
    message state the same values."""
    groups: dict[frozenset[str], list[TextStance]] = defaultdict(list)
    for other in others:
        groups[frozenset(other.values)].append(other)
    parts = [_group(members, also=key == frozenset(side.values)) for key, members in groups.items()]
    message = f'{side.metric}: {side.claim.source} says {side.facet}={side.shown()} ("{side.claim.phrase}"); ' + "; ".join(parts)
    expected = ", ".join(members[0].shown() for key, members in groups.items() if key != frozenset(side.values))
    related = tuple(Related(other.claim.span, other.claim.phrase) for other in others)
    return ML002.finding(
        side.claim.span,
        message,
        metric=side.metric,
        facet=side.facet,
        found=side.shown(),
        expected=expected,
        source=side.claim.source,
        related=related,
        phrase=side.claim.phrase,
    )


def _group(members: list[TextStance], also: bool) -> str:
    """`comment at a.py:3 says before ("pre-clip")`, or `2 texts say before: ...`."""
    verb = ("also " if also else "") + ("says" if len(members) == 1 else "say")
    first = members[0]
    if len(members) == 1:
        return f'{first.claim.source} at {_place(first)} {verb} {first.shown()} ("{first.claim.phrase}")'
    listed = ", ".join(f'{m.claim.source} at {_place(m)} ("{m.claim.phrase}")' for m in members)
    return f"{len(members)} texts {verb} {first.shown()}: {listed}"


def _place(side: TextStance) -> str:
    return f"{side.claim.span.path}:{side.claim.span.line}"


# A docstring and a comment on one key: the comment says `pre-clip` whatever the docstring says.
_ONE_COMMENT = dedent('''\
    def log(norm):
        """Args:
            norm: Norm {side} clipping.
        """
        m = {{"train/grad_norm": norm}}  # pre-clip
''')
# Three texts say before clipping; the fourth comment ends the file, each example its own way.
_THREE_SAY_BEFORE = dedent('''\
    def log(norm):
        """Args:
            norm: Norm before clipping.
        """
        a = {"train/grad_norm": norm}  # pre-clip
        b = {"train/grad_norm": norm}  # unclipped
        c = {"train/grad_norm": norm}  # ''')
# A comment on a key whose name states its unit.
_NAMED = dedent("""\
    def log(tracker, step_time):
        # perf/step_time_ms: wall time of one step, in {unit}
        tracker.log({{"perf/step_time_ms": step_time}})
""")

ML002 = Rule(
    code="ML002",
    name="source-contradiction",
    severity=Severity.ERROR,
    kind="contradiction",
    summary="Texts state different values for a facet that the registry does not settle: each text "
    "against the majority, or one finding listing every side when there is none.",
    why="When a docstring and a dashboard disagree, at least one of them is wrong, and nothing tells the reader which. "
    "A logged key's own name that states a unit (`step_time_ms`) or a scope (`tokens_per_gpu`) is one more side "
    "where neither the registry nor the code says the facet: a comment calling `step_time_ms` seconds is wrong, or the name is. "
    "Two Markdown pages are not held against each other: each documents its own part (the SFT trainer's page calls "
    "`loss` a cross-entropy, the DPO trainer's a preference loss, and both are right); each is against every other kind of text.",
    fix="Decide which is right, fix the other, and record the answer in the registry so the next change is checked against it.",
    check=source_contradictions,
    good=(
        Example({"train.py": _ONE_COMMENT.format(side="before")}),
        Example({"train.py": _THREE_SAY_BEFORE + "logged before and after clipping\n"}),
        Example({"train.py": _NAMED.format(unit="milliseconds")}),
    ),
    bad=(
        Example(
            {"train.py": _ONE_COMMENT.format(side="after")},
            None,
            ("ML002 train.py:3",),
        ),
        Example(
            {"train.py": _THREE_SAY_BEFORE + "post-clip\n"},
            None,
            ("ML002 train.py:7",),  # one finding, at the one text against three, not three pairs
        ),
        Example({"train.py": _NAMED.format(unit="seconds")}, None, ("ML002 train.py:2",)),
    ),
)
