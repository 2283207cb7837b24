"""Which metric a text is about.

A text speaks for a metric through the logged key its value flows into (strongest), through
the name it documents (a registry alias, a key's last segment), or, for free text, through a
metric it names in the same sentence. A text about something else (a `threshold` parameter)
yields no claim at all: a missed claim costs less than a false contradiction.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Iterable, Iterator, Sequence

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.base.spaced import SpacedNames
from metriclint.knowledge import names
from metriclint.knowledge.registry import Registry
from metriclint.language.phrases import clauses
from metriclint.language.subjects import speaks_for
from metriclint.model import Claim, KeyUse, Mention, Reading, SourceKind

_TOKEN = re.compile(r"`([^`\s]+)`|(?<![\w/{}.-])([A-Za-z_{][\w/{}.-]*[\w}])")


# path -> line -> (name, key): the logged key whose value is put or logged there (name ""), or
# is the variable `name` assigned there and logged unchanged (KeyUse.through).
Sites = dict[str, dict[int, tuple[tuple[str, str], ...]]]


def by_site(uses: Iterable[KeyUse]) -> Sites:
    """Where each key's value is written, and where each variable it goes by is assigned."""
    sites: Sites = {}
    for use in uses:
        for name, span in (("", use.span), *use.through):
            lines = sites.setdefault(span.path, {})
            lines[span.line] = (*lines.get(span.line, ()), (name, use.key))
    return sites


