"""What a value is, for the walk: the names it holds unchanged, the code facts known about
it, the project calls it comes from (evidence/code_claims.py follows those across files)."""

from __future__ import annotations

import ast
from dataclasses import replace

from metriclint.model import UNKNOWN_OBJECT, Atom, CodeFact, Derived, ResultOf, Span
from metriclint.sources.python import formulas, ranks, scheduled_rates
from metriclint.sources.python.call_names import arguments, called_name
from metriclint.sources.python.code_shapes import same_expression, subject
from metriclint.sources.python.counts import counts_items, masked_mean, selects, unguarded, unmasked
from metriclint.sources.python.flow import Branch, either, shared
from metriclint.sources.python.state import WalkState, child_nodes

# The expressions `roots` reads; of any other it knows nothing (a third of those it is asked about).
_READ = (ast.Name, ast.IfExp, ast.Tuple, ast.List, ast.Subscript, ast.Call, ast.Attribute, ast.BinOp, ast.UnaryOp)


class ValueReader(WalkState):
    """Reads expressions where the walk meets them, in the current scope."""

    def roots(self, value: ast.expr, element: tuple[int, int] | None = None) -> frozenset[Atom]:
        """What `value` is: the names it holds unchanged, the code facts known about it, the
        project calls it comes from; `element` = (index, tuple size) takes one element of it.
        Empty when it computes something new."""
        if type(value) not in _READ:
            return frozenset()  # a constant, a comparison, a comprehension...: computes something new
        scope = self.scopes[-1]
        if type(value) is ast.Name:
            return self.code.element(scope.roots(value.id), element)
        if type(value) is ast.IfExp:
            if element is None and self._shared_else_whole(value):
                return self.roots(value.body)
            return either(self.branch(value.body, element), self.branch(value.orelse, element))[0]
        if isinstance(value, (ast.Tuple, ast.List)) and element is not None and element[0] < len(value.elts):
            part = value.elts[element[0]]
            return self.roots(part.value if type(part) is ast.Starred else part)
        if isinstance(value, (ast.Tuple, ast.List)) and element is None:
            return shared((self.roots(item) for item in value.elts), self.code.knowledge.kept_in_lists)
        if type(value) is ast.Subscript and element is None and scheduled_rates.reads_param_group_lr(value):
            return scheduled_rates.next_step_rate(value, self.scopes[-1], self.code)
        if type(value) is ast.Subscript and element is None:
            index = self.code.constant_index(value)
            if index is not None:
                return self.roots(value.value, (index, -1))
            return self.code.item(value, scope.objects) or self._put_here(value) or self._selected(value)
        if type(value) is ast.Call:
            func = value.func
            handed = _handed_on(value, self.rules.preserving_functions)
            if (
                handed is None
                and type(func) is ast.Attribute
                and func.attr in self.rules.wrapper_names
                and self.code.chain(func, scope.objects) in self.rules.wrappers
            ):
                handed = _wrapped(value)
            if handed is not None:
                return self.roots(handed, element)
            if type(func) is ast.Attribute and func.attr in self.rules.preserving_methods:
                return self.roots(func.value, element)
            found = self.code.call(value, element, scope.objects, self.site(value), self.roots)
            return self._reduced(value, found) | self._rank_own(value) | scheduled_rates.next_step_rate(value, self.scopes[-1], self.code)
        if type(value) is ast.Attribute and value.attr in self.rules.attributes:
            return self.roots(value.value, element)
        if type(value) is ast.Attribute and element is None:
            return self.code.expression(value, scope.objects) | self.kept_on_self(value)
        if type(value) is ast.BinOp and element is None:
            left, right = self.roots(value.left), self.roots(value.right)
            counted = type(value.op) in (ast.Div, ast.Mult) and self.counted(value.right)
            found = self.code.arithmetic(value, value.op, left, right, value.right, counted)
            found |= self._granular(value) if type(value.op) is ast.Div and counted else frozenset()
            return (
                found
                | self._divergence(value)
                | self._entropy_product(value)
                | self._masked(value, left, right)
                | self._norm_root(value, left)
            )
        if type(value) is ast.UnaryOp and type(value.op) is ast.USub and element is None:
            entropy = (
                self.code.derived("entropy-sum", value, ()) if formulas.entropy(value, self.code.knowledge.log_ratios) else frozenset()
            )
            return self.code.negation(value, self.roots(value.operand)) | entropy
        return frozenset()

    def kept_on_self(self, node: ast.Attribute) -> frozenset[Atom]:
        """`self.tokens` read in a method: what the class's methods put in it (kept_values.py).
        This rank's own value stays so only if no call of the class's methods may change it."""
        if self.own_attribute(node) is None:
            return frozenset()
        kept = self.kept[-1]
        found = kept.read(node.attr)
        if any(isinstance(f, ranks.LocalFact) for f in found):
            if kept.shared(node.attr, self.class_nodes[-1], self.harmless):
                self.scopes[-1].owns = True
            else:
                found = frozenset(f for f in found if not isinstance(f, ranks.LocalFact))
        return found

    def own_attribute(self, node: ast.expr) -> str | None:
        """`X` of `self.X` in a method of the class the walk is in (`own_name`); None otherwise."""
        own = self.own_name()
        if own is None or not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name) or node.value.id != own:
            return None
        return node.attr

    def own_name(self) -> str | None:
        """The name of the object a method is called on (`self`), in a method of the class the
        walk is in, not in a function nested in one."""
        if len(self.scopes) != 2 or not self.kept or not self.class_nodes:
            return None
        method = self.scopes[1]
        return method.params[0] if method.bound and method.params else None

    def harmless(self, node: ast.Call) -> bool:
        """Whether a call leaves what it is passed as it was: a builtin, a method of ranks.yaml's
        `leave_alone`, a value-preserving step, or a logging call that logs each process's value
        as given. Not a collective, known or not: in another method, what it makes of the
        attribute is not followed."""
        objects, name = self.scopes[-1].objects, called_name(node.func)
        if name in self.rules.preserving_functions or name in self.rules.preserving_methods or name in self.code.knowledge.leave_alone:
            return True
        chain = self.code.chain(node.func, objects) or ""
        bases = self.bases[-1] if self.bases else frozenset()
        builtin = chain.startswith("builtins.") and chain.count(".") == 1
        return builtin or ranks.unreduced(self.code, node, objects, bases) is not None

    def _shared_else_whole(self, node: ast.IfExp) -> bool:
        """`x / dist.get_world_size() if dist.is_initialized() else x`: one device's share, or,
        where the test finds no devices to share among, the value of the one process there is;
        either way what one device has (rules/code/ranks.yaml `devices`)."""
        share = node.body
        return (
            isinstance(share, ast.BinOp)
            and isinstance(share.op, ast.Div)
            and same_expression(share.left, node.orelse)
            and self.code.shares(share.right)
        )

    def _put_here(self, node: ast.Subscript) -> frozenset[Atom]:
        """`d["perf/train_time"]` of a dict this function put that key in once: what it put
        there (a timing read back to compute a rate). Put in twice, on two branches, it is
        either: nothing is known."""
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        bag = self.scopes[-1].bags.get(node.value.id) if isinstance(key, str) and isinstance(node.value, ast.Name) else None
        put = [entry.value for entry in bag.entries if entry.key == key] if bag else []
        return put[0] if len(put) == 1 else frozenset()

    def logged(self, value: ast.expr, call: ast.AST | None = None) -> frozenset[Atom]:
        """What a value logged (by `call`, when known) or put in a dict of metrics is: `roots`,
        and what the test it is logged under, or the call, makes of it (bindings.py)."""
        return self.roots(value)

    def branch(self, value: ast.expr, element: tuple[int, int] | None = None) -> Branch:
        """What `value` is (`roots`), and whether it is computed in a way not known: from
        other values (`total / active`, `f(x)`), not a constant (`0.0`, `torch.tensor(0.0)`)."""
        atoms = self.roots(value, element)
        return atoms, not atoms and reads_a_value(value)

    def _reduced(self, node: ast.Call, found: frozenset[Atom]) -> frozenset[Atom]:
        """What a reduction written over a formula makes of it. The mean of a comparison
        (`(ratio > 1.2).float().mean()`) is the share of elements for which it holds
        (rules/code/reductions.yaml `comparison-mean`). Of p·log p only the sum is a (negative)
        entropy: a mean or a maximum over the product may run over the vocabulary."""
        reductions = {a.value for a in found if isinstance(a, CodeFact) and a.facet == "reduction"}
        entry = self.code.applying(node, self.scopes[-1].objects) if reductions else None
        reduced = subject(entry, node) if entry is not None else None
        if reduced is None:
            return found
        formula = self.unwrapped(reduced)
        if isinstance(formula, ast.Compare) and "mean" in reductions:
            return found | self.code.derived("comparison-mean", node, found)
        if (
            isinstance(formula, ast.BinOp)
            and "sum" not in reductions
            and formulas.entropy_product(formula, self.code.knowledge.log_ratios) is not None
        ):
            return frozenset(a for a in found if not (isinstance(a, CodeFact) and a.facet == "quantity"))
        return found

    def _masked(self, node: ast.BinOp, left: frozenset[Atom], right: frozenset[Atom]) -> frozenset[Atom]:
        """`x * mask` keeps x where the mask is 1: each element kept is what it was, as with masked_fill (elements.yaml)."""
        kept = unmasked(node, self.code.knowledge.masks)
        return self._elements_kept(frozenset() if kept is None else left if kept is node.left else right)

    def _selected(self, node: ast.Subscript) -> frozenset[Atom]:
        """`x[mask]`, `x[~torch.isnan(x)]`: the elements a boolean index keeps, each what it was
        (torch docs, "Indexing with a boolean tensor" selects the elements where it is True), as
        with masked_fill (elements.yaml)."""
        if not selects(node.slice, self.code.knowledge.masks):
            return frozenset()
        return self._elements_kept(self.roots(node.value))

    def _elements_kept(self, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """What a selection of a value's elements keeps of it: the facets each element has alone
        (elements.yaml `kept_in_lists`), now and where the project-wide step derives them."""
        elementwise = self.code.knowledge.kept_in_lists
        return frozenset(a for a in atoms if isinstance(a, CodeFact) and a.facet in elementwise) | Derived.later(elementwise, atoms)

    def _entropy_product(self, node: ast.BinOp) -> frozenset[Atom]:
        """`p * log_p` is the negative entropy of each element, `-p * log_p` its entropy."""
        negative = formulas.entropy_product(node, self.code.knowledge.log_ratios)
        if negative is None:
            return frozenset()
        return self.code.derived("entropy-product" if negative else "negated-entropy-product", node, ())

    def _norm_root(self, node: ast.BinOp, base: frozenset[Atom]) -> frozenset[Atom]:
        """A norm raised to a fractional power is no norm (rules/code/norms.yaml `norm-root`). A
        variable exponent only of a norm of a variable order: `x.norm(2) ** (1 / k)` is the L2
        norm when k is 1, `x.norm(p) ** (1 / p)` no norm unless p is (then L1, the derivation's `also`)."""
        kind = formulas.root(node)
        if kind is None:
            return frozenset()
        variable = self.code.knowledge.variable_norm
        norms = [a for a in base if isinstance(a, CodeFact) and a.facet == "norm" and (kind == "constant" or a.value == variable)]
        return self.code.derived("norm-root", node, norms) if norms else frozenset()

    def _rank_own(self, node: ast.Call) -> frozenset[Atom]:
        """This rank's own value (ranks.LocalFact), when the call computes it from the data this
        function is handed (`batch["input_ids"].numel()` of a parameter `batch`) and from
        nothing known to cover other ranks: `numel()` of what a helper gathered counts every
        rank's tokens."""
        found = ranks.own(self.code, node, self.scopes[-1].objects)
        if not found:
            return found
        inputs = [*node.args, *([node.func.value] if isinstance(node.func, ast.Attribute) else [])]
        if any(self.handed(i) for i in inputs) and not any(
            isinstance(a, CodeFact) and a.facet == "scope" for i in inputs for a in self.roots(i)
        ):
            self.scopes[-1].owns = True
            return found
        return frozenset()

    def bagged(self, value: ast.expr) -> bool:
        """Whether an argument may be a dict of metrics this file shows: a dict or list written
        out, one the function holds, or a class's attribute (sources/python/bags.py)."""
        if isinstance(value, (ast.Dict, ast.DictComp, ast.List)):
            return True
        if isinstance(value, ast.Name):
            return value.id in self.scopes[-1].bags
        return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self"

    def handed(self, value: ast.expr) -> bool:
        """Whether a value is read, unchanged, from a parameter of the function (not `self`), from
        the batch of a loop over a data loader or from a part of either (`x, y = batch`)."""
        while isinstance(value, (ast.Subscript, ast.Attribute, ast.Call)):
            if isinstance(value, ast.Call):
                if not isinstance(value.func, ast.Attribute) or value.args or value.keywords:
                    return False  # `batch["ids"].flatten()` reads it; `f(batch)` or `x.view(2, -1)` is left out
                value = value.func.value
            else:
                value = value.value
        scope = self.scopes[-1]
        if not isinstance(value, ast.Name):
            return False
        return value.id in scope.batches or (value.id in scope.params and value.id not in ("self", "cls") and value.id not in scope.carries)

    def part_of_handed(self, value: ast.expr) -> bool:
        """Whether a value is a part of what the function is handed (`handed`), also through
        the value-preserving methods with their options (`.to(device)`, `.view(-1)`) and the
        methods that read a dict's item by a key written out (`batch.pop("labels")`)."""
        rules = self.rules
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            method, args = value.func.attr, value.args
            if not (
                method in rules.preserving_methods
                or (method in rules.items and len(args) == 1 and isinstance(args[0], ast.Constant) and not value.keywords)
            ):
                break
            value = value.func.value
        return self.handed(value)

    def _divergence(self, node: ast.BinOp) -> frozenset[Atom]:
        """A KL estimator (formulas.py): a log-ratio of two named policies' log-probabilities,
        half its square, or exp(r) - 1 - r of it; the policy it compares with carries over.
        The log-ratio's sign is known only when it is certain which policy drew the tokens."""
        words = self.code.knowledge.log_ratios
        policies = formulas.log_ratio(node, self._first_name, words)
        if policies is not None:
            other, sampler = formulas.compared(policies), words.sampler(policies)
            says = f"subtracts the {policies[1]} policy's log-probabilities from the {policies[0]} policy's"
            construct = ("log-ratio", "reversed-log-ratio")[sampler] if sampler is not None else ""
            drew = f"{says} (the {policies[sampler]} policy drew the tokens): " if sampler is not None else ""
            signed = frozenset(replace(f, says=drew + f.says) for f in self.code.derived(construct, node, ()) if isinstance(f, CodeFact))
            return signed | {self.code.fact("policy", other, node, says)} if other else signed
        for construct, ratio in (
            ("half-square", formulas.half_square(node)),
            ("exp-minus-one", formulas.exp_minus_one(node, self._exp_argument)),
        ):
            if ratio is not None:
                atoms = self.roots(ratio)
                found = self.code.derived(construct, node, atoms)
                return found | frozenset(a for a in atoms if isinstance(a, CodeFact) and a.facet == "policy") if found else found
        return frozenset()

    def _first_name(self, value: ast.expr) -> str:
        found = self.names(value)
        return found[0][0] if found else ""

    def _exp_argument(self, term: ast.expr) -> ast.expr | None:
        """x in `torch.exp(x)`, `math.exp(x)` or `x.exp()`."""
        if not isinstance(term, ast.Call) or not self.code.exponential(term, self.scopes[-1].objects):
            return None
        return term.args[0] if term.args else term.func.value if isinstance(term.func, ast.Attribute) else None

    def names(self, value: ast.expr) -> tuple[tuple[str, Span], ...]:
        """The names a value goes by: the variable or attribute it is read from, and the ones
        that variable was assigned from, through value-preserving steps only (float(x), x.item())."""
        return tuple((name, self._name_span(node)) for name, node in self.named_at(value))

    def named_at(self, value: ast.expr) -> tuple[tuple[str, ast.Name | ast.Attribute], ...]:
        """`names`, each with the node it is written at: every assignment keeps these, and only
        the few values logged or put in a dict need their spans."""
        value = self.unwrapped(value)
        if isinstance(value, ast.Name):
            return self.scopes[-1].named.get(value.id, ((value.id, value),))
        if isinstance(value, ast.Attribute):
            return ((value.attr, value),)
        return ()

    def _name_span(self, node: ast.Name | ast.Attribute) -> Span:
        if isinstance(node, ast.Name):
            return self.span(node)
        end = self.text.span(self.path, node)  # the attribute's name ends the expression
        return Span(self.path, end.end_line, end.end_column - len(node.attr), end.end_line, end.end_column)

    def unwrapped(self, value: ast.expr) -> ast.expr:
        """The value under its value-preserving steps: `float(x.item())` is `x`."""
        while isinstance(value, ast.Call):
            func = value.func
            handed = _handed_on(value, self.rules.preserving_functions)
            if handed is not None:
                value = handed
            elif isinstance(func, ast.Attribute) and func.attr in self.rules.preserving_methods and not value.args:
                value = func.value
            else:
                break
        return value

    def counted(self, divisor: ast.expr) -> bool:
        """Whether a divisor is a number of items (counts.py): `len(...)`, a name counted up in a
        loop or bound to `len(...)`, the sum of a mask, or a name bound to one here or in a
        function this one is defined in (`n = mask.sum()`)."""
        if counts_items(divisor, self.scopes[-1].counters, self.code.knowledge.masks):
            return True
        divisor = unguarded(divisor)
        return type(divisor) is ast.Name and self.mask_count(divisor.id) is not None

    def mask_count(self, name: str) -> ast.expr | None:
        """The mask's sum `name` is bound to, in this function or, where it binds no such name,
        in one it is defined in (a closure's `n`)."""
        for scope in reversed(self.scopes[1:]):
            if name in scope.mask_counts:
                return scope.mask_counts[name]
            if name in scope.carries or name in scope.params:
                return None
        return None

    def _granular(self, node: ast.BinOp) -> frozenset[Atom]:
        """A masked mean's granularity (rules/code/granularity.yaml): over every token the mask
        keeps, a per-token average; along the sequence dim, one value per sample. Not in a loop,
        whose masked values may be one sample's tokens (`for x, mask in zip(xs, masks)`)."""
        if self.scopes[-1].loops:
            return frozenset()
        over = masked_mean(node, self.code.knowledge.masks, self.mask_count)
        if over is None:
            return frozenset()
        return self.code.derived("token-mean" if over == "all" else "row-mean", node, ())

    def selected(self, name: str, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """Under a test that reads the name itself (`if best is None or x > best: best = x`)
        the name keeps the item a comparison selects: what reduced `x` says nothing about it."""
        if not any(name in test for test in self.tests):
            return atoms
        return frozenset(a for a in atoms if not (isinstance(a, CodeFact) and a.facet == "reduction"))

    def site(self, node: ast.Call) -> ResultOf:
        """The call as evidence/code_claims.py resolves it: callee ("" if unknown) and what each argument carries.

        Read once, where the walk first meets the call: in `x = f(x)` that is before `x` is
        rebound, as Python evaluates it. A call of a name bound to its own result (`f = f(x)`,
        met again through `_returned_function`) is, while it is read, a call nothing follows."""
        site = self.sites.get(id(node))
        if site is None:
            self.sites[id(node)] = self._unfollowed(self.scopes[-1].name)
            site = self.sites[id(node)] = self._read_site(node)
        return site

    def _returned_function(self, func: ast.expr) -> str | None:
        """A call of a name bound to what a project call returned (`step = get_step_func()`, then
        `step(batch)`), as the call the name holds the result of, `pkg.get_step_func()`: the
        project-wide step runs the functions it returns (evidence/callees.py)."""
        if type(func) is not ast.Name:
            return None
        made = self.scopes[-1].results.get(func.id)
        return returned_by(self.site(made).callee) if made is not None else None

    def _unfollowed(self, caller: str) -> ResultOf:
        """The site of a call nothing follows, one per function: most calls of a file are."""
        site = self.unfollowed.get(caller)
        if site is None:
            site = self.unfollowed[caller] = ResultOf("", None, caller)
        return site

    def _read_site(self, node: ast.Call) -> ResultOf:
        scope = self.scopes[-1]
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in self.rules.remote_calls and isinstance(func.value, ast.Attribute):
            func = func.value  # `sink.push.remote(stats)`: the actor's `push` runs with what the call passes (rules/dataflow.yaml)
        callee = self._returned_function(func) or self.code.callee(func, self.classes, scope.known)
        if callee is None or self.code.standard(callee):
            return self._unfollowed(scope.name)  # nothing to follow: what it is passed does not matter
        owner = self.code.chain(func.value, {}) if isinstance(func, ast.Attribute) else ""
        bound = owner is None or "(" in (owner or "")  # a method of an object (`x.m()`, `make().m()`), not a module's function
        given = arguments(node)
        if callee.startswith(UNKNOWN_OBJECT) and not any(self.bagged(a.value) for a in given):
            return self._unfollowed(scope.name)  # an object's method handed no dict of metrics: nothing to follow
        if callee.startswith(UNKNOWN_OBJECT) or (isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name)):
            # `?.publish`, `self.tracker.publish`, `get_timers().write`: only the project-wide step
            # can tell the callee, and it follows such a call for its dicts of metrics and strings only
            return ResultOf(callee, None, scope.name, (), bound)
        args: list[tuple[int | str, frozenset[Atom]]] = []
        positional = True
        for position, arg in enumerate(given):
            positional = positional and not arg.star
            atoms = scope.kept(self.roots(arg.value)) if arg.keyword or positional else frozenset()
            if atoms:
                args.append((arg.keyword or position, atoms))
        return ResultOf(callee, None, scope.name, tuple(args), bound)


def reads_a_value(node: ast.expr) -> bool:
    """Whether an expression reads a variable, as a constant (`0.0`, `-1`, `float("nan")`)
    does not: a function called is no value read. Asked of every value nothing is known
    about, so it keeps a stack of its own rather than a generator per node."""
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if type(current) is ast.Name:
            return True
        if type(current) is ast.Call:
            stack += current.args
            stack += [k.value for k in current.keywords]
        else:
            stack += [child for child in child_nodes(current) if isinstance(child, ast.expr)]
    return False


def _handed_on(call: ast.Call, functions: frozenset[str]) -> ast.expr | None:
    """The value a value-preserving function hands on: its first argument, the others being
    options (`round(x, 3)` is still x's quantity, rounded); its only argument if given by name."""
    func = call.func
    if not (isinstance(func, ast.Name) and func.id in functions):
        return None
    if call.args:
        return call.args[0] if not isinstance(call.args[0], ast.Starred) else None
    return call.keywords[0].value if len(call.keywords) == 1 and call.keywords[0].arg is not None else None


def _wrapped(call: ast.Call) -> ast.expr | None:
    """The one value a tensor or an array is made of (rules/dataflow.yaml `wrappers`):
    `torch.tensor(x)`, `torch.tensor([x], device=d)`; None for several values or none, and
    for a constant: `torch.tensor(0.0)` makes a new value (a placeholder, bindings.py)."""
    data = call.args[0] if call.args else None
    if isinstance(data, (ast.List, ast.Tuple)):
        data = data.elts[0] if len(data.elts) == 1 else None
    return None if data is None or isinstance(data, (ast.Starred, ast.Constant, ast.UnaryOp)) else data


def returned_by(callee: str) -> str | None:
    """How a call of what a call of `callee` returns is named (`pkg.get_step()`), which the
    project-wide step answers with the functions that one returns (evidence/callees.py); None
    for no callee, or one that is itself such a call."""
    return f"{callee}()" if callee and "(" not in callee else None
