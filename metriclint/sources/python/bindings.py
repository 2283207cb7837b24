"""What names hold, for the walk: assignments, loops and comprehensions, `with` targets,
accumulation with `+=`, and calls that change a value in place."""

from __future__ import annotations

import ast
from dataclasses import replace

from metriclint.base.identifiers import class_like
from metriclint.model import UNKNOWN_OBJECT, Atom, Bag, CodeFact, Placeholder, Related
from metriclint.sources.python import dataclass_fields, flags, kept_values, ranks, strings
from metriclint.sources.python.annotated import annotated, mapping_value, sequence_item, unquoted
from metriclint.sources.python.attribute_strings import assigned_text
from metriclint.sources.python.bag_items import LISTED, selected
from metriclint.sources.python.binding_shapes import (
    added_to,
    assigned_name,
    bound_names,
    constant_shape,
    loop_shape,
    optional_of,
    reached,
    read_names,
    running_sum,
    smoothed,
)
from metriclint.sources.python.call_names import arguments, called_name
from metriclint.sources.python.counts import counts_mask, is_count
from metriclint.sources.python.flow import Scope, shared
from metriclint.sources.python.said import Messages

_COMPREHENSIONS = frozenset({ast.DictComp, ast.ListComp, ast.SetComp, ast.GeneratorExp})


