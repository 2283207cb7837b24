"""Which definition of the project a dotted name reaches, as a file's imports spell it.

A file's module name comes from its path (`src/pkg/train.py` is `src.pkg.train`), while an
absolute import names the package as it is installed (`pkg.train`): a name that is no
definition's own reaches the one definition whose name ends in it (two parts at least)."""

from __future__ import annotations

from collections import defaultdict
from typing import Generic, Mapping, TypeVar

T = TypeVar("T")


class Dotted(Generic[T]):
    def __init__(self, named: Mapping[str, T]) -> None:
        self.named = named
        self.by_last_part: dict[str, list[str]] = defaultdict(list)
        for name in named:
            self.by_last_part[last_part(name)].append(name)
        self.by_suffix: dict[str, T | None] = {}

    def resolve(self, name: str) -> T | None:
        if name in self.named:
            return self.named[name]
        if name not in self.by_suffix:  # asked about the names imports use, not every suffix of every definition
            ending = "." + name
            found = [n for n in self.by_last_part.get(last_part(name), ()) if n.endswith(ending)] if "." in name else []
            self.by_suffix[name] = self.named[found[0]] if len(found) == 1 else None
        return self.by_suffix[name]

    def through_packages(self, name: str) -> T | None:
        """`resolve`, or the one definition of that last name inside the package the name is
        imported from, which re-exports it (`from pkg.utils import timer`, defined in
        pkg/utils/profile.py and imported in pkg/utils/__init__.py)."""
        found = self.resolve(name)
        if found is not None or "." not in name:
            return found
        package = "." + name.rsplit(".", 1)[0] + "."
        above = [n for n in self.by_last_part.get(last_part(name), ()) if package in "." + n]
        return self.named[above[0]] if len(above) == 1 else None

    def named_like(self, name: str) -> list[T]:
        """The definitions whose own last part is the name's."""
        return [self.named[n] for n in self.by_last_part.get(last_part(name), ())]


def last_part(name: str) -> str:
    return name.rsplit(".", 1)[-1]