class MetricIndex:
    """Every metric known to the run: registry keys and aliases, and the keys the code logs."""

    def __init__(self, registry: Registry | None, logged: Iterable[str], unnamed: Iterable[str] = (), sites: Sites | None = None) -> None:
        self.registry = registry
        self.logged = frozenset(logged)
        self.unnamed = frozenset(unnamed)  # keys whose last segment labels a stage, not the value (model.CodeProducts.labelled)
        # Where each logged key's value is put or logged: an entry `m["kl"] = v` that the code
        # files under several keys (`train/kl`, `eval/{split}/kl`) is each of them.
        self.sites: Sites = sites or {}
        self.by_alias: dict[str, str] = {}
        if registry is not None:
            for key, entry in registry.metrics.items():
                self.by_alias[key] = key
                for alias in entry.aliases:
                    self.by_alias[alias] = key
        self.spaced = SpacedNames(self.by_alias)  # keys and aliases with spaces: not one token
        # The names prose may use for a metric: what the registry lists as aliases, and keys
        # written out in full (a section or a space). A bare key counts only as an alias.
        self.spoken: dict[str, str] = {}
        for key, entry in registry.metrics.items() if registry is not None else ():
            for name in (key, *entry.aliases) if _written_out(key) else entry.aliases:
                self.spoken[name] = key
        self._registered_by_name = _by_prose_name(k for k in (self.registry.metrics if self.registry else ()) if k not in self.unnamed)
        self._logged_by_name = _by_prose_name(self.logged - self.unnamed)
        self._registered = keys.KeySet(registry.metrics if registry is not None else ())
        # A run asks about the same few keys thousands of times (every text whose value flows
        # to `train/grad_norm`), so each answer is kept.
        self._keys: dict[str, tuple[str, ...]] = {}
        self._names: dict[tuple[str, bool], tuple[str, ...]] = {}  # likewise every parameter named `grad_norm`
        self._sections: dict[str, list[str]] | None = None  # logged keys by what follows each of their "/" (`sectioned`)

    def made_of(self) -> tuple[list[tuple[str, tuple[str, ...]]], list[str], list[str]]:
        """All the index is made of, as plain values: what a file's claims under it depend on
        besides the file (extract/kept.py)."""
        return registered_names(self.registry), sorted(self.logged), sorted(self.unnamed)

    def for_key(self, key: str) -> tuple[str, ...]:
        """The metrics a logged key (possibly a template) is: registered ones first."""
        if key not in self._keys:
            self._keys[key] = self._metrics_of_key(key)
        return self._keys[key]

    def _metrics_of_key(self, key: str) -> tuple[str, ...]:
        """A key written exactly as registered is that metric; else the registry templates it
        fits count once: the one whose fixed text is longest pins it (`train/{x}_mean` over
        `train/{a}_{b}`), and a tie between different ones names none for sure."""
        if key in self.by_alias:
            return (self.by_alias[key],)
        registered = self._registered.same_metric(key)
        if registered:
            longest = max(map(keys.fixed_length, registered))
            pinned = [r for r in registered if keys.fixed_length(r) == longest]
            return tuple(pinned) if keys.is_template(key) or len(pinned) == 1 else ()
        return (key,) if key in self.logged or keys.is_printed(key) else ()

    def sectioned(self, key: str) -> tuple[str, ...]:
        """The one logged metric that is `key` under sections added before it elsewhere
        (`kl` or `policy/kl`, logged as `actor/policy/kl`); () when none or several are."""
        if self._sections is None:
            self._sections = {}
            for logged in sorted(self.logged):
                for tail in _tails(logged):
                    self._sections.setdefault(tail, []).append(logged)
        found = self._sections.get(key, [])
        return (found[0],) if len(found) == 1 else ()

    def unsectioned(self, key: str) -> tuple[str, ...]:
        """The metric a written key names under sections the code adds where the inventory
        does not see it (a docs page's `actor/kl/mean`, logged as `kl/mean` by a worker whose
        driver files its results under its role): the longest tail after a "/" that is a known
        key and still has a section of its own; () when none is. A bare last segment (`kl`)
        names too many things to stand for a key written in full."""
        for tail in _tails(key):
            if "/" not in tail:
                break
            if tail in self.by_alias:
                return (self.by_alias[tail],)
            if tail in self.logged:
                return (tail,)
        return ()

    def entered_at(self, path: str, line: int, name: str) -> tuple[str, ...]:
        """The logged keys that an entry written as `name` on that line is filed under: the
        entry's own key, or the key under the sections the code puts before it elsewhere. A
        name written with placeholders stands for each key there whose last segment it covers,
        its placeholders filled where it is called (`{tag}rate`, logged as `rate` and `kept_rate`)."""
        written = keys.last_segment(name)
        last = keys.literal(written)
        loose = last != written and bool(last)
        found = self.sites.get(path, {}).get(line, ())
        return tuple(
            dict.fromkeys(
                key
                for at, key in found
                if not at
                and (key == name or keys.literal(keys.last_segment(key)) == last or loose and keys.covers(written, keys.last_segment(key)))
            )
        )

    def assigned_at(self, path: str, line: int, name: str) -> tuple[str, ...]:
        """The logged keys whose value is the variable `name` assigned on that line, unchanged."""
        return tuple(dict.fromkeys(key for at, key in self.sites.get(path, {}).get(line, ()) if at == name))

    def sites_in(self, path: str) -> list[tuple[int, str, str]]:
        """Where each key logged from a file is written there, and its variables assigned: what
        the file's texts' claims depend on besides the index's keys (engine/warm.py)."""
        return sorted((line, name, key) for line, found in self.sites.get(path, {}).items() for name, key in found)

    def filled(self, template: str) -> tuple[str, ...]:
        """The one logged key that a template fills, itself or under sections added before it
        elsewhere (`stats_{kind}_mean`, logged as `filter/stats_ratio_mean`); () when none or
        several are."""
        found = [key for key in self.logged if keys.covers(template, key) or any(keys.covers(template, tail) for tail in _tails(key))]
        return (found[0],) if len(found) == 1 else ()

    def for_name(self, name: str, naming: bool = False) -> tuple[str, ...]:
        """`_metrics_of_name`, each answer kept."""
        if (name, naming) not in self._names:
            self._names[name, naming] = self._metrics_of_name(name, naming)
        return self._names[name, naming]

    def _metrics_of_name(self, name: str, naming: bool) -> tuple[str, ...]:
        """The one metric a documented name (a parameter, a variable) stands for, or () if unsure.

        A registry alias, or a key written out in full, always counts: the registry says so. A
        key's last segment counts only for a compound name (`grad_norm`): a plain word (`loss`)
        names too many things to be trusted without a data flow (seen on miles: every `loss`
        parameter in examples/ and tests/ was taken for `train/loss`); and only where the key
        pins it (see `keys.prose_name`). A bare key (`data_parallel_size`) is a variable's name
        unless the registry lists it as an alias, or the text says by its structure that it
        names metrics (`naming`: a docs table of metrics).
        """
        if "/" in name:
            return self.for_key(name) or self.unsectioned(name)
        if name in self.spoken:
            return (self.spoken[name],)
        if naming and name in self.by_alias:
            return (self.by_alias[name],)
        if naming and name in self.logged:
            return (name,)
        if not specific(name):
            return ()
        return self._registered_name(name) or self._logged_name(name)

    def _registered_name(self, name: str) -> tuple[str, ...]:
        if name in self.spoken:
            return (self.spoken[name],)
        registered = self._registered_by_name.get(name, [])
        return (registered[0],) if len(registered) == 1 else ()

    def _logged_name(self, name: str) -> tuple[str, ...]:
        # Several logged keys may share a name (`train/{tag}grad_norm`, `train/grad_norm`): it
        # stands for them only if they are one metric, and then for a concrete one.
        logged = self._logged_by_name.get(name, [])
        if logged and all(keys.same_metric(logged[0], other) for other in logged):
            concrete = [k for k in logged if not keys.is_template(k)]
            return ((concrete or logged)[0],)
        return ()

    def one_named_in(self, text: str) -> str | None:
        """The one metric a sentence names, or None if it names none or several.

        Names are full keys (or a logged key written without the sections the code puts before
        it elsewhere, `sectioned`), registry aliases, and registry keys' names (see `for_name`) that are
        compound words or written in backticks. In prose a bare `data_parallel_size` is far more
        often the variable than a metric that shares its name, so logged names do not count here
        (seen on Megatron-LM). Each written name is one series: `rollout/aborted_count` and
        `rollout/finished_count` are two, though one template covers both.
        """
        series = self._series_named_in(text)
        if len(series) != 1:
            return None
        ((metric, written),) = series.items()
        return metric if len(written) == 1 else None

    def names_any(self, text: str) -> bool:
        """Whether a text names a metric at all, as `one_named_in` reads names."""
        return bool(self._series_named_in(text))

    def _series_named_in(self, text: str) -> dict[str, set[str]]:
        """Each metric a text names, with the names it is written as."""
        series: dict[str, set[str]] = {}
        for start, end in self.spaced.finditer(text):
            series.setdefault(self.by_alias[text[start:end]], set()).add(text[start:end])
        for match in _TOKEN.finditer(text):
            if text.startswith("=", match.end()) and not text.startswith("==", match.end()):
                continue  # `at peak_batch=512`: a setting's value given in passing, not the metric described
            word = (match.group(1) or match.group(2)).strip(".,:;")
            if "/" in word:
                metrics = self.for_key(word) or self.sectioned(word)
            elif match.group(1) or specific(word):
                metrics = self._registered_name(word)
            else:
                metrics = ()
            for metric in metrics:
                series.setdefault(metric, set()).add(word if keys.is_template(metric) and "/" in word else metric)
        return series

    def registered_in(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Registry keys and aliases a text writes out, as (start, end, metric): the places that
        mention a registered metric in passing, which keep its entry from being stale (ML005)."""
        if not self.by_alias:
            return
        # Most texts write none: that is asked of their tokens in C, before each is looked at.
        if not self.by_alias.keys().isdisjoint(itertools.chain.from_iterable(_TOKEN.findall(text))):
            yield from self._tokens_registered_in(text)
        for start, end in self.spaced.finditer(text):
            yield start, end, self.by_alias[text[start:end]]

    def _tokens_registered_in(self, text: str) -> Iterator[tuple[int, int, str]]:
        """The registry keys and aliases among a text's tokens, each where it is written."""
        for match in _TOKEN.finditer(text):
            group = 1 if match.group(1) else 2
            if match.group(group) in self.by_alias:
                yield match.start(group), match.end(group), self.by_alias[match.group(group)]


def registered_names(registry: Registry | None) -> list[tuple[str, tuple[str, ...]]]:
    """The registry's keys and aliases, in order: all a metric index takes from it."""
    return [(key, entry.aliases) for key, entry in registry.metrics.items()] if registry is not None else []


def specific(name: str) -> bool:
    """Whether a name is an identifier that means one thing (`grad_norm`, `stepTime`, `l2_norm`)
    rather than a word of prose (`loss`, `reward`, `KL`)."""
    if name.isalpha() and name.islower():
        return False  # a plain word, as most tokens of prose are: no need to look at each character
    camel = name[:1].islower() and any(c.isupper() for c in name)
    return camel or any(c in name for c in "_-") or any(c.isdigit() for c in name)


def attribute(mention: Mention, readings: Sequence[Reading], index: MetricIndex) -> list[Claim]:
    """Turn the readings of one text into claims about the metrics it speaks for."""
    if not readings:
        return []
    if mention.flows_to or mention.subjects:
        metrics = _documented(mention, index)
        if metrics:
            return [
                _claim(mention, r, metric)
                for r in _about_the_value(mention, readings)
                for metric in metrics
                if _said_of(metric, r) and not _in_own_name(mention.text, r, metric)
            ]
        if mention.subjects or mention.source is not SourceKind.COMMENT:
            return []
        # a trailing comment on a dict entry that no logged key comes from: free text
    claims: list[Claim] = []
    named: dict[tuple[int, int], tuple[tuple[str, ...], bool]] = {}  # each sentence's metrics, and whether only by the key written below
    for reading in readings:
        if reading.sentence not in named:
            sentence = mention.text[slice(*reading.sentence)]
            one = index.one_named_in(sentence)
            found = (one,) if one is not None else _below(sentence, mention, index) or _assigned_below(mention, index)
            named[reading.sentence] = (found, False) if found else (_written_below(mention, index), True)
        metrics, by_entry = named[reading.sentence]
        if metrics and not _own_item(mention.text, reading) and (not by_entry or _leads(mention.text, reading)):
            claims.extend(
                _claim(mention, reading, m)
                for m in metrics
                if not _restates_bound(m, reading) and not _in_own_name(mention.text, reading, m)
            )
    return claims


def _leads(text: str, reading: Reading) -> bool:
    """Whether a reading opens its sentence, or the definition after a label's colon, at most an
    article before it (`# Mean uses the clipped weights`, `# Gap: the sum of ...`): what the
    comment says the value below is, not a word of a clause about something else (`the weights
    drive the loss, the std and the ESS`)."""
    before = text[reading.sentence[0] : reading.start]
    return len(before.rsplit(":", 1)[-1].split()) <= 1


def _documented(mention: Mention, index: MetricIndex) -> tuple[str, ...]:
    """The metrics a text documents: those its value flows to (the key of the one entry a
    trailing comment's line writes counts as each key that entry is filed under), else those its
    names are: the keys a trailing comment's assigned variable is logged under unchanged, or the
    metric a documented name stands for."""
    path, line = mention.path, mention.origins[0][0]
    flows = _union(index.for_key(k) or _metrics(index.entered_at(path, line, k), index) for k in mention.flows_to)
    return flows or _union(
        _metrics(index.assigned_at(path, line, s), index) or index.for_name(s, mention.names_metrics) for s in mention.subjects
    )


def _metrics(logged: Iterable[str], index: MetricIndex) -> tuple[str, ...]:
    """The metrics some logged keys are (a registry template may stand for several)."""
    return _union(index.for_key(key) for key in logged)


def _in_own_name(text: str, reading: Reading, metric: str) -> bool:
    """Whether a reading lies inside a word that writes the metric's own key (`# mem-pinned-bytes:
    pinned memory, in GiB`): those words are the key's name, which a name is read for
    (rules/names.yaml, held against the text by ML002), not what the text states of the value."""
    before, after = text[reading.start - 1 : reading.start], text[reading.end : reading.end + 1]
    if before not in _JOINERS and after not in _JOINERS:
        return False  # a phrase with a space or a sentence's edge on both sides: not inside a key
    for match in _TOKEN.finditer(text, *reading.sentence):
        if match.start() <= reading.start and reading.end <= match.end():
            word = (match.group(1) or match.group(2)).strip(".,:;")
            named = (metric, keys.literal(keys.last_segment(metric)))
            return word in named or ("{" in word and any(keys.covers(word, n, across_sections=True) for n in named))
    return False


_JOINERS = frozenset("-_/.{}")


def _own_item(text: str, reading: Reading) -> bool:
    """Whether the reading is the subject of its own item in a sentence that lists items in
    parallel clauses, each its own subject and the same verb ("entropy needs a flag,
    `ref_log_probs` needs a KL term"): it names that item, not the metric another item names."""
    openers = [_opening(text, start, end) for start, end in clauses(text, *reading.sentence)]
    own = next((o for o in openers if o is not None and o[0] == reading.start), None)
    return own is not None and any(o is not None and o[0] != own[0] and o[1] == own[1] for o in openers)


_OPENING = re.compile(r"\s*(`*[\w/{}.-]+`*)\s+(\w+)")


def _opening(text: str, start: int, end: int) -> tuple[int, str] | None:
    """Where a clause's first word starts, and the word after it (lower-cased)."""
    match = _OPENING.match(text, start, end)
    return (match.start(1), match.group(2).lower()) if match is not None else None


def _below(sentence: str, mention: Mention, index: MetricIndex) -> tuple[str, ...]:
    """The keys, of those the logging call right below a comment logs, that a sentence of the
    comment names: written as the key (`# grad-norm: ...` above `add_scalar("grad-norm", ...)`)
    or as its last segment, or as the code writes it, with its placeholders (`_written_as`). The
    call pins which metric the name is, as a docs table's row does. A dict entry's key that is
    logged under sections added elsewhere (`m["kl"] = v`, logged as `policy/kl`) is each key
    the code files that entry under (`train/kl` and `eval/{split}/kl`, `_entered`). A sentence
    that names two different things below names none for sure."""
    below = mention.below
    if not below:
        return ()
    names = {name: key for key in below for name in (key, keys.literal(keys.last_segment(key)))}
    forked = {name: keys_logged for key, keys_logged in mention.forks for name in (key, keys.literal(keys.last_segment(key)))}
    named: set[tuple[str, ...]] = set()
    for match in _TOKEN.finditer(sentence):
        word = (match.group(1) or match.group(2)).strip(".,:;")
        if word in names:
            named.add((names[word],))
        elif word in forked:
            named.add(forked[word])
        elif "{" in word and (written := _written_as(word, below)):
            named.add(written)
    if len(named) != 1:
        return ()
    line = mention.origins[-1][0] + 1 if mention.origins else 0
    metrics = [_entered(key, mention.path, line, index) for key in named.pop()]
    return tuple(dict.fromkeys(m for found in metrics for m in found)) if all(metrics) else ()


def _assigned_below(mention: Mention, index: MetricIndex) -> tuple[str, ...]:
    """The metrics whose value is a variable the statement right below a comment assigns, logged
    unchanged (`# the largest kept count` above `kept = max(counts)`, logged as `sampler/kept`):
    the comment documents that value, as a trailing one on its line does."""
    if not mention.assigns:
        return ()
    line = mention.origins[-1][0] + 1
    return _union(_metrics(index.assigned_at(mention.path, line, name), index) for name in mention.assigns)


def _written_below(mention: Mention, index: MetricIndex) -> tuple[str, ...]:
    """The metrics the one key the statement right below a comment writes is (`# mean gap over
    the tokens` above `stats["gap"] = ...`): the comment documents that entry, as a trailing one
    on its line does. Not where the comment names a key or a metric anywhere (`is_gap: ...`,
    `{prefix}: ...`): its sentences then speak each for what they name, and the others for none.
    Nor where it shares no word with the key: a comment heading a branch (`# Token-level: the
    weights drive the loss, the std and the ESS`) speaks for the branch, not its first line."""
    if not mention.writes or _names_a_key(mention, index) or not _shares_a_word(mention.text, mention.writes):
        return ()
    return _entered(mention.writes, mention.path, mention.origins[-1][0] + 1, index)


def _shares_a_word(text: str, key: str) -> bool:
    """Whether a text writes a word of the key's last segment (of three letters or more)."""
    words = {w for w in re.split(r"[^a-z0-9]+", keys.literal(keys.last_segment(key)).lower()) if len(w) > 2}
    return bool(words & set(re.split(r"[^a-z0-9]+", text.lower())))


def _names_a_key(mention: Mention, index: MetricIndex) -> bool:
    """Whether a comment writes a key or a template anywhere (the one below, or any a call
    below logs), or names a metric: then it is structured by name, not about the line below."""
    below = {mention.writes, keys.literal(keys.last_segment(mention.writes)), *mention.below}
    for match in _TOKEN.finditer(mention.text):
        word = (match.group(1) or match.group(2)).strip(".,:;")
        if "{" in word or word in below:
            return True
    return index.names_any(mention.text)


def _entered(key: str, path: str, line: int, index: MetricIndex) -> tuple[str, ...]:
    """The metrics a key written below a comment is: itself, or every key the entry on that
    line is logged under; else the one logged key it is under other sections, or the one a
    template of it fills. () when unsure."""
    exact = index.for_key(key)
    if exact:
        return exact if len(exact) == 1 else ()
    return _metrics(index.entered_at(path, line, key), index) or index.sectioned(key) or _filled(key, index)


def _filled(key: str, index: MetricIndex) -> tuple[str, ...]:
    return index.filled(key) if keys.is_template(key) else ()


def _tails(key: str) -> Iterator[str]:
    """What follows each "/" of a key."""
    at = key.find("/")
    while at != -1:
        yield key[at + 1 :]
        at = key.find("/", at + 1)


def _written_as(template: str, below: tuple[str, ...]) -> tuple[str, ...]:
    """The keys below that a comment names as the code writes them, with the code's own
    placeholders: `{prefix}_mean` above `m[f"{prefix}_mean"]`, whose key is built as
    `rollout_{kind}_mean`; `{split}pairs/nll` above a key built as `heldout_pairs/nll` and as
    `pairs/nll`, one comment for each value the placeholder takes; `node{sep}flops` above
    `node/flops`, where the placeholder is the "/" between sections. None when the template's
    fixed text is no word of its own (`{prefix}`)."""
    if not keys.literal(template).strip("_-./"):
        return ()
    return tuple(key for key in below if keys.covers(template, key, True) or keys.covers(template, keys.last_segment(key), True))


def _about_the_value(mention: Mention, readings: Sequence[Reading]) -> list[Reading]:
    """The readings in sentences that speak for the value the text documents, and not for
    another noun ("Gradients are summed over micro-batches." in the entry of `loss`)."""
    names = (*mention.subjects, *(keys.literal(keys.last_segment(k)) for k in mention.flows_to))
    speaks: dict[tuple[int, int], bool] = {}
    for reading in readings:
        if reading.sentence not in speaks:
            speaks[reading.sentence] = speaks_for(mention.text[slice(*reading.sentence)], names)
    return [reading for reading in readings if speaks[reading.sentence]]


def _said_of(metric: str, reading: Reading) -> bool:
    """A value that is only printed is checked for the facets its message states plainly
    (rules/log_messages.yaml `printed_facets`): a unit, not the looser words around it."""
    return not _restates_bound(metric, reading) and (not keys.is_printed(metric) or reading.facet in _printed_facets())


def _restates_bound(metric: str, reading: Reading) -> bool:
    """Whether a reading only restates the bound a metric's name is (`max_requests`, rules/
    names.yaml `bounds`): "the maximum number of requests allowed" states no reduction."""
    return reading.facet == "reduction" and names.bound(metric) == reading.value


@lru_cache(maxsize=1)
def _printed_facets() -> frozenset[str]:
    return frozenset(word_lists("log_messages.yaml")["printed_facets"])


def _union(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(metric for group in groups for metric in group))


def _claim(mention: Mention, reading: Reading, metric: str) -> Claim:
    phrase = " ".join(mention.text[reading.start : reading.end].split())
    return Claim(
        metric,
        reading.facet,
        reading.value,
        reading.negated,
        phrase,
        mention.span(reading.start, reading.end),
        mention.source,
        mention.span(0, len(mention.text)),
    )


def _written_out(key: str) -> bool:
    """A key prose can only write on purpose: one with a section or a space in it."""
    return "/" in key or " " in key


def _by_prose_name(metric_keys: Iterable[str]) -> dict[str, list[str]]:
    """Keys by the bare identifier that stands for each in prose (`keys.prose_name`)."""
    found: dict[str, list[str]] = {}
    for key in sorted(metric_keys):
        name = keys.prose_name(key)
        if name is not None:
            found.setdefault(name, []).append(key)
    return found
