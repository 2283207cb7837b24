"""What counts the items a sum ran over, when a value is divided by it: the sum over the count
is their mean (rules/code/loops.yaml `averaging`). Questions about the syntax alone; which names
are counters and which words name a mask, the walk and the knowledge base say."""

from __future__ import annotations

import ast
from typing import Container

from metriclint.sources.python.code_shapes import is_number, last_word

_SUMS = frozenset({"sum", "count_nonzero"})
_GUARDS = frozenset({"clamp", "clamp_min", "clip"})
_CASTS = frozenset({"float", "int", "long", "bool", "double", "half", "detach", "item", "cpu"})


def counts_items(divisor: ast.expr, counters: Container[str], masks: Container[str]) -> bool:
    """Whether `divisor` counts items: `len(xs)`, a name counting them (`counters`: counted up
    by one in a loop, or bound to `len(...)`), or the sum of a mask (`mask.sum(dim=-1)`,
    `torch.sum(mask)`, `mask.count_nonzero()`), each also kept off zero (`unguarded`)."""
    divisor = unguarded(divisor)
    if isinstance(divisor, ast.Name):
        return divisor.id in counters
    return isinstance(divisor, ast.Call) and (is_len(divisor) or _mask_sum(divisor, masks))


def is_len(node: ast.expr) -> bool:
    """`len(xs)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1


def unguarded(node: ast.expr) -> ast.expr:
    """A count under what keeps it off zero or changes only its type: `n + 1e-8`,
    `n.clamp(min=1)`, `torch.clamp_min(n, 1)`, `max(n, 1)`, `n.float()` -> n."""
    while True:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _small(node.right):
            node = node.left
        elif isinstance(node, ast.Call) and (guarded := _guard(node)) is not None:
            node = guarded
        elif _cast(node):
            node = node.func.value  # type: ignore[attr-defined]
        else:
            return node


def _small(node: ast.expr) -> bool:
    """A number of at most 1: an epsilon, or one."""
    return is_number(node) and 0 <= node.value <= 1  # type: ignore[attr-defined]


def _guard(call: ast.Call) -> ast.expr | None:
    """The one value a floor is taken of: `x.clamp(min=1)`, `torch.clamp(x, min=1)`, `max(x, 1)`."""
    func = call.func
    named = func.id == "max" if isinstance(func, ast.Name) else isinstance(func, ast.Attribute) and func.attr in _GUARDS
    if not named or not all(_small(k.value) for k in call.keywords):
        return None
    values = [a for a in call.args if not _small(a)]
    if isinstance(func, ast.Name):
        return values[0] if len(values) == 1 and len(call.args) == 2 else None
    if len(values) == 1 and (len(call.args) > 1 or call.keywords):
        return values[0]  # `torch.clamp(x, min=1)`, `torch.clamp_min(x, 1)`
    return func.value if not values and isinstance(func, ast.Attribute) else None


def _cast(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CASTS
        and not node.args
        and not node.keywords
    )


def unmasked(node: ast.BinOp, masks: Container[str]) -> ast.expr | None:
    """The value a product masks, `x` of `x * mask` or `mask.float() * x`; None for another product."""
    if not isinstance(node.op, ast.Mult):
        return None
    return node.left if _masked(node.right, masks) else node.right if _masked(node.left, masks) else None


def _mask_sum(call: ast.Call, masks: Container[str]) -> bool:
    """`mask.sum(...)`, `torch.sum(mask, ...)`, `mask.count_nonzero()` of a name ending in a mask word."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _SUMS:
        return False
    return _masked(func.value, masks) or (bool(call.args) and _masked(call.args[0], masks))


def _masked(node: ast.expr, masks: Container[str]) -> bool:
    while _cast(node):
        node = node.func.value  # type: ignore[attr-defined]
    return last_word(node) in masks
