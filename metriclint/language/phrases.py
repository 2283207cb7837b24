"""Text to claims: find the facet phrases in a text and decide which way each one points.

Prose is matched with patterns compiled from the vocabulary (data), never with rules written
here for a particular facet. A phrase is read inside its noun phrase (`noun_phrase.py`), so "per
response token" is per-token. Negation is scoped: a cue counts only a few words before the
phrase and inside its clause, so "the raw norm, not the post-clip one" negates only "post-clip",
and not past a word that marks the phrase as the right value ("instead of the true minimum").
A list item is a sentence of its own. A reduction over the run's ranks ("averaged across ranks")
states their scope too. The words for all of this are data, `rules/reading/`.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial

from metriclint.base.builtin import word_lists
from metriclint.knowledge import reading_rules
from metriclint.knowledge.reading_rules import ReadingRules
from metriclint.knowledge.vocabulary import PhraseEntry, Vocabulary
from metriclint.language import noun_phrase
from metriclint.model import Reading

# A sentence ends at ".", "!" or "?" before a capital, or at the end of a line before a line
# that leads with a name and a colon ("weights.\nkl_mean: the mean KL"), and at a blank line.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*]|$)|(?<=[.!?])[ \t]*\n\s*(?=[A-Za-z_{][\w/{}.-]*:\s)|\n\s*\n")
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]—–]|\s-\s|(?<!\w)(?:but|however|whereas|while)(?!\w)", re.IGNORECASE)
_WORD = re.compile(r"[\w']+")
# What may come before a phrase that opens its sentence: nothing, or the name a definition
# defines and its colon (`kl_max: `, "**`rollout_is_mean`**: "), or a heading of up to three
# words that labels it as a name does ("Abs diff: ").
_LEAD = re.compile(r"[\s*_`'\"-]*(?:[\w/{}.-]+(?: [\w/{}.-]+){0,2}[*_`'\"]*\s*:\s*)?")
# The start of a command-line flag that a phrase is part of (`--use-rollout-entropy`): a name,
# whose words state nothing about the value.
_IN_FLAG = re.compile(r"(?<![\w-])--[\w-]*\Z")
# What follows a phrase joined with another (`Mean or max reward`): the opening phrase then
# names one of several, and the others, not opening, would be left unread.
_JOINED = re.compile(r"\s*(?:[,/&]|(?:and|or|nor)(?!\w))", re.IGNORECASE)
# "the current and the reference policy": the word before "and"/"or" shares the phrase's tail.
_COORDINATED = re.compile(r"(?<![\w-])([\w-]+)\s+(?:and|or|&)\s+(?:the\s+)?$", re.IGNORECASE)


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence boundaries, as (start, end) offsets; "e.g. this" and "1.5" do not split, a
    list item starts a sentence."""
    spans, start = [], 0
    for match in _sentence_end(reading_rules.builtin().list_item).finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


