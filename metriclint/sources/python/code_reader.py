"""What Python code computes, as far as the code knowledge base (rules/code/) can tell.

The Python source asks this module about calls, attribute reads and arithmetic while it
follows values through a function; the answers are atoms (model.Atom). Names are resolved
through the file's imports only: user code is never imported or run.
"""

from __future__ import annotations

import ast
import builtins
import sys
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Callable, Mapping

from metriclint.base.identifiers import class_like
from metriclint.knowledge import numbers
from metriclint.knowledge.code_entries import Known
from metriclint.knowledge.code_knowledge import Knowledge
from metriclint.model import UNKNOWN_OBJECT, Atom, CodeFact, Derived, ResultOf, estimating
from metriclint.sources.python.arithmetic import Arithmetic
from metriclint.sources.python.call_names import arguments, called_name, module_name
from metriclint.sources.python.code_shapes import (
    chained_methods,
    defined_names,
    is_number,
    last_word,
    numeric_constants,
    subject,
    takes_element,
)
from metriclint.sources.python.text import PythonText

_BUILTINS = frozenset(dir(builtins))
_STANDARD_LIBRARY = frozenset(sys.stdlib_module_names)
_EXPONENTIALS = frozenset({"torch.exp", "math.exp", "numpy.exp"})
Roots = Callable[[ast.expr], frozenset[Atom]]


