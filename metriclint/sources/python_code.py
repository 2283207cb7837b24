"""What Python code computes, as far as the code knowledge base (rules/code/) can tell.

The Python source asks this module about calls, attribute reads and arithmetic while it
follows values through a function; the answers are atoms (model.Atom). Names are resolved
through the file's imports only: user code is never imported or run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath
from typing import Callable

import libcst as cst

from metriclint.knowledge import Knowledge, Known
from metriclint.model import Atom, CodeFact, ResultOf, Span

_OPERATORS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.RightShift: ">>",
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/", cst.RightShiftAssign: ">>",
}
_ORIGIN_WIDTH = 60


def module_name(path: str) -> tuple[str, list[str]]:
    """The dotted module a file path stands for, and its package: `pkg/mod.py` -> `pkg.mod`, [pkg]."""
    parts = [p for p in PurePosixPath(path).with_suffix("").parts if p not in ("/", ".", "..")]
    if parts and parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


class CodeReader:
    """Per-file answers: imports seen so far, knowledge-base matches, unit arithmetic."""

    def __init__(self, path: str, tree: cst.Module, known: Knowledge, span: Callable[[cst.CSTNode], Span]) -> None:
        self.module, self.package = module_name(path)
        self.tree, self.knowledge, self.span = tree, known, span
        self.imports: dict[str, str] = {}

    # -- names ----------------------------------------------------------------------------

    def imported(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = dotted
            else:
                head = dotted.split(".")[0]
                self.imports[head] = head

    def imported_from(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        base = _dotted(node.module) if node.module is not None else ""
        level = len(node.relative)
        if level:
            if level - 1 > len(self.package):
                return
            base = ".".join([*self.package[: len(self.package) - level + 1], *([base] if base else [])])
        for alias in node.names:
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name):
                self.imports[local.value] = f"{base}.{_dotted(alias.name)}".lstrip(".")

    def chain(self, node: cst.BaseExpression, objects: dict[str, str]) -> str | None:
        """`psutil.Process(pid).memory_info()` -> `psutil.Process().memory_info()`, through imports
        and local names that hold a knowledge-base object; None when the head is unknown."""
        if isinstance(node, cst.Name):
            return objects.get(node.value) or self.imports.get(node.value)
        if isinstance(node, cst.Attribute):
            base = self.chain(node.value, objects)
            return f"{base}.{node.attr.value}" if base else None
        if isinstance(node, cst.Call):
            base = self.chain(node.func, objects)
            return f"{base}()" if base else None
        return None

    def callee(self, func: cst.BaseExpression, classes: list[str]) -> str | None:
        """The dotted name a call may reach in the project: imported, defined here, or `self.x`."""
        if isinstance(func, cst.Name):
            return self.imports.get(func.value) or f"{self.module}.{func.value}"
        if isinstance(func, cst.Attribute):
            if isinstance(func.value, cst.Name) and func.value.value == "self" and classes:
                return f"{self.module}.{classes[-1]}.{func.attr.value}"
            base = self.chain(func.value, {})
            return f"{base}.{func.attr.value}" if base and "(" not in base else None
        return None

    # -- what values are --------------------------------------------------------------------

    def call(self, node: cst.Call, element: tuple[int, int] | None, objects: dict[str, str], site: ResultOf) -> frozenset[Atom]:
        """What a call returns: known facts, or `site` (a project call, for codefacts.py)."""
        entry = self.knowledge.chains.get(self.chain(node, objects) or "")
        if entry is None and isinstance(node.func, cst.Attribute):
            method = self.knowledge.methods.get(node.func.attr.value)
            if method is not None and (method.arguments is None or method.arguments == len(node.args)):
                entry = method
        if entry is not None:
            return self._facts(entry, node) if _takes(entry, element) else frozenset()
        return frozenset({replace(site, element=element[0] if element else None)}) if site.callee else frozenset()

    def expression(self, node: cst.Attribute, objects: dict[str, str]) -> frozenset[Atom]:
        entry = self.knowledge.chains.get(self.chain(node, objects) or "")
        return self._facts(entry, node) if entry is not None else frozenset()

    def element(self, atoms: frozenset[Atom], element: tuple[int, int] | None) -> frozenset[Atom]:
        """One element of a value: only a project call's result can still be followed."""
        if element is None:
            return atoms
        return frozenset(
            replace(a, element=element[0]) for a in atoms if isinstance(a, ResultOf) and a.element is None
        )

    def arithmetic(
        self,
        node: cst.CSTNode,
        operator: cst.CSTNode,
        left: frozenset[Atom],
        right: frozenset[Atom],
        right_node: cst.BaseExpression,
    ) -> frozenset[Atom]:
        """Sums, differences and unit conversions keep the facets listed in units.yaml."""
        op = _OPERATORS.get(type(operator))
        kept = self.knowledge.kept_by_arithmetic
        facts = [a for a in left if isinstance(a, CodeFact) and a.facet in kept]
        if op is None or not facts:
            return frozenset()
        if op in "+-":
            if _number(right_node):
                return frozenset(facts)
            other = {(a.facet, a.value) for a in right if isinstance(a, CodeFact)}
            return frozenset(a for a in facts if (a.facet, a.value) in other)
        by = "".join(self.tree.code_for_node(right_node).split())
        result: set[Atom] = {a for a in facts if a.facet != "unit"}
        for fact in facts:
            unit = self.knowledge.conversions.get((fact.value, op, by)) if fact.facet == "unit" else None
            if unit is not None:
                says = f"converts {fact.value} to {unit} ({fact.origin} {fact.says})"
                result.add(CodeFact("unit", unit, self.span(node), self._origin(node), says))
        return frozenset(result)

    def constant_index(self, node: cst.Subscript) -> int | None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            value = node.slice[0].slice.value
            if isinstance(value, cst.Integer):
                return value.evaluated_value  # 0xF, 0o7, 0b1 and 1_000 too
        return None

    def _facts(self, entry: Known, node: cst.CSTNode) -> frozenset[Atom]:
        span = self.span(node)
        origin = entry.pattern.removesuffix("()") if not entry.method else self._origin(node)
        facts: set[Atom] = {CodeFact(facet, value, span, origin, entry.says) for facet, value in entry.facts}
        if isinstance(node, cst.Call) and (entry.norm_keyword or entry.norm_positions):
            norm = self._norm(entry, node)
            if norm is not None:
                facts.add(CodeFact("norm", norm[0], span, origin, norm[1]))
        return frozenset(facts)

    def _norm(self, entry: Known, node: cst.Call) -> tuple[str, str] | None:
        """The norm a call computes, from its norm_type argument or the default."""
        if any(arg.star for arg in node.args):
            return None
        keyword = next((a.value for a in node.args if a.keyword and a.keyword.value == entry.norm_keyword), None)
        positional = [a.value for a in node.args if a.keyword is None]
        candidates = [p for p in entry.norm_positions if p < len(positional)]
        if keyword is None and not candidates:
            default = self.knowledge.default_norm
            return default, f"computes the {default} norm (the default norm_type)"
        if keyword is None and len(entry.norm_positions) > 1:
            return None  # an API whose signature we cannot tell apart
        written = self.tree.code_for_node(keyword if keyword is not None else positional[candidates[0]])
        norm = self.knowledge.norm_types.get("".join(written.split()))
        return (norm, f"computes the {norm} norm (norm_type={written})") if norm else None

    def _origin(self, node: cst.CSTNode) -> str:
        code = " ".join(self.tree.code_for_node(node).split())
        return code if len(code) <= _ORIGIN_WIDTH else code[: _ORIGIN_WIDTH - 1] + "…"


def _dotted(node: cst.BaseExpression) -> str:
    """`a.b.c` as written in an import."""
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


def _takes(entry: Known, element: tuple[int, int] | None) -> bool:
    """Whether the part of the result in use is the one the facts are about."""
    index, size = element if element is not None else (None, None)
    return entry.element == index and (entry.of is None or entry.of == size)


def _number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))
