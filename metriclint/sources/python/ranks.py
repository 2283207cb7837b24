"""This rank's own values (rules/code/ranks.yaml): a count of the token ids of the batch a
function is handed, a loss computed from it, is scope=per-rank only if it reaches a logging call
known not to reduce it, in the same function, with no collective and no call metriclint cannot
see into taking it on the way. Until then it is a `LocalFact`, which never leaves the walk of
the function that computes it (flow.Scope.kept drops it).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from metriclint.knowledge.code_sections import Unreduced
from metriclint.model import Atom, CodeFact, Related
from metriclint.sources.python.call_names import called_name
from metriclint.sources.python.code_reader import CodeReader
from metriclint.sources.python.code_shapes import last_word


@dataclass(frozen=True, slots=True)
class LocalFact(CodeFact):
    """scope=per-rank of a value computed from this rank's own data, not yet a fact: it becomes
    one where the value is logged by a call known not to reduce it (`settled`)."""


def own(reader: CodeReader, node: ast.Call, objects: dict[str, str]) -> frozenset[Atom]:
    """A LocalFact when the call's knowledge-base entry says its value is this rank's own."""
    if called_name(node.func) not in reader.knowledge.local_names:
        return frozenset()  # most calls: asked by name before the knowledge base is
    entry = reader.applying(node, objects)
    if entry is None or not entry.local:
        return frozenset()
    return frozenset({LocalFact("scope", "per-rank", reader.text.span(reader.path, node), reader.origin(node), entry.local)})


def settled(reader: CodeReader, atoms: frozenset[Atom], sink: Unreduced | None, where: ast.AST) -> frozenset[Atom]:
    """What a logged value is, once logged: logged by a call known not to reduce it (`sink`),
    this rank's own value is scope=per-rank, with both reasons; logged otherwise, unknown."""
    local = [a for a in atoms if isinstance(a, LocalFact)]
    if not local:
        return atoms
    kept = atoms.difference(local)
    if sink is None:
        return kept
    at = reader.text.span(reader.path, where)
    how = f"is logged by {sink.says} (line {at.line}), with no collective and no call metriclint cannot see into taking it on the way"
    logged = Related(at, f"logged by {sink.says}")  # half the evidence: the same value all-reduced first is global
    return kept | {CodeFact(a.facet, a.value, a.span, a.origin, f"{a.says}, and {how}", context=logged) for a in local}


def unreduced(reader: CodeReader, node: ast.Call, objects: dict[str, str], bases: frozenset[str]) -> Unreduced | None:
    """The logging call of ranks.yaml's `unreduced` this call is, if any: `wandb.log(...)`,
    `writer.add_scalar(...)`, a LightningModule's `self.log(...)` without sync_dist."""
    func = node.func
    for sink in reader.knowledge.unreduced:
        if sink.call:
            if reader.chain(func, objects) == sink.call:
                return sink
        elif isinstance(func, ast.Attribute) and func.attr == sink.method and last_word(func.value) in sink.receivers:
            if (not sink.classes or sink.classes & bases) and not any(_may_reduce(k, sink) for k in node.keywords):
                return sink
    return None


def leaves_alone(reader: CodeReader, node: ast.Call, objects: dict[str, str]) -> bool:
    """Whether a call is known to leave the values it is passed as they were: a builtin, a method
    of ranks.yaml's `leave_alone`, or a knowledge-base entry that applies (`all_reduce` over a
    sub-group does not: it reduces its tensor in place, over ranks no fact names)."""
    chain = reader.chain(node.func, objects) or ""
    if chain.startswith("builtins.") and chain.count(".") == 1:
        return True
    if isinstance(node.func, ast.Attribute) and node.func.attr in reader.knowledge.leave_alone:
        return True
    return reader.applying(node, objects) is not None


def loader_item(reader: CodeReader, node: ast.For | ast.AsyncFor) -> str | None:
    """The name a loop over a data loader binds to each batch: `batch` in `for batch in
    train_loader` or `for step, batch in enumerate(dataloader)`."""
    iterated, target = node.iter, node.target
    wrappers = reader.knowledge.loader_wrappers
    while isinstance(iterated, ast.Call) and iterated.args and last_word(iterated.func) in wrappers:
        if isinstance(iterated.func, ast.Name) and iterated.func.id == "enumerate":
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            target = target.elts[1]
        iterated = iterated.args[0]
    if isinstance(iterated, ast.Call) and not iterated.args:  # `self.train_dataloader()`
        iterated = iterated.func
    if last_word(iterated) not in reader.knowledge.loaders:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _may_reduce(keyword: ast.keyword, sink: Unreduced) -> bool:
    """`sync_dist=...` passed other than as the literal False."""
    return keyword.arg in sink.unless and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False)