class CodeReader(Arithmetic):
    """Per-file answers: imports seen so far, knowledge-base matches, unit arithmetic (arithmetic.py)."""

    def __init__(self, path: str, tree: ast.Module, text: PythonText, known: Knowledge) -> None:
        super().__init__(path, text, known, numeric_constants(tree.body))
        self.module, self.package = module_name(path)
        self.package_head = self.module.split(".", 1)[0]
        self.imports: dict[str, str] = {}
        self.defined = frozenset(defined_names(tree.body))

    # -- names ----------------------------------------------------------------------------

    def standard(self, callee: str) -> bool:
        """Whether a callee is the standard library's (`os.path.join`, `json.dump`): what it is
        handed never reaches a project function, as a builtin's does not. A module of the
        project's own top package by the same name (`code/`) keeps its calls followed."""
        head = callee.split(".", 1)[0]
        return head in _STANDARD_LIBRARY and head != self.package_head

    def imported(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname is not None:
                self.imports[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.imports[head] = head

    def imported_from(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            if node.level - 1 > len(self.package):
                return
            base = ".".join([*self.package[: len(self.package) - node.level + 1], *([base] if base else [])])
        for alias in node.names:
            if alias.name != "*":
                self.imports[alias.asname or alias.name] = f"{base}.{alias.name}".lstrip(".")

    def import_path(self, node: ast.expr) -> str | None:
        """A name or an attribute as the file's imports name it (`chain` with no local object):
        what a decorator, a base class or a called function is."""
        return self.chain(node, {})

    def chain(self, node: ast.expr, objects: dict[str, str]) -> str | None:
        """`psutil.Process(pid).memory_info()` -> `psutil.Process().memory_info()`, through imports
        and local names (or `self.X`, held.py) that hold a knowledge-base object; None when the head is unknown."""
        if type(node) is ast.Name:
            found = objects.get(node.id) or self.imports.get(node.id)
            if found is None and node.id in _BUILTINS and node.id not in self.defined:
                return f"builtins.{node.id}"
            return found
        if type(node) is ast.Attribute:
            if type(node.value) is ast.Name and node.value.id == "self" and f"self.{node.attr}" in objects:
                return objects[f"self.{node.attr}"]  # an object the class keeps (held.py)
            base = self.chain(node.value, objects)
            return f"{base}.{node.attr}" if base else None
        if type(node) is ast.Call:
            base = self.chain(node.func, objects)
            return f"{base}()" if base else None
        return None

    def callee(self, func: ast.expr, classes: list[str], instances: Mapping[str, str] | None = None) -> str | None:
        """The dotted name a call may reach in the project: imported, defined here, `self.x`, or
        a method of an object whose class is known (`instances`: a name -> its class): `self.
        tracker.log_to` is `module.Class.tracker.log_to` until the project-wide step knows what
        `self.tracker` holds (evidence/callees.py); `?.log_to` for an object nothing names."""
        if type(func) is ast.Name:
            if func.id in _BUILTINS and func.id not in self.defined and func.id not in self.imports:
                return None  # `len(x)`, `print(x)`: Python's own, never a project function
            return self.imports.get(func.id) or f"{self.module}.{func.id}"
        if type(func) is ast.Attribute:
            owner = func.value
            if type(owner) is ast.Name and owner.id == "self" and classes:
                return f"{self.module}.{classes[-1]}.{func.attr}"
            if type(owner) is ast.Name and instances and owner.id in instances:
                return f"{instances[owner.id]}.{func.attr}"
            if type(owner) is ast.Attribute and type(owner.value) is ast.Name and instances and owner.value.id in instances:
                # `cfg.evaluator.build`: a method of what an attribute of an object of a told class holds
                return f"{instances[owner.value.id]}.{owner.attr}.{func.attr}"
            if type(owner) is ast.Attribute and classes and (held := _own_attributes(owner)) is not None:
                # `self.tracker.log_to`, `self.config.method.loss`: through what each attribute holds
                return f"{self.module}.{classes[-1]}.{held}.{func.attr}"
            base = self.chain(owner, {})
            if base is None and instances is not None:
                return f"{UNKNOWN_OBJECT}{func.attr}"
            if base and base.endswith("()") and base.count("(") == 1:  # `get_timers().write`: what the call returns
                return f"{base}.{func.attr}"
            return f"{base}.{func.attr}" if base and "(" not in base else None
        return None

    def instance(self, value: ast.expr) -> str | None:
        """The class a constructor call makes an instance of (`Tracker(...)`), or an annotation
        names (`tracker: Tracker`), dotted as the file's imports name it; None for anything else."""
        func = value.func if type(value) is ast.Call else value
        if type(func) in (ast.Name, ast.Attribute) and class_like(called_name(func)):
            return self.callee(func, [])
        return None

    # -- what values are --------------------------------------------------------------------

    def call(
        self, node: ast.Call, element: tuple[int, int] | None, objects: dict[str, str], site: ResultOf, roots: Roots
    ) -> frozenset[Atom]:
        """What a call returns: known facts, or `site` (a project call, for evidence/code_claims.py).
        `roots` tells what an argument is, for a reduction that keeps some of its facts."""
        entry = self._entry(node, objects)
        if entry is not None:
            applied = self._applied(entry, node)
            if entry.writes is not None or not takes_element(entry, element) or applied is None:
                return frozenset()
            facts = self._facts(applied, node)
            return self._over_ranks(facts, applied, node, objects, roots) | self._kept(applied, node, roots)
        if self.exponential(node, objects):
            return self.derived("exponential", node, roots(node.args[0] if node.args else node.func.value))  # type: ignore[attr-defined]
        if not site.callee or site.callee.startswith(UNKNOWN_OBJECT):
            return frozenset()
        return frozenset({site if element is None else site.of(element[0])})  # a site is read with no element

    def writes(self, node: ast.Call, objects: dict[str, str]) -> tuple[str, frozenset[CodeFact]] | None:
        """A call that writes its result into a named argument (`all_reduce(t)`): that name and
        what it holds afterwards, as far as the knowledge base says."""
        found = self._entry(node, objects)
        entry = self._applied(found, node) if found is not None else None
        if entry is None or entry.writes is None or len(node.args) <= entry.writes:
            return None
        target = node.args[entry.writes]
        if not isinstance(target, ast.Name):
            return None
        return target.id, frozenset(f for f in self._facts(entry, node) if isinstance(f, CodeFact))

    def negation(self, node: ast.UnaryOp, operand: frozenset[Atom]) -> frozenset[Atom]:
        """`-x`: what negating changes (a log-probability becomes an NLL), the other facts kept."""
        derived = self.derived("negation", node, operand)
        changed = {f.facet for f in derived if isinstance(f, CodeFact)}
        return derived | frozenset(a for a in operand if isinstance(a, CodeFact) and a.facet not in changed and a.facet != "reduction")

    def _entry(self, node: ast.Call, objects: dict[str, str]) -> Known | None:
        """The knowledge-base entry a call matches: its full name, its function's own name, or
        its methods, longest run first (`log_softmax().gather` before `gather`). A method of
        tensors only (`objects_only`) is neither a module's function nor the project's own
        method, called on `self`."""
        func = node.func
        if not self._may_match(func, objects):
            return None
        entry = self.knowledge.chains.get(self.chain(node, objects) or "")
        if entry is not None:
            return entry
        name = called_name(func)
        if name in self.knowledge.functions:
            return self.knowledge.functions[name]
        methods = chained_methods(node)
        on_module = isinstance(func, ast.Attribute) and "(" not in (self.chain(func.value, objects) or "(")
        on_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        for start in range(len(methods)):
            method = self.knowledge.methods.get("().".join(methods[start:]))
            if method is not None and (method.arguments is None or method.arguments == len(node.args) + len(node.keywords)):
                return None if method.objects_only and (on_module or on_self) else method
        return None

    def _may_match(self, func: ast.expr, objects: dict[str, str]) -> bool:
        """Whether a call may match an entry, by the last name its chain would end in: the
        called name, the imported one for an alias; a name or `self.X` holding a known object
        ends in that object's chain, and a call of a call's result in anything."""
        if isinstance(func, ast.Attribute):
            owner = func.value
            if isinstance(owner, ast.Name) and owner.id == "self" and f"self.{func.attr}" in objects:
                return True
            return func.attr in self.knowledge.call_names
        if isinstance(func, ast.Name):
            if func.id in objects:
                return True
            return func.id in self.knowledge.call_names or self.imports.get(func.id, "").rsplit(".", 1)[-1] in self.knowledge.call_names
        return True

    def applying(self, node: ast.Call, objects: dict[str, str]) -> Known | None:
        """The knowledge-base entry this call is a case of, if any (`_applied`)."""
        entry = self._entry(node, objects)
        return self._applied(entry, node) if entry is not None else None

    def _applied(self, entry: Known, node: ast.Call) -> Known | None:
        """The entry as this call is a case of it, or None when it is not: not a clamp like
        `max(n, 1)`, not a collective over a sub-group; without the facts its `unless` takes
        back when the call passes that argument (`reduction="sum"` to a loss)."""
        if entry.clamps and any(is_number(arg) for arg in node.args):
            return None
        if entry.receivers and last_word(subject(entry, node)) not in entry.receivers:
            return None
        if not _passes_unless(entry, node):
            return entry
        if not entry.unless_facets:
            return None
        return replace(entry, facts=tuple(f for f in entry.facts if f[0] not in entry.unless_facets))

    def _kept(self, entry: Known, node: ast.Call, roots: Roots) -> frozenset[Atom]:
        """The facts of the reduced value (the receiver of a method, else the first argument)
        that a reduction keeps: a mean of seconds is in seconds. An entry with no facts of its
        own (torch.cat, masked_fill: rules/code/elements.yaml) only passes them on, and its step
        is added to what each says, so a finding shows how the value got there."""
        reduced = self._picked(entry, node) if entry.picks else subject(entry, node)
        if not entry.keeps or reduced is None:
            return frozenset()
        atoms = roots(reduced)
        kept = frozenset(a for a in atoms if isinstance(a, CodeFact) and a.facet in entry.keeps)
        if entry.facts:
            return kept | Derived.later(entry.keeps, atoms)
        step = f"; then {self._named(entry, node)} (line {self.text.span(self.path, node).line}) {entry.says}"
        return frozenset(replace(a, says=a.says + step) for a in kept) | Derived.later(entry.keeps, atoms)

    def _over_ranks(self, facts: frozenset[Atom], entry: Known, node: ast.Call, objects: dict[str, str], roots: Roots) -> frozenset[Atom]:
        """`facts` of a reduction taken over what a gather joined from every rank
        (`accelerator.gather(reward_std).mean()`): each element is one rank's value, so the
        result is also an estimate of that value's own statistic (the mean of the ranks'
        standard deviations is a standard deviation, over ranks), which a name or text may
        state (CodeFact.also). A gather is an entry that picks the value it joins and makes
        it global (rules/code/collectives.yaml)."""
        reduced = subject(entry, node) if any(isinstance(f, CodeFact) and f.facet == "reduction" for f in facts) else None
        if not isinstance(reduced, ast.Call):
            return facts
        gather = self._entry(reduced, objects)
        if gather is None or not gather.picks or ("scope", "global") not in gather.facts:
            return facts
        joined = self._picked(gather, reduced)
        inner = [a for a in roots(joined) if isinstance(a, CodeFact) and a.facet == "reduction"] if joined is not None else []
        return frozenset(estimating(f, inner) if isinstance(f, CodeFact) and f.facet == "reduction" else f for f in facts)

    def _picked(self, entry: Known, node: ast.Call) -> ast.expr | None:
        """The one argument among `entry.picks` that is not a constant, which the result takes
        its elements from (`torch.where(mask, x, 0.0)`: x); None when it takes them from two
        values, or when the arguments cannot be told apart (a keyword, `*args`)."""
        given = [*([node.func.value] if entry.method and isinstance(node.func, ast.Attribute) else []), *node.args]
        if node.keywords or any(isinstance(a, ast.Starred) for a in given) or max(entry.picks) >= len(given):
            return None
        values = [given[p] for p in entry.picks if not self._constant(given[p])]
        return values[0] if len(values) == 1 else None

    def _constant(self, node: ast.expr) -> bool:
        """A constant written in the code (`0.0`, `None`, `-float("inf")`) or a module's
        constant (`PAD = 1.0`): a fill, not a value the result takes elements from."""
        if isinstance(node, ast.UnaryOp):
            return self._constant(node.operand)
        if isinstance(node, ast.Call):
            func, given = node.func, [*node.args, *(k.value for k in node.keywords)]
            return (
                isinstance(func, ast.Name)
                and func.id == "float"
                and "float" not in self.defined
                and all(isinstance(a, ast.Constant) for a in given)
            )
        return isinstance(node, ast.Constant) or numbers.value(node, self.constants.get) is not None

    def exponential(self, node: ast.Call, objects: dict[str, str]) -> bool:
        """`torch.exp(x)`, `math.exp(x)`, `numpy.exp(x)` or `x.exp()`."""
        if called_name(node.func) != "exp" and not (isinstance(node.func, ast.Name) and node.func.id in self.imports):
            return False  # every one of them is called `exp`, or imported under another name
        if isinstance(node.func, ast.Attribute) and node.func.attr == "exp" and not node.args and not node.keywords:
            return (self.chain(node.func.value, objects) or "") not in ("torch", "math", "numpy")
        return (self.chain(node.func, objects) or "") in _EXPONENTIALS and len(node.args) == 1

    def expression(self, node: ast.Attribute, objects: dict[str, str]) -> frozenset[Atom]:
        owner = node.value
        held = isinstance(owner, ast.Name) and owner.id == "self" and f"self.{node.attr}" in objects
        if not held and node.attr not in self.knowledge.attribute_names:
            return frozenset()  # most attributes read are no entry's: told before the chain is spelt out
        entry = self.knowledge.chains.get(self.chain(node, objects) or "")
        return self._facts(entry, node) if entry is not None else frozenset()

    def item(self, node: ast.Subscript, objects: dict[str, str]) -> frozenset[Atom]:
        """An item read by a constant key from a known call's dict (`torch.cuda.memory_stats()["x"]`,
        or from a name bound to that call): the entry whose key pattern it matches."""
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if not isinstance(key, str):
            return frozenset()
        for pattern, entry in self.knowledge.keyed.get(self.chain(node.value, objects) or "", ()):
            if fnmatchcase(key, pattern):
                return self._facts(entry, node)
        return frozenset()

    def element(self, atoms: frozenset[Atom], element: tuple[int, int] | None) -> frozenset[Atom]:
        """One element of a value: a project call's result can still be followed, and what the
        element shares with the whole (rules/code/elements.yaml `kept_by_index`) is known."""
        if element is None:
            return atoms
        followed = frozenset(replace(a, element=element[0]) for a in atoms if isinstance(a, ResultOf) and a.element is None)
        return followed | frozenset(a for a in atoms if isinstance(a, CodeFact) and a.facet in self.knowledge.kept_by_index)

    def constant_index(self, node: ast.Subscript) -> int | None:
        index = node.slice
        if isinstance(index, ast.Constant) and type(index.value) is int:
            return index.value  # 0xF, 0o7, 0b1 and 1_000 too
        return None

    def _facts(self, entry: Known, node: ast.AST) -> frozenset[Atom]:
        span, origin = self.text.span(self.path, node), self._named(entry, node)
        facts: set[Atom] = {CodeFact(facet, value, span, origin, entry.says) for facet, value in entry.facts}
        if isinstance(node, ast.Call) and (entry.norm_keyword or entry.norm_positions):
            norm = self._norm(entry, node)
            if norm is not None:
                facts.add(CodeFact("norm", norm[0], span, origin, norm[1]))
        return frozenset(facts)

    def _norm(self, entry: Known, node: ast.Call) -> tuple[str, str] | None:
        """The norm a call computes, from its norm_type argument or the default."""
        given = arguments(node)
        if any(arg.star for arg in given):
            return None
        keyword = next((a.value for a in given if a.keyword == entry.norm_keyword), None) if entry.norm_keyword else None
        positional = [a.value for a in given if a.keyword is None]
        candidates = [p for p in entry.norm_positions if p < len(positional)]
        if keyword is None and not candidates:
            default = self.knowledge.default_norm
            return default, f"computes the {default} norm (the default norm_type)"
        if keyword is None and len(entry.norm_positions) > 1:
            return None  # an API whose signature we cannot tell apart
        given_order = keyword if keyword is not None else positional[candidates[0]]
        written = self.text.segment(given_order)
        norm = self.knowledge.norm_types.get("".join(written.split()))
        if norm is None and isinstance(given_order, (ast.Name, ast.Attribute)) and self.knowledge.variable_norm:
            norm = self.knowledge.variable_norm
            return norm, f"computes the p-norm of the order {written} holds, which the run chooses"
        return (norm, f"computes the {norm} norm (norm_type={written})") if norm else None

    def _named(self, entry: Known, node: ast.AST) -> str:
        """How a fact names the call it comes from: a function by its full name, a method as written."""
        return entry.pattern.removesuffix("()").removeprefix("builtins.") if not entry.method else self.origin(node)


def _passes_unless(entry: Known, node: ast.Call) -> bool:
    """Whether the call passes the argument the entry's `unless` names."""
    if entry.unless_keyword and any(k.arg == entry.unless_keyword for k in node.keywords):
        return True
    return entry.unless_position is not None and len(node.args) > entry.unless_position


def _own_attributes(node: ast.Attribute) -> str | None:
    """`config.method` for `self.config.method`: a chain of attributes read from `self`, at
    most three deep; None for any other expression."""
    names: list[str] = []
    while type(node) is ast.Attribute and len(names) < 3:
        names.append(node.attr)
        node = node.value  # type: ignore[assignment]
    return ".".join(reversed(names)) if type(node) is ast.Name and node.id == "self" else None
