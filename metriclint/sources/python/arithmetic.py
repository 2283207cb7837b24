"""What arithmetic makes of the values it combines, as far as the code knowledge base
(rules/code/units.yaml, elements.yaml, loops.yaml) can tell: sums and differences keep a unit,
a sum over a count is a mean, a count over a duration a rate, `x * 1000` converts seconds to
milliseconds. CodeReader (code_reader.py) asks it while the walk follows a value.
"""

from __future__ import annotations

import ast
from typing import Iterable

from metriclint.knowledge import numbers
from metriclint.knowledge.code_knowledge import Knowledge
from metriclint.model import Atom, CodeFact, Derived, ResultOf
from metriclint.sources.python.code_shapes import counts_devices, ends_with, is_number, last_word, product_factors
from metriclint.sources.python.text import PythonText

_OPERATORS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.RShift: ">>"}
_ORIGIN_WIDTH = 60
_DURATIONS = frozenset({"seconds", "milliseconds", "microseconds", "nanoseconds"})


class Arithmetic:
    """The facts one file's code makes: of a construct (`derived`), a fact the walk works out
    itself (`fact`), and of arithmetic; each cites the code it comes from (`origin`)."""

    def __init__(self, path: str, text: PythonText, knowledge: Knowledge, constants: dict[str, float]) -> None:
        self.path, self.text, self.knowledge, self.constants = path, text, knowledge, constants

    def derived(self, construct: str, node: ast.AST, atoms: Iterable[Atom]) -> frozenset[Atom]:
        """The facts a construct (rules/code/ `derivations`) makes of a value with these atoms."""
        have = frozenset((a.facet, a.value) for a in atoms if isinstance(a, CodeFact))
        span, origin = self.text.span(self.path, node), self.origin(node)
        found: set[Atom] = set()
        for d in self.knowledge.derive(construct, have):
            for facet, value in d.gives:
                also = () if have & set(d.unless) else tuple(v for f, v in d.also if f == facet)
                needs = tuple(f"{f}={v}" for f, v in d.also_with) if also else ()
                found.add(CodeFact(facet, value, span, origin, d.says, also=also, also_with=needs))
        return frozenset(found)

    def fact(self, facet: str, value: str, node: ast.AST, says: str) -> CodeFact:
        """A fact the walk works out itself (which policies a log-ratio compares), made here."""
        return CodeFact(facet, value, self.text.span(self.path, node), self.origin(node), says)

    def origin(self, node: ast.AST) -> str:
        code = " ".join(self.text.segment(node).split())
        return code if len(code) <= _ORIGIN_WIDTH else code[: _ORIGIN_WIDTH - 1] + "…"

    def arithmetic(
        self,
        node: ast.AST,
        operator: ast.operator,
        left: frozenset[Atom],
        right: frozenset[Atom],
        right_node: ast.expr,
        counted: bool = False,
    ) -> frozenset[Atom]:
        """Sums, differences and unit conversions keep the facets listed in units.yaml, and what
        both operands share of elements.yaml's `kept_when_shared`; a sum divided by a count
        (`counted`) is a mean, a rescaled last value still the last one."""
        op = _OPERATORS.get(type(operator))
        every = [a for a in left if isinstance(a, CodeFact)]
        facts = [a for a in every if a.facet in self.knowledge.kept_by_arithmetic]
        if op is None:
            return frozenset()
        other = {(a.facet, a.value) for a in right if isinstance(a, CodeFact)}
        shared = frozenset(a for a in every if a.facet in self.knowledge.kept_when_shared and (a.facet, a.value) in other)
        by = numbers.value(right_node, self.constants.get)
        constructs = (("averaging",) if op == "/" and counted else ()) + (("rescaling",) if op in "*/" else ())
        if op == "/" and by is not None and isinstance(node, ast.BinOp) and 1 < _added_terms(node.left) == by:
            constructs += ("terms-mean",)  # `(real + fake) / 2`
        derived = shared | frozenset().union(*(self.derived(c, node, every) for c in constructs)) | self._deferred(node, constructs, left)
        if by is not None and op in "*/":
            derived |= self._converted(node, op, by, left)
        if op in "+-":
            if is_number(right_node):
                return frozenset(facts)
            if op == "-" and not other and isinstance(right_node, (ast.Name, ast.Attribute, ast.Subscript)):
                # `time() - start`: a clock read now less a reading kept from before (units.yaml)
                return frozenset(a for a in facts if a.facet == "unit" and a.value in _DURATIONS)
            return frozenset(a for a in facts if (a.facet, a.value) in other) | shared
        result: set[Atom] = {a for a in facts if a.facet != "unit"} | derived | self._flops(node) | self._tokens(node, op, facts)
        durations = [a for a in right if isinstance(a, CodeFact) and a.facet == "unit" and a.value in _DURATIONS]
        if op == "/" and durations:
            counts = facts or self._samples(node)
            result |= {a for a in every if a.facet in self.knowledge.kept_by_rate} | self._rates(node, counts, durations[0])
        if (
            op in "*/"
            and by is None
            and (counted or last_word(right_node) in self.knowledge.counts)
            and not any(a.facet == "unit" for a in right if isinstance(a, CodeFact))
        ):
            result |= {a for a in facts if a.facet == "unit" and a.value in _DURATIONS}  # the time of one iteration, GPU-seconds
        if op == "/" and not any(a.facet == "scope" and a.value == "global" for a in every) and self.shares(right_node):
            kept = facts if not isinstance(right_node, ast.BinOp) else []  # `x / world_size` alone: in x's unit
            result |= set(kept) | self.derived("share", node, every)
        for fact in facts:
            unit = self.knowledge.conversions.get((fact.value, op, by)) if fact.facet == "unit" and by is not None else None
            if unit is not None:
                says = f"converts {fact.value} to {unit} ({fact.origin} {fact.says})"
                result.add(CodeFact("unit", unit, self.text.span(self.path, node), self.origin(node), says))
                result |= {a for a in every if a.facet in self.knowledge.kept_by_conversion}
        return frozenset(result)

    def shares(self, divisor: ast.expr) -> bool:
        """Whether dividing by `divisor` takes one device's share (rules/code/ranks.yaml `devices`)."""
        return counts_devices(divisor, self.knowledge.devices, self.knowledge.subgroups)

    def _deferred(self, node: ast.AST, constructs: tuple[str, ...], left: frozenset[Atom]) -> frozenset[Atom]:
        """What these constructs make of a project call's result, which only the project-wide step
        can tell (model.Derived): `kept_total(x, mask) / mask.sum()` is a mean when that call's
        result is a sum."""
        results = frozenset(a for a in left if isinstance(a, Derived) or (isinstance(a, ResultOf) and a.callee))
        if not results or not constructs:
            return frozenset()
        span, origin = self.text.span(self.path, node), self.origin(node)
        gives = tuple(
            (*d.given, CodeFact(facet, value, span, origin, d.says))
            for construct in constructs
            for d in self.knowledge.derivations.get(construct, ())
            if d.given is not None
            for facet, value in d.gives
        )
        return frozenset({Derived(results, gives, tuple(sorted(self.knowledge.kept_by_arithmetic - {"unit"})))}) if gives else frozenset()

    def _converted(self, node: ast.AST, op: str, by: float, left: frozenset[Atom]) -> frozenset[Atom]:
        """A unit conversion (units.yaml `conversions`) of a value only the project-wide step can
        tell, a parameter or a project call's result: `peak_bytes() / 2**30` is in GiB, and still
        a peak, where that call's result is in bytes."""
        later = frozenset(a for a in left if isinstance(a, (str, Derived)) or (isinstance(a, ResultOf) and a.callee))
        if not later:
            return frozenset()
        span, origin = self.text.span(self.path, node), self.origin(node)
        gives = tuple(
            ("unit", unit, CodeFact("unit", gives, span, origin, f"converts {unit} to {gives}"))
            for (unit, how, divisor), gives in self.knowledge.conversions.items()
            if how == op and divisor == by
        )
        if not gives:
            return frozenset()
        kept = tuple(sorted(self.knowledge.kept_by_arithmetic - {"unit"}))
        return frozenset({Derived(later, gives, kept, tuple(sorted(self.knowledge.kept_by_conversion)))})

    def _rates(self, node: ast.AST, counts: list[CodeFact], duration: CodeFact) -> set[Atom]:
        """A count over a duration: a rate in the count's unit per second (units.yaml `rates`)."""
        found: set[Atom] = set()
        for count in counts:
            unit = self.knowledge.rates.get((count.value, duration.value)) if count.facet == "unit" else None
            if unit is not None:
                says = f"divides {count.value} ({count.origin} {count.says}) by a duration in {duration.value} ({duration.origin}), a rate in {unit}"
                found.add(CodeFact("unit", unit, self.text.span(self.path, node), self.origin(node), says))
        return found

    def _samples(self, node: ast.AST) -> list[CodeFact]:
        """A dividend of no unit named as a batch size: a number of samples (units.yaml `sample_counts`)."""
        left = node.left if isinstance(node, ast.BinOp) else None
        if left is None or not ends_with(left, self.knowledge.sample_counts):
            return []
        says = "is named as a batch size, a number of samples"
        return [CodeFact("unit", "samples", self.text.span(self.path, left), self.origin(left), says)]

    def _tokens(self, node: ast.AST, op: str, facts: list[CodeFact]) -> set[Atom]:
        """A sample rate times a sequence length: a token rate (units.yaml `token_rates`)."""
        if op != "*" or not isinstance(node, ast.BinOp):
            return set()
        rates = [(f, self.knowledge.token_rates[f.value]) for f in facts if f.facet == "unit" and f.value in self.knowledge.token_rates]
        if not rates or not ends_with(node.right, self.knowledge.sample_tokens):
            return set()
        span, origin = self.text.span(self.path, node), self.origin(node)
        says = "multiplies a rate in {} ({} {}) by the tokens in a sample ({}), a rate in {}"
        tokens = self.origin(node.right)
        return {CodeFact("unit", gives, span, origin, says.format(f.value, f.origin, f.says, tokens, gives)) for f, gives in rates}

    def _flops(self, node: ast.AST) -> set[Atom]:
        """A product of a parameter count and a token count, times constants and factors: a
        FLOP count, scaled as the parameter count is named (units.yaml `flops`)."""
        if not self.knowledge.flops or not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
            return set()
        factors = product_factors(node)
        if any(f is None for f in factors):
            return set()
        names = [n.lower().split("_") for n in factors if n]
        for flops in self.knowledge.flops:
            if flops.counts(names):
                says = (
                    f"multiplies a parameter count by a token count ({' * '.join(n for n in factors if n)}), a FLOP count in {flops.gives}"
                )
                return {CodeFact("unit", flops.gives, self.text.span(self.path, node), self.origin(node), says)}
        return set()


def _added_terms(node: ast.expr) -> int:
    """How many terms `a + b + c` adds, none of them a number (0: not such a sum)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _added_terms(node.left), _added_terms(node.right)
        return left + right if left and right else 0
    return 0 if is_number(node) else 1
