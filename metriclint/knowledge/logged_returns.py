"""Methods a framework calls and whose return it logs (rules/code/frameworks.yaml
`logged_returns`): a project that overrides such a method in a subclass of the framework's class
writes no logging call, yet every key of the dict it returns is logged (TRL's DPOTrainer stores
what `get_batch_loss_metrics` returns and its `log()` adds each stored key's mean to the logs).
"""

from __future__ import annotations

from dataclasses import dataclass

from metriclint.base.marked_yaml import Node, NodeReader
from metriclint.knowledge.frameworks import read_example

_KEYS = ("bases", "method", "element", "says", "source", "overrides", "logged_by", "called_with", "consumes", "examples")


@dataclass(frozen=True, slots=True)
class LoggedReturn:
    """`method` of a class that names one of `bases` among its own (full import paths): the
    framework logs the dict it returns (its tuple's `element`, when it returns a tuple).

    A subclass that defines one of `overrides` changes how the dict is kept, so nothing is
    logged from it. One that defines `logged_by` (the framework's method that logs what was
    kept) logs the keys only if that method hands its logs on to the framework's (it calls a
    method of that name), and not the keys it reads by name: those it turns into others (a
    sum and a count into a mean) or drops (sources/python/logged_returns.py).

    `called_with`: the arguments the framework calls the method with, by keyword (mmengine's
    `forward(..., mode="loss")`): only what it returns where its parameters are these is logged.

    `consumes`: the keys the framework's own `logged_by` method reads by name and turns into
    others (trl's KTOTrainer.log makes `rewards/chosen` of `rewards/chosen_sum` and
    `count/chosen`): never logged as they are returned, whichever `log` runs."""

    bases: tuple[str, ...]
    method: str
    element: int | None
    says: str
    source: str
    overrides: frozenset[str] = frozenset()
    logged_by: str = ""
    called_with: tuple[tuple[str, str], ...] = ()  # (parameter, the string the framework passes for it)
    consumes: frozenset[str] = frozenset()
    examples: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (code, the keys it logs), run by the tests


def read_logged_return(reader: NodeReader, node: Node) -> LoggedReturn | None:
    fields = reader.mapping(node, "a logged return", _KEYS)
    if any(k not in fields for k in ("bases", "method", "says", "source", "examples")):
        reader.error(node, "a logged return needs 'bases', 'method', 'says', 'source' and 'examples'")
        return None
    bases = tuple(path for _, path in reader.texts(fields["bases"][1], "'bases'"))
    method, says, source = (reader.text(fields[k][1], f"'{k}'") for k in ("method", "says", "source"))
    element = None
    if "element" in fields:
        written = fields["element"][1]
        if written.kind != "integer" or not isinstance(written.value, int):
            reader.error(written, "'element' is the position of the dict in the tuple the method returns")
        else:
            element = written.value
    overrides, consumes = (
        frozenset(word for _, word in reader.texts(fields[k][1], f"'{k}'")) if k in fields else frozenset()
        for k in ("overrides", "consumes")
    )
    logged_by = (reader.text(fields["logged_by"][1], "'logged_by'") or "") if "logged_by" in fields else ""
    called_with = (
        tuple(
            (name, reader.text(value, "a parameter's value") or "")
            for name, (_, value) in reader.mapping(fields["called_with"][1], "'called_with'").items()
        )
        if "called_with" in fields
        else ()
    )
    examples = tuple(
        e for e in (read_example(reader, item) for item in reader.sequence(fields["examples"][1], "'examples'")) if e is not None
    )
    if not bases or not method or not says or not source:
        return None
    return LoggedReturn(bases, method, element, says, source, overrides, logged_by, called_with, consumes, examples)