@lru_cache(maxsize=2)
def _sentence_end(list_item: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(f"{_SENTENCE_END.pattern}|{list_item.pattern}")


def ready(vocabulary: Vocabulary) -> None:
    """Build what `read` builds on its first text with a phrase: the vocabulary's patterns, the
    negation cues' and the reading rules. A run calls it before its workers fork."""
    vocabulary.compiled()
    _cue_pattern(vocabulary.negation_cues)
    reading_rules.builtin()


def read(text: str, vocabulary: Vocabulary, values: tuple[int, ...] = ()) -> list[Reading]:
    """Every facet phrase in `text`, in order, with its polarity settled. `values`: in a log
    message, the offsets right after the value it formats, where a unit symbol says its unit."""
    found = _phrase_readings(text, vocabulary)
    symbols = [r for r in map(partial(_symbol_after, text, vocabulary), values) if r is not None]
    if not symbols:
        return found
    return sorted(found + [r for r in symbols if not any(o.start < r.end and r.start < o.end for o in found)], key=lambda r: r.start)


def _symbol_after(text: str, vocabulary: Vocabulary, at: int) -> Reading | None:
    """`{t:.2f}s`, `{t} ms`: the unit symbol written right after a formatted value, which alone
    is too short to read as prose (rules/log_messages.yaml `value_units`)."""
    match = _value_units()[0].match(text, at)
    if match is None or "unit" not in vocabulary.facets:
        return None
    start = match.start(1)
    sentence = next((s for s in sentences(text) if s[0] <= start < s[1]), (0, len(text)))
    return Reading("unit", _value_units()[1][match.group(1)], False, start, match.end(1), sentence)


@lru_cache(maxsize=1)
def _value_units() -> tuple[re.Pattern[str], dict[str, str]]:
    units = {
        symbol: key.split(".", 1)[1]
        for key, symbols in word_lists("log_messages.yaml").items()
        if key.startswith("value_units.")
        for symbol in symbols
    }
    alternatives = "|".join(sorted(map(re.escape, units), key=len, reverse=True))
    return re.compile(rf" ?({alternatives})(?![\w/])"), units


def _phrase_readings(text: str, vocabulary: Vocabulary) -> list[Reading]:
    if not vocabulary.may_state(text):  # no phrase at all, or none in the text
        return []
    cue_pattern = _cue_pattern(vocabulary.negation_cues)
    rules = reading_rules.builtin()
    readings = []
    for sentence in sentences(text):
        in_sentence: list[Reading] = []
        for match in vocabulary.phrases(text, *sentence):
            entry = vocabulary.entry_of(match)
            if not entry.value or _IN_FLAG.search(text[max(sentence[0], match.start() - 80) : match.start()]):
                continue
            if entry.facet in rules.silenced_facets and _silenced(text, match, sentence[0], entry.facet, rules):
                continue
            opens = _LEAD.fullmatch(text, sentence[0], match.start()) is not None and not _JOINED.match(text, match.end())
            in_phrase = noun_phrase.stated(text, entry, match, _clause_end(text, match.end(), sentence[1]), vocabulary, rules, opens)
            if in_phrase is None:
                continue
            found = [(in_phrase[0], match.start(), in_phrase[1])]
            coordinated = _coordinated(text, sentence[0], match, vocabulary)
            if coordinated is not None and coordinated[0].facet == entry.facet:
                found.insert(0, coordinated)
            for stated, start, end in found:
                cue_start = _negation_cue(text, sentence[0], start, cue_pattern, vocabulary.reach, rules)
                value, negated = stated.value, cue_start is not None
                other = vocabulary.facets[stated.facet].other_value(value)
                if negated and other is not None:
                    value, negated = other, False
                in_sentence.append(Reading(stated.facet, value, negated, start if cue_start is None else cue_start, end, sentence))
        readings += _with_domains(text, in_sentence, rules)
    return readings


def _silenced(text: str, match: re.Match[str], start: int, facet: str, rules: ReadingRules) -> bool:
    """Whether words beside the phrase make it state nothing: a statistic held up against zero
    ("with a nonzero standard deviation", "whose std is non-zero"), the whole a part is taken of
    ("a fraction of the total dataset"): rules/reading/conditions.yaml and wholes.yaml."""
    before = text[max(start, match.start() - 30) : match.start()]
    return any(facet in silencer.facets and silencer.silences(before, text, match.end()) for silencer in rules.silencers)


def _with_domains(text: str, found: list[Reading], rules: ReadingRules) -> list[Reading]:
    """One sentence's readings, each reduction over the run's ranks followed by what that
    domain states besides ("averaged across ranks": scope=global), unless a phrase in the
    domain states it already ("summed across all ranks")."""
    readings = []
    for reading in found:
        readings.append(reading)
        domain = _ranks_domain(text, reading, rules)
        if domain is None:
            continue
        for facet, value in rules.over_ranks_states:
            if not any(r.facet == facet and r.start < domain[1] and domain[0] < r.end for r in found):
                readings.append(Reading(facet, value, False, *domain, reading.sentence))
    return readings


def _ranks_domain(text: str, reading: Reading, rules: ReadingRules) -> tuple[int, int] | None:
    """Where the ranks a reduction is taken over are named right after it, in its clause."""
    if reading.negated or (reading.facet, reading.value) not in rules.over_ranks_after:
        return None
    domain = rules.over_ranks.match(text, reading.end, _clause_end(text, reading.end, reading.sentence[1]))
    if domain is None:
        return None
    phrase = text[reading.start : reading.end].split()
    if domain.group("preposition") is None and phrase[-1].lower() not in rules.over_ranks_prepositions:
        return None
    words = domain.group()
    return domain.start() + len(words) - len(words.lstrip()), domain.end()


def _coordinated(text: str, floor: int, match: re.Match[str], vocabulary: Vocabulary) -> tuple[PhraseEntry, int, int] | None:
    """The elided phrase in "before and after clipping": "before" + the tail "clipping"."""
    words = match.group().split(maxsplit=1)
    if len(words) < 2:
        return None
    head = _COORDINATED.search(text, max(floor, match.start() - 40), match.start())
    if head is None:
        return None
    entry = vocabulary.lookup(f"{head.group(1)} {words[1]}")
    return (entry, head.start(1), head.end(1)) if entry is not None and entry.value else None


@lru_cache(maxsize=8)
def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str] | None:
    if not cues:
        return None
    alternatives = "|".join(r"\s+".join(map(re.escape, cue.split())) for cue in sorted(cues, key=len, reverse=True))
    return re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)


def clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The clauses of `text[start:end]`, as they bound a negation's scope."""
    found, at = [], start
    for brk in _CLAUSE_BREAK.finditer(text, start, end):
        found.append((at, brk.start()))
        at = brk.end()
    return [*found, (at, end)]


def _clause_end(text: str, start: int, end: int) -> int:
    brk = _CLAUSE_BREAK.search(text, start, end)
    return end if brk is None else brk.start()


def _negation_cue(text: str, floor: int, start: int, cues: re.Pattern[str] | None, reach: int, rules: ReadingRules) -> int | None:
    """Offset of the cue that negates the phrase starting at `start`, or None."""
    if cues is None:
        return None
    clause_start = floor
    for brk in _CLAUSE_BREAK.finditer(text, floor, start):
        clause_start = brk.end()
    found = list(cues.finditer(text, clause_start, start))
    last = found[-1] if found else None  # the cue nearest the phrase governs it
    if last is None or len(_WORD.findall(text, last.end(), start)) >= reach:
        return None
    if rules.referent.search(text, last.end(), start):
        return None  # "instead of the true minimum": the phrase is the right value
    return last.start()
