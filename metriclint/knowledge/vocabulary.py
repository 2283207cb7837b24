"""Facet vocabularies: which phrases state which value of which facet.

The vocabulary is data (`rules/facets/*.yaml`, `rules/negation.yaml`, and the registry's own
`facets:` section); this module only loads, validates and compiles it into one pattern.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterator

from metriclint.base import marked_yaml, patterns
from metriclint.base.builtin import rules_dir
from metriclint.base.files import read_text
from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.model import ConfigError, Problem

SEPARATOR = r"[\s\-_]+"
# SEPARATOR on ASCII text for RE2, whose `\s` leaves out the vertical tab and \x1c-\x1f
_ASCII_SEPARATOR = r"[\t\n\v\f\r \x1c-\x1f\-_]+"
_CHARACTER = re.compile(r"\\.|[^\[(\\]")  # one character of a phrase body, escaped or plain
_PLURAL = "(?:e?s)?"  # phrase_body's optional plural ending
# The characters outside ASCII that case-insensitive matching takes for an ASCII letter or digit
# (tests/test_vocabulary.py finds them all), each with the letter's lower case.
_ASCII_FOLDS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
# A character that matches case-insensitively one of ASCII: an ASCII one, or one of the few others that fold to one
_ASCII_CASE = re.compile("(?i)[" + re.escape("".join(map(chr, range(128)))) + "]")


@dataclass(frozen=True, slots=True)
class FacetExample:
    """A text and what reading it must yield: its claims (`after`, or `not mean` for a negated
    value), or for the sentence rules (`rules/reading/sentences.yaml`) its sentences."""

    text: str
    claims: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Facet:
    name: str
    description: str
    values: dict[str, tuple[str, ...]]  # value -> phrases; the first phrase is the canonical wording
    ignore: tuple[str, ...] = ()  # phrases that look like a value but state none ("clip bound")
    examples: tuple[FacetExample, ...] = ()

    def other_value(self, value: str) -> str | None:
        """For a two-valued facet, the value that "not `value`" means."""
        others = [v for v in self.values if v != value]
        return others[0] if len(others) == 1 else None


@dataclass(frozen=True, slots=True)
class PhraseEntry:
    facet: str
    value: str  # "" for an ignore phrase: it wins the text but states nothing
    phrase: str


class Vocabulary:
    """All facets plus the negation cues, compiled into one longest-match-first pattern."""

    def __init__(self, facets: dict[str, Facet], negation_cues: tuple[str, ...], reach: int) -> None:
        self.facets = facets
        self.negation_cues = negation_cues
        self.reach = reach
        self.entries = [
            PhraseEntry(facet.name, value, phrase)
            for facet in facets.values()
            for value, phrases in facet.values.items()
            for phrase in phrases
        ] + [PhraseEntry(facet.name, "", phrase) for facet in facets.values() for phrase in facet.ignore]
        self.by_phrase = {normalize(e.phrase): e for e in self.entries}

    # Compiled when first read with: a warm run that reads no text (engine.judge) never needs them.
    @cached_property
    def pattern(self) -> re.Pattern[str] | None:
        """Every phrase, longest first: the first that matches at a place is the one read there."""
        return self._alternation(self._order) if self.entries else None

    @cached_property
    def _order(self) -> list[int]:
        return sorted(range(len(self.entries)), key=lambda i: -len(self.entries[i].phrase))

    def _alternation(self, order: list[int]) -> re.Pattern[str]:
        alternatives = [f"(?P<p{i}>{phrase_regex(self.entries[i].phrase)})" for i in order]
        return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)")

    @cached_property
    def _by_start(self) -> tuple[dict[str, re.Pattern[str]], re.Pattern[str] | None, dict[str, int]]:
        """`pattern` cut by the character each phrase starts with: per ASCII letter or digit
        (lower-cased), the phrases that start with it, and apart the few that start with
        anything else (`(%)`, `µs`); with each phrase's place in `pattern`. Tried at a place,
        `pattern` tries every phrase in turn (on Megatron-LM a fiftieth of the extraction);
        only those that start with the character there can match."""
        groups: dict[str, list[int]] = {}
        for i in self._order:
            first = self.entries[i].phrase.strip()[:1]
            groups.setdefault(first.lower() if first.isascii() and first.isalnum() else "", []).append(i)
        compiled = {start: self._alternation(order) for start, order in groups.items()}
        return compiled, compiled.pop("", None), {f"p{i}": rank for rank, i in enumerate(self._order)}

    @cached_property
    def screen(self) -> re.Pattern[str] | None:
        """A superset of `pattern` that Python's regex engine scans far faster (one case rule,
        no groups, the phrases' shared beginnings written once): texts it rejects cannot hold a phrase."""
        bodies = sorted({phrase_body(e.phrase) for e in self.entries})
        return re.compile(r"(?i)(?<!\w)" + _shared([_pieces(body) for body in bodies]) + r"(?!\w)") if bodies else None

    @cached_property
    def _ascii_screen(self) -> Any:
        """The screen for a text of ASCII only, lower-cased and matched with case (an engine
        that folds case folds each character it reads), by RE2, which compiles it in a
        fraction of the time Python's engine takes, before any text is read. RE2 has no
        lookaround: a phrase's word boundaries are matched as the character beside it or the
        text's end, which tells as well whether a text holds a phrase. None when a phrase
        holds a character case-insensitive matching takes for an ASCII one (the Kelvin sign for
        k, the long s), which the lower-cased text would no longer match, or one RE2 refuses."""
        bodies = sorted({_ascii_lower(phrase_body(e.phrase)) for e in self.entries})
        if not bodies or any(_ASCII_CASE.search(character) for body in bodies for character in body if not character.isascii()):
            return None
        alternatives = _shared([_pieces(body) for body in bodies]).replace(SEPARATOR, _ASCII_SEPARATOR)
        return patterns.engine(r"(?:^|\W)" + alternatives + r"(?:\W|$)")

    def may_state(self, text: str) -> bool:
        """Whether the screen matches the text: else it holds no phrase. An ASCII text (most
        of them) is screened lower-cased, which the same pattern scans three times as fast."""
        if self.screen is None:
            return False
        fast = self._ascii_screen
        if fast is not None and text.isascii():
            return fast.search(text.lower()) is not None
        return self.screen.search(text) is not None

    def compiled(self) -> tuple[object, ...]:
        """The phrase patterns and their screens, compiled now rather than at the first text."""
        return self._by_start, self.screen, self._ascii_screen

    def fingerprint(self) -> bytes:
        """Everything of the vocabulary that reading a text depends on, and nothing else: the
        phrases of each value in order (the first is canonical; equal lengths match in order),
        the ignore phrases and the negation cues. Facet descriptions and examples are left out,
        so a cache keyed by this survives an edit to them."""
        facets = [[f.name, list(f.values.items()), f.ignore] for f in self.facets.values()]
        return json.dumps([facets, self.negation_cues, self.reach], ensure_ascii=False).encode("utf-8", "surrogatepass")

    def phrases(self, text: str, start: int, end: int) -> Iterator[re.Match[str]]:
        """What `pattern.finditer(text, start, end)` finds, with the pattern tried only where the
        screen matches: no phrase starts before the screen's next match, since the screen accepts
        whatever the pattern does at the same place. The pattern alone is slow to scan (miles:
        a third of phrases.read), the screen fast."""
        assert self.screen is not None
        starting, others, rank = self._by_start
        while start < end and (hit := self.screen.search(text, start, end)) is not None:  # past `end`, search matches "" at it
            at = hit.start()
            first = text[at : at + 1]
            key = first.lower() if first.isascii() and first.isalnum() else _ASCII_FOLDS.get(first, "")
            lettered = starting.get(key)
            match = lettered.match(text, at, end) if lettered is not None else None
            other = others.match(text, at, end) if others is not None else None
            if other is not None and (match is None or rank[other.lastgroup or ""] < rank[match.lastgroup or ""]):
                match = other  # the phrase `pattern` tries first
            if match is not None and match.end() > match.start():  # an empty match states nothing
                yield match
                start = match.end()
            else:
                start = hit.start() + 1

    def entry_of(self, match: re.Match[str]) -> PhraseEntry:
        return self.entries[int(match.lastgroup[1:])]  # type: ignore[index]

    def lookup(self, phrase: str) -> PhraseEntry | None:
        """The entry a piece of text states, matched the way the pattern would."""
        key = normalize(phrase)
        entry = self.by_phrase.get(key) or self.by_phrase.get(key.lower())
        return entry if entry is not None and (entry.phrase == entry.phrase.lower() or normalize(entry.phrase) == key) else None


