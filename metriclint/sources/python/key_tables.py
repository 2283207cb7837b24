"""Tables that say how each key of a dict of metrics is reduced, as a call passes them beside
the dict it hands over: `combine(records, rule_by_key=RULES)` with a module's `RULES =
{"wait_max": "max"}`, or the caller's own parameter, which its callers fill in turn. A helper
that looks each key up in such a table (sources/python/reducers.py) reduces the key's values
as the table says (evidence/code_claims.py, CallGraph.reduction)."""

from __future__ import annotations

import ast
from typing import Container

from metriclint.model import ANY_PLACE, KeyTable
from metriclint.sources.python.call_names import Argument
from metriclint.sources.python.flow import Scope

Entries = tuple[tuple[str, str], ...]
NOT_KNOWN = KeyTable()


def literal_table(node: ast.expr) -> Entries | None:
    """`{"wait_max": "max", ...}`: every key and value a string written out; None otherwise."""
    if not isinstance(node, ast.Dict) or not node.keys:
        return None
    found = []
    for key, value in zip(node.keys, node.values):
        if not (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            return None
        found.append((key.value, value.value))
    return tuple(found)


class ModuleTables:
    """The names a module binds once, at its top level, to a table written out; read when a
    call first hands a dict over (most files hand none)."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self.found: dict[str, Entries] | None = None

    def get(self, name: str) -> Entries | None:
        if self.found is None:
            self.found = module_tables(self.module)
        return self.found.get(name)


def module_tables(module: ast.Module) -> dict[str, Entries]:
    """The names a module binds once, at its top level, to a table written out."""
    bound: dict[str, list[Entries | None]] = {}
    for statement in module.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            target, value = statement.targets[0].id, statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.value is not None:
            target, value = statement.target.id, statement.value
        else:
            continue
        bound.setdefault(target, []).append(literal_table(value))
    return {name: tables[0] for name, tables in bound.items() if len(tables) == 1 and tables[0] is not None}


def passed(
    given: list[Argument], handed: int | str, name: str, scope: Scope, module: ModuleTables
) -> tuple[tuple[int | str, KeyTable], ...]:
    """What a call that hands over the dict `name` at `handed` passes at each of its other
    places: a table written out or bound at the module's top level, a parameter of the caller,
    None (no table), or something not known (a name the caller binds itself, a parameter too).
    Only for a dict the caller put values in or gathered from the ranks, not a parameter it
    passes on: most hand-overs are those, and pass nothing a helper reduces by."""
    if len(given) < 2 or not (scope.stored.get(name) or name in scope.gathered):
        return ()
    found: list[tuple[int | str, KeyTable]] = []
    for position, arg in enumerate(given):
        if arg.star:
            return ((ANY_PLACE, NOT_KNOWN),)
        where = arg.keyword or position
        if where != handed:
            found.append((where, _table(arg.value, scope.params, scope.carries, module)))
    return tuple(found)


def _table(value: ast.expr, params: tuple[str, ...], local: Container[str], module: ModuleTables) -> KeyTable:
    if isinstance(value, ast.Constant) and value.value is None:
        return KeyTable(known=True)
    if isinstance(value, ast.Name):
        if value.id in local:
            return NOT_KNOWN
        if value.id in params:
            return KeyTable(param=value.id)
        entries = module.get(value.id)
        return KeyTable(entries, known=True) if entries is not None else NOT_KNOWN
    entries = literal_table(value)
    return KeyTable(entries, known=True) if entries is not None else NOT_KNOWN
