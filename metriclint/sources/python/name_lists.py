"""Lists of names a module binds at its top level (`PHASES = ["rollout", "update"]`): handed
to a logger keyed by the names it is handed, each name is a key it logs, whether the list is
this module's or imported from another (evidence/logged_bags.py looks that one up)."""

from __future__ import annotations

import ast
from typing import Callable

from metriclint.model import Bag, Held, MetricsEntry, Span
from metriclint.sources.python import strings

_NONE = Bag()


class NameLists:
    def __init__(self, module: str, imports: dict[str, str], span: Callable[[ast.AST], Span]) -> None:
        self.module, self.imports, self.span = module, imports, span
        self.bound: dict[str, Bag] = {}

    def module_bound(self, name: str, value: ast.expr) -> None:
        """`name = value` at the module's top level: a list or tuple of strings only is a list of names."""
        if isinstance(value, (ast.List, ast.Tuple)) and strings.literal_collection(value):
            # every item is a string, as literal_collection says; the test is for the type checker
            texts = [(item, item.value) for item in value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
            self.bound[name] = Bag(tuple(MetricsEntry(text, self.span(item), frozenset()) for item, text in texts))
        else:
            self.bound.pop(name, None)

    def named(self, name: str) -> Bag:
        """The list a module-level name holds: this module's, or another's imported under a
        constant's name (upper case, as PEP 8 writes constants), for the project-wide step."""
        if name in self.bound:
            return self.bound[name]
        imported = self.imports.get(name)
        return Bag(held=(Held("constant", imported),)) if imported is not None and imported.rsplit(".", 1)[-1].isupper() else _NONE

    def exported(self) -> tuple[tuple[str, Bag], ...]:
        """The lists another module may import, by import path: those under a constant's name."""
        return tuple((f"{self.module}.{name}", bag) for name, bag in self.bound.items() if name.isupper())