def phrase_regex(phrase: str) -> str:
    """Hyphen, space and underscore are interchangeable; a multi-word phrase may end in a plural.

    A phrase written in lower case matches any case; a capital makes the match exact ("GB" is
    not "Gb"), which is how units stay precise.
    """
    body = phrase_body(phrase)
    return f"(?i:{body})" if phrase == phrase.lower() else f"(?-i:{body})"


def phrase_body(phrase: str) -> str:
    """The phrase's words, any separator between them, the optional plural; no case rule."""
    words = re.split(SEPARATOR, phrase.strip())
    body = SEPARATOR.join(re.escape(word) for word in words)
    if len(words) > 1 and words[-1].isalpha():
        body += _PLURAL
    return body


def _pieces(body: str) -> list[str]:
    """A phrase body cut where phrases may share a beginning: at each character (escaped or
    plain), separator and plural ending; anything else is left whole, as the last piece."""
    found, at = [], 0
    while at < len(body):
        whole = next((w for w in (SEPARATOR, _PLURAL) if body.startswith(w, at)), None)
        character = _CHARACTER.match(body, at) if whole is None else None
        piece = whole if whole is not None else character.group() if character is not None else body[at:]
        found.append(piece)
        at += len(piece)
    return found


def _ascii_lower(body: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in body)


