"""The value of a number written as constant arithmetic: `1024 ** 3`, `2**30`, `1 << 30`, `1e9`.

A divisor means the same whatever its spelling, so unit conversions (rules/code/units.yaml)
match by value. Read from the `ast`, never evaluated by Python: only numbers, names the caller
resolves, and + - * / ** << with small operands, so a hostile file cannot make it compute long.
"""

from __future__ import annotations

import ast
from typing import Callable

_MAX_EXPONENT = 64
_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
    ast.LShift: lambda a, b: int(a) << int(b),
}


def value(node: ast.expr, names: Callable[[str], float | None] = lambda _: None, depth: int = 0) -> float | None:
    """The number `node` writes, or None when it is not constant arithmetic; `names` gives the
    value of a name (a module's constant), None when it has none."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant):
        return float(node.value) if isinstance(node.value, (int, float)) and not isinstance(node.value, bool) else None
    if isinstance(node, ast.Name):
        return names(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = value(node.operand, names, depth + 1)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = value(node.left, names, depth + 1), value(node.right, names, depth + 1)
        if left is None or right is None or (isinstance(node.op, (ast.Pow, ast.LShift)) and not 0 <= right <= _MAX_EXPONENT):
            return None
        if isinstance(node.op, ast.Div) and right == 0 or isinstance(node.op, ast.LShift) and left != int(left):
            return None
        return float(_BINARY[type(node.op)](left, right))
    return None


def written(code: str) -> float | None:
    """The value of a number as a rules file writes it (`"1024**3"`); None if it is not one."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None
    return value(tree.body)