class Bindings(Messages):
    """Binds each assigned name to what its value is, in the block it is assigned in."""

    def _visit_For(self, node: ast.For | ast.AsyncFor) -> bool:
        scope = self.scopes[-1]
        scope.looped = True
        self._unbind(node.target)
        self._item_class(node.target, node.iter)
        batch = ranks.loader_item(self.code, node)
        if batch is not None:
            scope.batches.add(batch)
        self.loop_strings(node.target, node.iter, node.body)
        keyvars = dict(scope.keyvars)
        self.iterated(node.target, node.iter)
        self.skipped(node.body)
        self._loop(node)
        scope.keyvars = keyvars
        self._last(node)
        return False

    _visit_AsyncFor = _visit_For

    def _visit_While(self, node: ast.While) -> bool:
        self._loop(node)
        return False

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        scope = self.scopes[-1]
        scope.loops.append(id(node.body))
        scope.iterating.append(node)
        self.children(node)
        scope.loops.pop()
        scope.iterating.pop()

    def _overwritten(self, target: ast.Subscript, value: ast.expr) -> frozenset[Atom] | None:
        """`stats["actor/kl"] = kl.item()` in a `for` loop's body, into a dict made before the
        loop, of a value that changes with the loop's item, under a key that does not: each
        iteration replaces the last, so after the loop the dict holds the last iteration's
        value (rules/code/loops.yaml `overwritten`). Not for the loop's own item (`group["lr"]
        = x`), under a test that reads what changes (it selects an item), nor when the loop logs
        the dict in each iteration or may leave early (`break`, `return`, `yield`). None when
        the value is no more than itself."""
        scope = self.scopes[-1]
        loop = scope.iterating[-1] if scope.iterating else None
        container = target.value
        if (
            not isinstance(loop, (ast.For, ast.AsyncFor))
            or not isinstance(container, ast.Name)
            or isinstance(target.slice, (ast.Slice, ast.Tuple))
        ):
            return None
        name, held = container.id, scope.carries.get(container.id)
        if (held is None and name not in scope.params) or (held is not None and id(loop.body) in held[1]):
            return None  # made in the loop (or not a dict of this function's)
        shape = scope.loop_shapes.get(id(loop))
        if shape is None:
            shape = scope.loop_shapes[id(loop)] = loop_shape(loop, self.sinks.names)
        varying, used = shape.varying, read_names(value)
        if (
            not used & varying
            or name in used | varying
            or read_names(target.slice) & (varying | shape.called_on)
            or any(test & varying for test in self.tests)
        ):
            return None  # the same value, a dict of each item's, a key per item, or an item a test selects
        if shape.leaves or name in shape.logged:
            return None
        atoms = self.roots(value)
        return atoms | self.code.derived("overwritten", target, atoms)

    def logged(self, value: ast.expr, call: ast.AST | None = None) -> frozenset[Atom]:
        """Under a test that the accumulation window ends (`ends_window`), or logged by `call`
        where a framework writes what it logs only there (`_window_log`), a value computed from
        what this call of the function is handed is the last micro-batch's (rules/code/loops.yaml
        `at-boundary`, `per-micro-batch`), unless it already has a reduction."""
        atoms = self.roots(value)
        scope = self.scopes[-1]
        if any(isinstance(a, CodeFact) and a.facet == "reduction" for a in atoms):
            return self._read_after_loop(value, atoms)
        construct = "at-boundary" if scope.at_boundary else "per-micro-batch" if self._window_log(call) else ""
        if not construct or scope.definition is None:
            return atoms
        if not read_names(value) & _one_micro_batch(scope, scope.definition.body):
            return atoms
        return atoms | self.code.derived(construct, value, atoms)

    def _window_log(self, call: ast.AST | None) -> bool:
        """`self.log("k", v)` in a training_step, in a class that reads
        `self.trainer.accumulate_grad_batches` (rules/code/loops.yaml `per-micro-batch`)."""
        known = self.code.knowledge
        if not isinstance(call, ast.Call) or self.own_attribute(call.func) not in known.window_logs:
            return False
        method = self.scopes[1].definition
        if method is None or method.name not in known.window_hooks:
            return False
        if any(k.arg == "on_step" and not _true(k.value) for k in call.keywords):
            return False
        node, own = self.class_nodes[-1], self.own_name()
        if id(node) not in self._accumulates:
            read = (self.text.segment(n) for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr in known.accumulated)
            self._accumulates[id(node)] = any(text.removeprefix(f"{own}.") in known.accumulating for text in read)
        return self._accumulates[id(node)]

    def _read_after_loop(self, value: ast.expr, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """A loop's last value (loops.yaml `last`, `overwritten`) is half its evidence where it is
        assigned, half where it is read after the loop: the read is the fact's context, which a
        finding cites beside it."""

        def before(a: Atom) -> bool:
            return (
                isinstance(a, CodeFact)
                and a.facet == "reduction"
                and a.value == "last"
                and a.context is None
                and a.span.end_line < value.lineno
            )

        if not any(before(a) for a in atoms):
            return atoms
        read = Related(self.span(value), f"{self.code.origin(value)}, which reads it after the loop")
        return frozenset(replace(a, context=read) if isinstance(a, CodeFact) and before(a) else a for a in atoms)

    def _last(self, node: ast.For | ast.AsyncFor) -> None:
        """A name assigned in every iteration from the loop's item holds, after the loop, the
        last iteration's value only: `for mb in batches: loss = step(mb)`. Not one that each
        iteration makes from its own value before it (`std = std.squeeze(d)`): every iteration
        works on the same value, which the loop folds rather than replaces."""
        scope = self.scopes[-1]
        varying = read_names(node.target)
        accumulated = {s.target.id for s in node.body if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)}
        fresh: set[str] = set()  # names this iteration binds anew before reading them
        for statement in node.body:
            target = assigned_name(statement)
            value = getattr(statement, "value", None)
            if target is None or value is None:
                continue
            reads = read_names(value)
            if not varying & reads:
                continue
            if target in reads and target not in fresh:
                continue  # folded: the value the loop started from, changed by every iteration
            fresh.add(target)
            varying.add(target)
            held = scope.carries.get(target)
            if target not in accumulated and running_sum(target, value) is None and held is not None and id(node.body) in held[1]:
                scope.carries[target] = (held[0] | self.code.derived("last", statement, held[0]), held[1])

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> bool:
        """Its loop variables hold the strings their iterables yield, inside it only; a dict
        comprehension's key is logged like a dict literal's."""
        scope = self.scopes[-1]
        saved = (dict(scope.strings), dict(scope.carries))
        elements: dict[str, Bag | None] = {}
        for generator in node.generators:
            self._unbind(generator.target)
            self.loop_strings(generator.target, generator.iter, generator.ifs)
            self._element_bound(generator, elements)
        if isinstance(node, ast.DictComp):
            self.sink(node.key, node.value, require_key_shape=True)
        self.children(node)
        scope.strings, scope.carries = saved
        for name, held in elements.items():
            if held is None:
                scope.bags.pop(name, None)
            else:
                scope.bags[name] = held
        return False

    def _element_bound(self, generator: ast.comprehension, elements: dict[str, Bag | None]) -> None:
        """`[fetch(out, "metrics") for out in outs]`, over a list of dicts the function made: the
        loop variable holds one of them inside the comprehension, as a `for` loop's does, so a
        call in it is handed that dict. `elements`: what each name held before, to put back."""
        over, target = generator.iter, generator.target
        if type(over) is not ast.Name or type(target) is not ast.Name or over.id not in self.scopes[-1].bags:
            return
        element = selected(self.scopes[-1].bags[over.id], (LISTED,))
        if element:
            elements.setdefault(target.id, self.scopes[-1].bags.get(target.id))
            self.scopes[-1].bags[target.id] = element

    _visit_ListComp = _visit_SetComp = _visit_GeneratorExp = _visit_DictComp = _comprehension

    def _visit_withitem(self, node: ast.withitem) -> bool:
        if node.optional_vars is not None:
            self._unbind(node.optional_vars)
        return True

    def _item_class(self, target: ast.expr, iterated: ast.expr) -> None:
        """`for sample in samples` over a list annotated `list[Sample]`: each item is a Sample
        (over `list[list[Sample]]`, a list of them), whose method calls are the class's; so is
        each value of `self.meters.values()` over a dict annotated `dict[str, Meter]`."""
        if not isinstance(target, ast.Name):
            return
        scope, over = self.scopes[-1], iterated.id if isinstance(iterated, ast.Name) else ""
        item = self._declared_item(iterated)
        for table, found in ((scope.instances, item or scope.elements.get(over)), (scope.elements, scope.nested.get(over))):
            if found is not None:
                table[target.id] = found
            else:
                table.pop(target.id, None)

    def _declared_item(self, node: ast.expr) -> str | None:
        """The class of the items of the class's own attribute that `node` reads one at a time:
        a list's (`self.backends`), or a dict's values (`self.meters.values()`)."""
        if type(node) is ast.Call and not node.args and type(node.func) is ast.Attribute and node.func.attr == "values":
            return self._declared_in(self.declared_values, node.func.value)
        return self._declared_in(self.declared_items, node)

    def _value_class(self, node: ast.Subscript) -> str | None:
        """The class of an item read by a key (`self.meters[stage]`) of the class's own
        attribute annotated as a dict of instances (`dict[str, Meter]`)."""
        return self._declared_in(self.declared_values, node.value)

    def _declared_in(self, table: dict[str, dict[str, str]], node: ast.expr) -> str | None:
        """What `table` says of the class's own attribute `node` reads (`self.meters`)."""
        own = self.own_attribute(node) if type(node) is ast.Attribute else None
        return table.get(".".join((self.module, *self.classes)), {}).get(own) if own is not None else None

    def _unbind(self, target: ast.expr) -> None:
        """A loop or `with` target is a new value, whatever the name held before."""
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for name in names:
            if isinstance(name, ast.Name):
                self.scopes[-1].bind(name.id, frozenset(), tuple(self.blocks))
                self.scopes[-1].strings.pop(name.id, None)
                self.scopes[-1].strings.pop(f"{name.id}.name", None)  # a record field's name it held (bags.py `_field_names`)
                self.scopes[-1].named.pop(name.id, None)

    def _visit_AugAssign(self, node: ast.AugAssign) -> bool:
        if isinstance(node.target, ast.Subscript):
            self.stored(node.target, node.value, recorded=False)  # `stats[key] += v`
        elif isinstance(node.op, ast.BitOr) or (
            isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) and node.target.id in self.scopes[-1].bags
        ):
            self.put(node.target, self.bag(node.value))  # `stats |= more`; `refs += group.run(...)` of a list made here
        if isinstance(node.target, ast.Attribute):
            self._kept_total(node.target, node)
            if self.own_attribute(node.target) is not None:
                self._attribute_text(node.target.attr, None)  # `self.sep += "-"`
        if isinstance(node.target, ast.Name):
            scope, name = self.scopes[-1], node.target.id
            left = scope.roots(name)
            atoms = self.code.arithmetic(node, node.op, left, self.roots(node.value), node.value, self.counted(node.value))
            held = scope.carries.get(name)
            self.compose(name, node.value, extend=isinstance(node.op, ast.Add))
            if isinstance(node.op, ast.Add) and scope.loops and held is not None and scope.loops[-1] not in held[1]:
                atoms |= self.code.derived("accumulation", node, atoms)  # a total kept across the iterations
                if isinstance(node.value, ast.Constant) and node.value.value == 1:
                    scope.counters.add(name)
            scope.bind(name, atoms, tuple(self.blocks))
        return True

    def _visit_Assign(self, node: ast.Assign) -> bool:
        # `logs = {f"eval/{k}": v for k, v in logs.items()}`: a comprehension records the keys it
        # makes where it is visited (`_comprehension`), over what the name holds before it is bound anew
        rebinds = type(node.value) in _COMPREHENSIONS and any(type(t) is ast.Name and t.id in read_names(node.value) for t in node.targets)
        if rebinds:
            self.visit(node.value)
        for target in node.targets:
            self._assign(target, node.value)
            if len(self.scopes) == 1 and self.classes and isinstance(target, ast.Name):
                self._attribute_text(target.id, node.value)  # `JOINER = "/"` in a class's body
        self.removed(node.value)  # `counts = metrics.pop("counts")`
        if not rebinds:
            return True
        for target in node.targets:
            self.visit(target)
        return False

    def _visit_Delete(self, node: ast.Delete) -> bool:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self.deleted(target.value, target.slice)  # `del stats["ids"]`
        return True

    def _visit_AnnAssign(self, node: ast.AnnAssign) -> bool:
        if len(self.scopes) == 1 and self.classes and (found := flags.field(node, self.span)) is not None:
            self.flags.append(found)
        if len(self.scopes) == 1 and self.classes and isinstance(node.target, ast.Name):
            self._attribute_text(node.target.id, None)  # a dataclass's field: what each instance is made with
        self._declared(node.target, node.annotation, node.value)
        if node.value is not None:
            self._assign(node.target, node.value)
            if isinstance(node.target, ast.Name) and len(self.scopes) > 1:  # `groups: list[list[Sample]] = gather()`
                annotated(self.scopes[-1], node.target.id, node.annotation, self.code.instance, self.typed_dicts, self.typed_families)
        return True

    def _declared(self, target: ast.expr, annotation: ast.expr, value: ast.expr | None) -> None:
        """`controller: Controller` in a class's body, or `self.engine: Engine = build(cfg)` in
        a method: the attribute holds an instance of that class (or of none, `Controller |
        None`), whatever the assignments the walk cannot place make it (a registry's lookup by
        name). Not `self.x: T = None` in a method: in a framework's own tree (Lightning's
        `self._trainer: Optional[Trainer] = None`) that made its `self.log` the framework's own
        method, which the walk does not follow to a tracker, and lost the keys it logs."""
        if not self.classes:
            return
        own = self.own_attribute(target)
        if len(self.scopes) == 1 and isinstance(target, ast.Name):
            attribute = target.id
        elif own is not None and value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            attribute = own
        else:
            return
        owner = ".".join((self.module, *self.classes))
        annotation = unquoted(annotation)
        made = self.code.instance(optional_of(annotation))
        if made is not None:
            self.declared_types.setdefault(owner, {})[attribute] = made
        for table, inner in ((self.declared_items, sequence_item), (self.declared_values, mapping_value)):
            item = inner(optional_of(annotation))
            made = self.code.instance(item) if item is not None else None
            if made is not None:  # `self.loggers: list[Backend] = []`: a loop over it binds Backends
                table.setdefault(owner, {})[attribute] = made

    def _family_rebound(self, scope: Scope, name: str, value: ast.expr) -> None:
        """A name bound anew no longer holds a family's dict nor its keys (bags._family_loop),
        unless it is cast to itself (`by_module = cast(dict, by_module)`)."""
        cast = self.cast_value(value) if type(value) is ast.Call else None
        if not (isinstance(cast, ast.Name) and cast.id == name):
            scope.family_dicts.discard(name)
        scope.family_keys.discard(name)

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        scope, path = self.scopes[-1], tuple(self.blocks)
        self.module_binding(target, value)
        if isinstance(target, ast.Name):
            class_body = len(self.scopes) == 1 and bool(self.classes)  # a class attribute is no module name
            self.bound(target.id, value, scope.replaces(target.id, path))
            self._instance((self.scopes[0] if target.id in scope.globals else scope).instances, target.id, value)
            self.compose(target.id, value, extend=False)
            scope.stored.pop(target.id, None)  # a new dict: what the old one held is not handed on with it
            if scope.family_dicts or scope.family_keys:
                self._family_rebound(scope, target.id, value)
            if type(value) is ast.Call and is_count(value):
                scope.counters.add(target.id)  # `n = len(samples)`, `n = x.numel()` count them
            elif scope.counters:
                scope.counters.discard(target.id)
            if counts_mask(value, self.code.knowledge.masks):
                scope.mask_counts[target.id] = value  # `n = mask.sum()` counts what the mask keeps
            elif scope.mask_counts:
                scope.mask_counts.pop(target.id, None)
            self._gathered(scope, target.id, value)
            if not class_body:
                scope.bind_strings(target.id, strings.values(value, self.string, target.id), path)
                if type(value) is ast.Attribute and type(value.value) is ast.Name:
                    self.read_from(scope, target.id, value.value.id, value.attr)
                elif scope.attribute_reads:
                    scope.attribute_reads.pop(target.id, None)
                kept = strings.prefix_kept(value, self.string) if type(value) is ast.IfExp else None
                if kept is not None:
                    scope.kept_prefixes[target.id] = kept[1]
                elif scope.kept_prefixes:
                    scope.kept_prefixes.pop(target.id, None)
                self._bind_collection(scope, target.id, strings.literal_collection(value))
                if len(self.scopes) == 1:
                    self.name_lists.module_bound(target.id, value)
            came = self.named_at(value) if scope.replaces(target.id, path) else ()  # in a branch: not the only way
            scope.named[target.id] = ((target.id, target), *came)
            atoms, unknown = self.branch(value)
            if scope.loops and isinstance(value, ast.BinOp) and (ema := self._smoothing(target.id, value, atoms)):
                atoms, unknown = ema, False
            elif scope.loops and (total := self._running_total(target.id, value)) is not None:
                atoms, unknown = total, False
            part = isinstance(value, (ast.Subscript, ast.Call)) and self.part_of_handed(value)
            scope.bind(target.id, self._placeheld(target.id, value, self.selected(target.id, atoms), path), path, unknown)
            if part:
                scope.batches.add(target.id)  # `labels = batch.pop("labels").to(device)`: a part of the data handed
            if isinstance(value, ast.List):
                scope.lists[target.id] = bool(value.elts)
            chain = self.code.chain(value, scope.objects)
            if chain in self.code.knowledge.prefixes and not class_body:
                scope.objects[target.id] = chain
            else:
                scope.objects.pop(target.id, None)
            self.prose.names_on_line.setdefault(target.lineno, []).append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            for t, v in zip(target.elts, value.elts):
                self._assign(t, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            called = value.value if isinstance(value, ast.Await) else value  # `epoch, batch = await self.fetch()`: what it returns
            if isinstance(called, ast.Name) and called.id in scope.results:
                called = scope.results[called.id]  # `out = self.step(b)`, then `loss, stats = out`: what the call returned
            if isinstance(called, ast.Call) or isinstance(called, ast.Name) and called.id in scope.bags:
                for element in target.elts:
                    if isinstance(element, ast.Name):
                        self.remember(element.id)  # `else: loss, stats = out`: either branch's
                self.unpacked(target.elts, called)  # a name's bag: what the call returned where it may not have run (a loop)
            count, handed = len(target.elts), self.handed(value)
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    scope.bind(element.id, self.roots(value, (i, count)), path)
                    if handed:  # `x, y = batch`: the parts of the data the function is handed
                        scope.batches.add(element.id)
        elif isinstance(target, ast.Subscript) and (added := added_to(target, value, self.text.segment)) is not None:
            self.stored(target, added, recorded=False)  # `d[k] = d.get(k, 0) + x`, as `d[k] += x`
        elif isinstance(target, ast.Subscript):
            overwritten = self._overwritten(target, value)
            self.prose.item_ends[target.lineno] = value.end_lineno or target.lineno
            self.item_stored(target, value, overwritten)
            self.stored(target, value, recorded=True, atoms=overwritten)
        elif isinstance(target, ast.Attribute):
            self._kept(target, value)
            self.put(target, self.bag(value))  # `self.stats = stats`
            if isinstance(target.value, ast.Name) and target.value.id == "self" and self.classes:
                self._instance(self.attribute_types.setdefault(".".join((self.module, *self.classes)), {}), target.attr, value, made=True)
                self._attribute_text(target.attr, value)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in scope.lists:
            self._collect(target.value.id, None)  # `items[0] = x`: an item put in place of another

    def _attribute_text(self, attribute: str, value: ast.expr | None) -> None:
        """What an assignment of an attribute of the class (`self.joiner = joiner` in a method,
        `JOINER = "/"` in its body) sets it to, for keys built from it in other modules
        (model.ProjectClass.strings): a string written out, or a parameter's string default;
        once it is set to anything else (`value` None: changed in place, or a field of a
        dataclass, which each call of the constructor sets), it is not known."""
        texts = self.attribute_texts.setdefault(".".join((self.module, *self.classes)), {})
        if texts.get(attribute) == ():
            return
        default = self.scopes[-1].default_string if len(self.scopes) > 1 else lambda name: None
        text = assigned_text(value, default)
        texts[attribute] = () if text is None else tuple(dict.fromkeys((*texts.get(attribute, ()), text)))

    def _kept(self, target: ast.Attribute, value: ast.expr) -> None:
        """`self.start = time.perf_counter()`: what a method puts in its object's attribute, for
        the class's other methods (kept_values.py)."""
        if self.own_attribute(target) is None or kept_values.fresh(value):
            return
        atoms, unknown = self.branch(value)
        facts = frozenset(a for a in atoms if isinstance(a, CodeFact))
        self.kept[-1].wrote(target.attr, None if unknown else facts)

    def _kept_total(self, target: ast.Attribute, node: ast.AugAssign) -> None:
        """`self.tokens += n`: a total of such values, which is what each of them is but not how
        each was reduced (kept_values.py)."""
        if self.own_attribute(target) is None:
            return
        facets = self.code.knowledge.kept_in_lists
        added = self.roots(node.value) if isinstance(node.op, ast.Add) else None
        facts = frozenset(a for a in added if isinstance(a, CodeFact) and a.facet in facets) if added is not None else None
        self.kept[-1].wrote(target.attr, facts)

    def _running_total(self, name: str, value: ast.expr) -> frozenset[Atom] | None:
        """`total = total + x` or `x if total is None else total + x` in a loop, `total` bound
        before it: what `total += x` is, a sum over the iterations (loops.yaml `accumulation`).
        None when `value` is no such sum."""
        scope = self.scopes[-1]
        held = scope.carries.get(name)
        added = running_sum(name, value)
        if added is None or held is None or scope.loops[-1] in held[1]:
            return None
        own = isinstance(added.left, ast.Name) and added.left.id == name
        term = added.right if own else added.left
        atoms = self.code.arithmetic(added, added.op, scope.roots(name), self.roots(term), term, self.counted(term))
        return atoms | self.code.derived("accumulation", added, atoms)

    def _smoothing(self, name: str, value: ast.BinOp, atoms: frozenset[Atom]) -> frozenset[Atom]:
        """`avg = avg * 0.9 + 0.1 * x` in a loop, `avg` bound before it: an exponential moving
        average (rules/code/loops.yaml `smoothing`), whatever reduction `x` had. Empty if not."""
        scope = self.scopes[-1]
        held = scope.carries.get(name)
        if held is None or scope.loops[-1] in held[1] or not smoothed(name, value):
            return frozenset()
        kept = frozenset(a for a in atoms if not (isinstance(a, CodeFact) and a.facet == "reduction"))
        return kept | self.code.derived("smoothing", value, kept)

    def _instance(self, held: dict[str, str], name: str, value: ast.expr, made: bool = False) -> None:
        """`tracker = Tracker(...)`, `self.tracker = tracker`, `timers = get_timers()`: what class
        `name` holds an instance of, or what call made it (`pkg.get_timers()`; with `made`, any
        call, `self.build_engine(cfg)`, or the function of the project an attribute keeps,
        `self.score_fn = score_fn or default_scores`)."""
        found = self.instance_of(value, made) or (self.function_of(value) if made else None)
        if found:
            held[name] = found
        elif not (isinstance(value, ast.Constant) and value.value is None):  # `None` until it is set: still that class's
            held.pop(name, None)

    def instance_of(self, value: ast.expr, made: bool = False) -> str | None:
        """The class `value` is an instance of, or the call whose result it is: a getter's
        (`pkg.get_timers()`), or with `made` a factory method's of the class itself
        (`self.build_engine(cfg)`), whatever it is passed. Only an attribute asks for a factory's:
        the project-wide step reads what the class's attributes hold to follow dicts to their
        sinks, where a method that returns no instance places nothing. Not a local name (`total =
        self.reduce(x)` would read `total.mean()` as a method of what the call makes, not as the
        tensor method the knowledge names), nor any call with arguments (`self.writer =
        csv_writer(path)`, a class named in lower case or a library's function, would hide the
        tracker method a call on it is matched by) but a class's own factory with `made`
        (`Manager.create(cfg)`). `cls(...)` in a classmethod makes an instance of its class, and an
        item of an attribute annotated as a dict of instances (`self.meters[stage]`) is one."""
        scope = self.scopes[-1]
        if isinstance(value, ast.Name):
            return self.instance(value.id)
        if isinstance(value, ast.Subscript):
            return self._value_class(value)
        if isinstance(value, ast.IfExp):  # `WandbSink() if use_wandb else None`: when there is one, a WandbSink
            made_by = {self.instance_of(branch, made) for branch in (value.body, value.orelse) if not _is_none(branch)}
            return made_by.pop() if len(made_by) == 1 else None
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if type(func) is ast.Name and func.id == "cls" and self.classes and scope.params[:1] == ("cls",):
            return ".".join((self.module, *self.classes))  # `cls(...)` in a classmethod: an instance of its class
        found = self.code.instance(value) or self._class_kept(func)
        factory = made and (self.own_attribute(func) is not None or _class_method(func) or self._held_method(func))
        if found is not None or (value.args or value.keywords) and not factory:
            return found
        callee = self.site(value).callee  # what the project-wide step finds the call returns
        return f"{callee}()" if callee and not callee.startswith(UNKNOWN_OBJECT) else None

    def _class_kept(self, func: ast.expr) -> str | None:
        """The class a call of `self.X` makes where the class's body binds `X` to a class
        (`worker_cls = Worker`, then `self.worker = self.worker_cls(cfg)`): a subclass may bind
        another, and the class's own is the one a reader of its methods meets."""
        attribute = self.own_attribute(func)
        if attribute is None:
            return None
        for statement in self.class_nodes[-1].body:
            if type(statement) is ast.Assign and [type(t) for t in statement.targets] == [ast.Name]:
                if statement.targets[0].id == attribute:  # type: ignore[attr-defined]
                    return self.code.instance(statement.value) if type(statement.value) is ast.Name else None
        return None

    def _visit_Global(self, node: ast.Global) -> bool:
        self.scopes[-1].globals.update(node.names)
        return False

    def module_binding(self, target: ast.expr, value: ast.expr) -> None:
        """`DESCRIPTIONS = {...}` at module level may be a table of texts (tables.py), whose keys
        are no logged keys; `Stats = namedtuple("Stats", [...])` makes a record class."""
        if not (isinstance(target, ast.Name) and len(self.scopes) == 1 and not self.classes):
            return
        if isinstance(value, ast.Dict):
            self.tables.dict_table(target.id, value)
        elif fields := dataclass_fields.functional_fields(value, self.code.import_path):
            self.record_classes[target.id] = fields

    def _held_method(self, func: ast.expr) -> bool:
        """`cfg.evaluator.build`, a method of what an attribute of an object of a told class holds
        (`cfg: TrainerConfig`, whose `evaluator: EvaluatorConfig` says what): a factory, whose
        result the project-wide step finds through the attribute's class."""
        return (
            type(func) is ast.Attribute
            and type(func.value) is ast.Attribute
            and type(func.value.value) is ast.Name
            and func.value.value.id in self.scopes[-1].known
        )

    def item_stored(self, target: ast.Subscript, value: ast.expr, atoms: frozenset[Atom] | None = None) -> None:
        """`d["train/loss"] = v`: a key-shaped key logs `v` under it where `d` is logged;
        `atoms`: what `v` is there, if not what it is alone (`overwritten`)."""
        if isinstance(target.slice, (ast.Slice, ast.Tuple)):
            return
        scope = self.scopes[-1]
        before = len(scope.sinks)
        self.sink(target.slice, value, require_key_shape=True, atoms=atoms)
        if isinstance(target.value, ast.Name):
            scope.stored.setdefault(target.value.id, []).extend(range(before, len(scope.sinks)))

    def _gathered(self, scope: Scope, name: str, value: ast.expr) -> None:
        """`everyone = gather_summaries(summary)` of a parameter: `everyone` holds what every
        rank put in it (rules/dataflow.yaml `per_key.gathers`)."""
        scope.gathered.pop(name, None)
        if not isinstance(value, ast.Call):
            return
        called = called_name(value.func)
        if not any(word in called for word in self.rules.gathers):
            return
        scope.gathering = True
        for arg in arguments(value):
            if isinstance(arg.value, ast.Name) and arg.value.id in scope.params and arg.value.id not in scope.carries:
                scope.gathered[name] = arg.value.id

    def _placeheld(self, name: str, value: ast.expr, atoms: frozenset[Atom], path: tuple[int, ...]) -> frozenset[Atom]:
        """`x = 0` is a placeholder; what the body of an `if FLAG:` right after it, in the same
        block, assigns to `x` instead holds only when the flag is set (flags.py). Any other
        assignment of `x` ends the placeholder."""
        scope = self.scopes[-1]
        if self._zero(value):
            scope.placeholders[name] = (path, self.text.segment(value), self.span(value))
            return atoms
        held = scope.placeholders.pop(name, None)
        guard = self.guards[-1] if self.guards else None
        if held is None or guard is None or guard[0] != path or guard[0][:-1] != held[0]:
            return atoms
        scope.placeholders[name] = held  # another `if FLAG:` may assign it too
        placeholder = Placeholder(guard[1], held[1], held[2])
        return frozenset(replace(a, placeholder=placeholder) if isinstance(a, CodeFact) else a for a in atoms)

    def _zero(self, value: ast.expr) -> bool:
        """`0`, `0.0`, or a zero tensor made from constants only (rules/dataflow.yaml
        `placeholders`): `torch.zeros(())`, `x.new_zeros(())`, `torch.tensor(0.0)`."""
        if isinstance(value, ast.Constant):
            return type(value.value) in (int, float) and value.value == 0
        if not isinstance(value, ast.Call) or any(k.arg not in ("device", "dtype") for k in value.keywords):
            return False
        name = called_name(value.func)
        if name in self.rules.zeros:
            return all(constant_shape(a) for a in value.args)
        return name in self.rules.zero_tensors and len(value.args) == 1 and self._zero(value.args[0])

    def _bind_collection(self, scope: Scope, name: str, found: tuple[str, ...] | None) -> None:
        if found:
            scope.collections[name] = found
        else:
            scope.collections.pop(name, None)

    def _in_place(self, node: ast.Call) -> None:
        """A call that changes what a name holds: a collective writing into its tensor, a
        scheduler stepping (the learning rate read after it is the next step's)."""
        scope = self.scopes[-1]
        written = self.code.writes(node, scope.objects)
        if written is not None:
            name, facts = written
            changed = {f.facet for f in facts}
            old = frozenset(a for a in scope.roots(name) if not (isinstance(a, CodeFact) and a.facet in changed))
            scope.bind(name, old | facts, tuple(self.blocks))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == self.code.knowledge.schedulers.step:
            scope.stepped[self.text.segment(func.value)] = None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in scope.lists:
            appended = func.attr == "append" and len(node.args) == 1 and not node.keywords
            self._collect(func.value.id, node.args[0] if appended else None)

    def _collect(self, name: str, item: ast.expr | None) -> None:
        """An item added to a list written out in this function (`items.append(x)`): the list
        is what all its items are (flow.shared), what `torch.cat(items)` keeps. An item added
        another way (`items.extend(more)`, `items[0] = x`, None) leaves it nothing known."""
        scope = self.scopes[-1]
        atoms, path = scope.carries[name]
        added = self.roots(item) if item is not None else frozenset()
        items = (atoms, added) if scope.lists[name] else (added,)
        scope.carries[name] = (shared(items, self.code.knowledge.kept_in_lists), path)
        scope.lists[name] = True

    def _visit_Expr(self, node: ast.Expr) -> bool:
        if isinstance(node.value, ast.Call):  # a call made for what it does, not for its result
            self._in_place(node.value)
            self.added(node.value)
            self.removed(node.value)
        return True


def _true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _class_method(func: ast.expr) -> bool:
    """`Manager.create`, a method called on a class (named as classes are): a factory, whose
    result the project-wide step finds when it returns an instance (`return cls(...)`)."""
    return type(func) is ast.Attribute and type(func.value) is ast.Name and class_like(func.value.id)


def _is_none(node: ast.expr) -> bool:
    return type(node) is ast.Constant and node.value is None


def _one_micro_batch(scope: Scope, body: list[ast.stmt]) -> set[str]:
    """The names that hold one micro-batch's data or what is computed from it. In a function
    that loops over the data itself (`for batch in loader:` around the logging), what the
    innermost `for` around the logging binds on each pass, taken for the loop over the data:
    the function's parameters configure it and are no micro-batch, and taking them for one
    made everything it builds from them (a tracker that sums the window, under `main(args)`)
    one micro-batch's value. In a function called once per micro-batch (a hook, an engine's
    `backward(loss)`), what the call is handed. Either way not through a name a pass adds to
    (`total_loss += loss`): it holds the passes since it was set, not one."""
    loop = next((node for node in reversed(scope.iterating) if isinstance(node, (ast.For, ast.AsyncFor))), None)
    key = id(loop) if loop is not None else 0
    if key not in scope.micro_batch:
        seeds = bound_names(loop.target) if loop is not None else {p for p in scope.params if p not in ("self", "cls")} | scope.batches
        scope.micro_batch[key] = reached(body, seeds, sums=False)  # a sum kept over the passes holds them all
    return scope.micro_batch[key]