def _shared(bodies: list[list[str]]) -> str:
    """The alternation of `bodies` (each cut into pieces), each shared beginning written once:
    at a word start the engine follows one branch per character read instead of trying every
    phrase that starts with it in turn (on miles, the screen over every text 0.23 -> 0.15 CPU s).
    Only whether something matches at a place is kept; which alternative matches first is not."""
    branches: dict[str, list[list[str]]] = {}
    for body in bodies:
        branches.setdefault(body[0] if body else "", []).append(body[1:])
    ends = branches.pop("", None) is not None  # a body ends here
    alternatives = [head + _shared(rests) for head, rests in branches.items()] + ([""] if ends and branches else [])
    return "" if not alternatives else alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


def normalize(phrase: str) -> str:
    joined = " ".join(re.split(SEPARATOR, phrase.strip()))
    return joined.lower() if joined == joined.lower() else joined


def load_builtin() -> tuple[dict[str, Facet], tuple[str, ...], int]:
    """The shipped facets and negation cues; a broken file is a ConfigError like any other.
    Read once per process (the engine, the name parts and the code knowledge all ask), each
    caller getting its own dict."""
    facets, cues, reach = _builtin()
    return dict(facets), cues, reach


@lru_cache(maxsize=1)
def _builtin() -> tuple[dict[str, Facet], tuple[str, ...], int]:
    base = rules_dir()
    problems: list[Problem] = []
    facets: dict[str, Facet] = {}
    for path in sorted((base / "facets").glob("*.yaml")):
        facet = _load_facet_file(path, problems)
        if facet is not None:
            facets[facet.name] = facet
    cues, reach = _load_negation(base / "negation.yaml", problems)
    if problems:
        raise ConfigError(problems)
    return facets, cues, reach


def _load_facet_file(path: Path, problems: list[Problem]) -> Facet | None:
    root, load_problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    problems.extend(load_problems)
    if root is None:
        return None
    reader = NodeReader(str(path))
    items = reader.mapping(root, "a facet file")
    name = reader.text(items["facet"][1], "'facet'") if "facet" in items else None
    if name != path.stem:
        reader.error(root, f"'facet' must name the file's facet, '{path.stem}'")
    facet = read_facet(reader, path.stem, root, with_examples=True)
    problems.extend(reader.problems)
    return facet


