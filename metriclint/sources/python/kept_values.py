"""What a class keeps in its own attributes from one method to another (issue 30, flow across
methods): a count of tokens added up in `training_step` (`self.tokens += batch["input_ids"].
numel()`) and divided by a duration in the hook that logs it is still a number of tokens, and
still this rank's own.

The walk visits one method at a time, in the order of the source, and notes here what each
write of `self.X` it meets puts there. A read of `self.X` is what every write puts there, but
only once the walk has met every write the class's methods make (counted before the walk enters
the class, held.attribute_writes): read in a method above one of the writes, or above one in
the same method, it is not known. A write of None, zero or an empty container starts the value
afresh and says nothing of it, so the walk need not meet it (`self.total = 0` right after the
call that logs the total); a write the walk cannot read (a value computed in a way not known, a tuple unpacked into the
attribute, `self.t *= 2`) leaves the attribute unknown. An accumulation (`self.total += x`)
keeps what a sum of such values still is (rules/code/elements.yaml `kept_in_lists`): not how
each was reduced, since a total of means is no mean.

This rank's own values (ranks.LocalFact) cross too, unless a call in the class's methods takes
the attribute and may change it in place (`dist.all_reduce(self.total)`): the class is searched
for such calls once, when a read would carry one. Subclasses in other modules, and other objects
reaching into the attribute, are not seen.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

from metriclint.model import CodeFact
from metriclint.sources.python.call_names import binding
from metriclint.sources.python.ranks import LocalFact


@dataclass
class KeptValues:
    """One class's attributes, as far as the walk has come through its methods."""

    writes: Mapping[str, int]  # attribute -> how many writes of it the class's methods make, less the fresh starts
    met: dict[str, int] = field(default_factory=dict)  # attribute -> those the walk has met
    values: dict[str, list[frozenset[CodeFact]]] = field(default_factory=dict)  # attribute -> what each write met puts there
    unknown: set[str] = field(default_factory=set)  # attributes one write met puts something not known in
    taken: frozenset[str] | None = None  # attributes a call may change in place, once asked
    callables: frozenset[str] = frozenset()  # attributes a write may put a function in (`_may_be_function`)

    @classmethod
    def of(cls, writes: list[tuple[str, ast.expr | None]], binds: frozenset[str]) -> KeptValues:
        """Before the walk enters a class, of its attribute writes (held.class_writes); `binds`:
        the calls that make a function with some arguments bound (rules/dataflow.yaml)."""
        counted = Counter(attribute for attribute, value in writes if value is None or not fresh(value))
        return cls(counted, callables=frozenset(a for a, value in writes if value is not None and _may_be_function(value, binds)))

    def wrote(self, attribute: str, facts: frozenset[CodeFact] | None) -> None:
        """A write the walk met, not a fresh start: `facts` of the value put there, None when
        not known."""
        if attribute not in self.writes:
            return
        self.met[attribute] = self.met.get(attribute, 0) + 1
        if facts is None:
            self.unknown.add(attribute)
        else:
            self.values.setdefault(attribute, []).append(facts)

    def read(self, attribute: str) -> frozenset[CodeFact]:
        """What `self.X` holds wherever it is read from now on: the facts every write puts
        there, once the walk has met them all; nothing otherwise."""
        puts = self.values.get(attribute)
        if not puts or attribute in self.unknown or self.met.get(attribute) != self.writes.get(attribute):
            return frozenset()
        common = set.intersection(*({_said(f) for f in put} for put in puts))
        return frozenset(f for put in puts for f in put if _said(f) in common)

    def shared(self, attribute: str, node: ast.ClassDef, harmless: Callable[[ast.Call], bool]) -> bool:
        """Whether this rank's own value in the attribute stays so: no call of the class's
        methods takes it (as an argument or as the object of a method) unless `harmless`."""
        if self.taken is None:
            self.taken = frozenset(_taken(node, harmless))
        return attribute not in self.taken


def _may_be_function(value: ast.expr, binds: frozenset[str]) -> bool:
    """Whether a write may put a function in an attribute, for its class's methods to call
    (`self.loss_fn(out)`): a name (a parameter, a function), a bound function (`partial(f,
    cfg)`) or a choice of those (`loss_fn or default_loss`)."""
    if type(value) is ast.Name:
        return True
    if type(value) is ast.BoolOp:
        return any(_may_be_function(v, binds) for v in value.values)
    if type(value) is ast.IfExp:
        return _may_be_function(value.body, binds) or _may_be_function(value.orelse, binds)
    return binding(value, binds)


def fresh(value: ast.expr) -> bool:
    """None, zero, or an empty list, dict or tuple: a value started afresh."""
    if isinstance(value, ast.Constant):
        return value.value is None or (type(value.value) in (int, float) and value.value == 0)
    return isinstance(value, (ast.List, ast.Tuple)) and not value.elts or isinstance(value, ast.Dict) and not value.keys


def _said(fact: CodeFact) -> tuple[bool, str, str]:
    return isinstance(fact, LocalFact), fact.facet, fact.value


def _taken(node: ast.ClassDef, harmless: Callable[[ast.Call], bool]) -> set[str]:
    taken: set[str] = set()
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        passed = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(call.func, ast.Attribute):
            passed.append(call.func.value)
        own = [p.attr for p in passed if isinstance(p, ast.Attribute) and isinstance(p.value, ast.Name) and p.value.id == "self"]
        if own and not harmless(call):
            taken.update(own)
    return taken
