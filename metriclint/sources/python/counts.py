"""What counts the items a sum ran over, when a value is divided by it: the sum over the count
is their mean (rules/code/loops.yaml `averaging`). Questions about the syntax alone; which names
are counters and which words name a mask, the walk and the knowledge base say."""

from __future__ import annotations

import ast
from typing import Callable, Container

from metriclint.sources.python.code_shapes import last_word

_SUMS = frozenset({"sum", "count_nonzero"})
_GUARDS = frozenset({"clamp", "clamp_min", "clip"})
_CASTS = frozenset({"float", "int", "long", "bool", "double", "half", "detach", "item", "cpu"})


def counts_items(divisor: ast.expr, counters: Container[str], masks: Container[str]) -> bool:
    """Whether `divisor` counts items: `len(xs)`, a tensor's number of elements (`x.numel()`,
    `torch.numel(x)`), a name counting them (`counters`: counted up by one in a loop, or bound to
    `len(...)`), or the sum of a mask (`mask.sum(dim=-1)`, `torch.sum(mask)`,
    `mask.count_nonzero()`), each also kept off zero (`unguarded`)."""
    divisor = unguarded(divisor)
    if isinstance(divisor, ast.Name):
        return divisor.id in counters
    return isinstance(divisor, ast.Call) and (is_count(divisor) or _mask_sum(divisor, masks))


def counts_mask(node: ast.expr, masks: Container[str]) -> bool:
    """Whether `node` is the sum of a mask, kept off zero or not (`mask.sum().clamp(min=1)`)."""
    node = unguarded(node)
    return isinstance(node, ast.Call) and _mask_sum(node, masks)


def _is_len(node: ast.expr) -> bool:
    """`len(xs)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1


def is_count(node: ast.expr) -> bool:
    """`len(xs)`, or a tensor's number of elements: `x.numel()`, `torch.numel(x)` (torch docs,
    torch.numel: "Returns the total number of elements in the input tensor")."""
    return isinstance(node, ast.Call) and (_is_len(node) or _numel(node))


def _numel(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "numel" or call.keywords:
        return False
    return not call.args or (len(call.args) == 1 and isinstance(func.value, ast.Name) and func.value.id == "torch")


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
    value = node.value if isinstance(node, ast.Constant) else None  # `-20.0` is no Constant: never asked as one
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


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


def selects(index: ast.expr, masks: Container[str]) -> bool:
    """Whether a subscript's index is a boolean one: a comparison (`x[x > 0]`), its negation
    (`x[~torch.isnan(x)]`), or a name ending in a mask word (`x[valid_mask]`)."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
        return True
    return isinstance(index, ast.Compare) or (isinstance(index, (ast.Name, ast.Attribute)) and _masked(index, masks))


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


# The dims a sum runs along where it keeps one value per row of a (batch, sequence) tensor: the
# last, or the second (torch docs, Tensor.sum(dim): "the sum of each row ... in the given
# dimension"); NumPy's `axis` alike.
_ROW_DIMS = frozenset({-1, 1})


def masked_mean(node: ast.BinOp, masks: Container[str], bound: Callable[[str], ast.expr | None]) -> str | None:
    """The tokens a masked mean averages over, read off its syntax: "all" for `(x * mask).sum()
    / mask.sum()` (every token the mask keeps, in one value), "rows" for `(x * mask).sum(-1) /
    mask.sum(-1)` (one value per row, a sequence); None for any other division, or sums along
    different or unknown dims (`axis=axis`). `bound`: the expression a name is bound to, for a
    count kept in a name (`n = mask.sum()`), in this function or one it is defined in."""
    if not isinstance(node.op, ast.Div):
        return None
    total = _summed(node.left)
    divisor = unguarded(node.right)
    if isinstance(divisor, ast.Name):
        named = bound(divisor.id)
        divisor = unguarded(named) if named is not None else divisor
    if total is None or not isinstance(divisor, ast.Call) or not _mask_sum(divisor, masks):
        return None
    summed, dims = total
    if not (isinstance(summed, ast.BinOp) and unmasked(summed, masks) is not None):
        return None
    counted = _summed(divisor)
    return dims if counted is not None and counted[1] == dims else None


def _summed(node: ast.expr) -> tuple[ast.expr, str | None] | None:
    """What `x.sum(...)` or `torch.sum(x, ...)` adds up, and along which dims ("all", "rows",
    or None where unknown); None for another expression."""
    while _cast(node):
        node = node.func.value  # type: ignore[attr-defined]
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SUMS):
        return None
    func, args = node.func, list(node.args)
    if isinstance(func.value, ast.Name) and func.value.id in ("torch", "np", "numpy"):
        if not args:
            return None
        subject, args = args[0], args[1:]
    else:
        subject = func.value
    dims = [*args, *(k.value for k in node.keywords if k.arg in ("dim", "axis"))]
    if not dims:
        return subject, "all"
    return subject, "rows" if len(dims) == 1 and _integer(dims[0]) in _ROW_DIMS else None


def _integer(node: ast.expr) -> int | None:
    """The integer written at `node` (`1`, `-1`), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    return sign * node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