def read_facet(reader: NodeReader, name: str, node: Node, with_examples: bool = False) -> Facet:
    """Read one facet definition (built-in file or registry `facets:` entry)."""
    allowed = ("description", "values", "ignore") + (("facet", "examples") if with_examples else ())
    items = reader.mapping(node, f"facet '{name}'", allowed)
    description = reader.text(items["description"][1], "'description'") if "description" in items else ""
    values: dict[str, tuple[str, ...]] = {}
    if "values" not in items:
        reader.error(node, f"facet '{name}' needs 'values'")
    else:
        for value, (_, phrases_node) in reader.mapping(items["values"][1], f"the values of '{name}'").items():
            values[value] = _phrases(reader, phrases_node, f"the phrases of '{value}'")
    ignore = _phrases(reader, items["ignore"][1], "'ignore'") if "ignore" in items else ()
    examples = read_examples(reader, items["examples"][1]) if "examples" in items else ()
    return Facet(name, description or "", values, ignore, examples)


def _phrases(reader: NodeReader, node: Node, what: str) -> tuple[str, ...]:
    """A list of phrases; one of separators only is refused, since its pattern is empty and
    would match at every position of every text."""
    phrases = []
    for phrase_node, phrase in reader.texts(node, what):
        if re.sub(SEPARATOR, "", phrase):
            phrases.append(phrase)
        else:
            reader.error(phrase_node, f"phrase {phrase!r} has no word; write the words a text would use")
    return tuple(phrases)


def read_examples(reader: NodeReader, node: Node, expected: str = "claims") -> tuple[FacetExample, ...]:
    """A rules file's `examples`: each a `text` and the list under `expected` that reading it
    must give (its claims, or for the sentence rules its sentences)."""
    examples = []
    for example in reader.sequence(node, "'examples'"):
        fields = reader.mapping(example, "an example", ("text", expected))
        text = reader.text(fields["text"][1], "'text'") if "text" in fields else None
        said = [c for _, c in reader.texts(fields[expected][1], f"'{expected}'")] if expected in fields else []
        if text is not None:
            examples.append(FacetExample(text, tuple(said), example.line))
    return tuple(examples)


def _load_negation(path: Path, problems: list[Problem]) -> tuple[tuple[str, ...], int]:
    root, load_problems = marked_yaml.load(read_text(path), str(path), shipped=True)
    problems.extend(load_problems)
    if root is None:
        return (), 0
    reader = NodeReader(str(path))
    items = reader.mapping(root, "the negation file", ("cues", "reach"))
    cues = tuple(cue.lower() for _, cue in reader.texts(items["cues"][1], "'cues'")) if "cues" in items else ()
    reach = items["reach"][1].value if "reach" in items else 3
    if not isinstance(reach, int) or isinstance(reach, bool):
        reader.error(items["reach"][1], "'reach' must be a whole number")
        reach = 3
    problems.extend(reader.problems)
    return cues, reach


def merge(builtin: dict[str, Facet], extra: dict[str, Facet]) -> dict[str, Facet]:
    """Registry facets add new facets, or new values and phrases to built-in ones."""
    merged = dict(builtin)
    for name, facet in extra.items():
        base = merged.get(name)
        if base is None:
            merged[name] = facet
            continue
        values = dict(base.values)
        for value, phrases in facet.values.items():
            values[value] = values.get(value, ()) + tuple(p for p in phrases if p not in values.get(value, ()))
        ignore = base.ignore + tuple(p for p in facet.ignore if p not in base.ignore)
        merged[name] = Facet(name, facet.description or base.description, values, ignore, base.examples)
    return merged


def phrase_conflicts(facets: dict[str, Facet]) -> list[tuple[str, str]]:
    """Phrases given to two values (of one facet or of two): the match would be a coin toss.
    Each as (the phrase as written the second time, the message)."""
    owners: dict[str, str] = {}
    conflicts = []
    for facet in facets.values():
        for value, phrases in facet.values.items():
            for phrase in phrases:
                key, owner = normalize(phrase), f"{facet.name}={value}"
                if key in owners and owners[key] != owner:
                    conflicts.append((phrase, f"phrase '{phrase}' is given to both {owners[key]} and {owner}"))
                owners.setdefault(key, owner)
    return conflicts
