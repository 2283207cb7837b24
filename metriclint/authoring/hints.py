"""What `init` suggests configuring: the project's own helpers that are handed metric names the
inventory does not see logged.

A trainer that records metrics by name (`self.record_metric("train/loss", loss)`) and logs them
later through a path the inventory does not follow (a callback handed to a bookkeeping helper,
a thread) leaves `init` with a handful of keys where the project logs dozens. The names are in
plain sight at the calls; what they reach is not. So `init` names such a helper and lets its
user say, with `log-functions`, that it logs what it is handed. A helper is named only where
its calls hand it several key-shaped names none of which the inventory sees logged, under a
parameter that takes a metric's name (rules/hints.yaml) beside others.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.base.paths import display
from metriclint.engine import Collection
from metriclint.evidence.code_claims import param_at
from metriclint.model import FunctionFlow
from metriclint.sources import Extraction

LEAST_NAMES = 3  # fewer distinct names make no pattern worth a hint
MOST_HINTS = 3


@dataclass(frozen=True)
class Unfollowed:
    """A helper of the project handed metric names the inventory does not see logged."""

    helper: str  # its name, as `log-functions` takes it
    names: tuple[str, ...]  # sorted


def unfollowed_helpers(collection: Collection) -> list[Unfollowed]:
    """The helpers to suggest for `log-functions`, the most names first."""
    defined = _defined(collection)
    # the names the project's modules go by, whatever folder holds the package (`src/pkg/` is
    # imported as `pkg`): a callee that starts with none of them is a library's (`requests.get`)
    modules = {part for flows in defined.values() for flow in flows for part in flow.name.split(".")[:-1]}
    handed: dict[str, set[str]] = defaultdict(set)
    for extraction in collection.extractions:
        for call in extraction.calls:
            helper = call.callee.rsplit(".", 1)[-1]
            if helper not in defined or call.callee.split(".", 1)[0] not in modules or call.span.path in collection.tests:
                continue
            for where, texts in call.texts:
                if _names_metric(defined[helper], where, call.bound):
                    handed[helper].update(t for t in texts if _unlogged_key(t, collection))
    found = [Unfollowed(helper, tuple(sorted(names))) for helper, names in handed.items() if len(names) >= LEAST_NAMES]
    return sorted(found, key=lambda u: (-len(u.names), u.helper))[:MOST_HINTS]


def hint(unfollowed: Unfollowed) -> str:
    shown = ", ".join(f'"{name}"' for name in unfollowed.names[:2])
    more = ", ..." if len(unfollowed.names) > 2 else ""
    return (
        f"hint: {unfollowed.helper} is handed {len(unfollowed.names)} names shaped like metric keys ({shown}{more}) that metriclint"
        f" does not see logged; if it logs them, add it to log-functions under [tool.metriclint] and run init again"
    )


def _defined(collection: Collection) -> dict[str, list[FunctionFlow]]:
    """The project's functions and methods outside the tests, by their own name."""
    found: dict[str, list[FunctionFlow]] = defaultdict(list)
    for path, result in zip(collection.files, collection.results):
        if isinstance(result, Extraction) and display(path) not in collection.tests:
            for flow in result.functions:
                found[flow.name.rsplit(".", 1)[-1]].append(flow)
    return found


def _names_metric(flows: list[FunctionFlow], where: int | str, bound: bool) -> bool:
    """Whether what a call passes at `where` (a position or a keyword) is a parameter some
    definition of the helper takes a metric's name under, beside others (a value), returning
    nothing: a helper of a name alone marks a region or times one (`with timer("fwd")`), and
    one that returns what it makes of the name hands out an object (a profiler's
    `marker(name, categories=...)`, a `get_logger(name)`), not a record of a value."""
    return any(
        param_at(flow, where, bound) in _name_parameters()
        and len(flow.params) - flow.bound > 1
        and not (flow.returns or flow.makes or flow.gives)
        for flow in flows
    )


def _unlogged_key(text: str, collection: Collection) -> bool:
    return keys.looks_like_key(text) and not keys.too_generic(text) and text not in collection.index.logged


@lru_cache(maxsize=1)
def _name_parameters() -> frozenset[str]:
    return frozenset(word_lists("hints.yaml")["name_parameters"])
