"""Shapes of Python syntax the code reader asks about: the names a body defines, its numeric
constants, the methods chained on a call, an expression's subject and factors.

Each is a question about the syntax alone, answered without the knowledge base; the reader
(code_reader.py) decides what the answers mean."""

from __future__ import annotations

import ast

from metriclint.knowledge import numbers
from metriclint.knowledge.code_entries import Known
from metriclint.sources.python.call_names import called_name

FLOPS_PER_PARAMETER = 24  # the largest constant a FLOP estimate multiplies by (6, 8 with recomputation, 24 per layer)


def statement_blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds: its body, `else` and `finally`, and each
    `except` handler's and `case`'s body."""
    bodies, branches = block_fields(type(statement))
    return [getattr(statement, f) for f in bodies] + [branch.body for f in branches for branch in getattr(statement, f)]


def block_fields(kind: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A node type's fields that hold statements (`body`, `orelse`, `finalbody`), and those that
    hold the `except` handlers or `case`s whose bodies do; most statements have none. Asked of
    every statement of every function the walk reads, so worked out once per type."""
    found = _BLOCK_FIELDS.get(kind)
    if found is None:
        fields = getattr(kind, "_fields", ())
        found = _BLOCK_FIELDS[kind] = (
            tuple(f for f in ("body", "orelse", "finalbody") if f in fields),
            tuple(f for f in ("handlers", "cases") if f in fields),
        )
    return found


_BLOCK_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def defined_names(body: list[ast.stmt]) -> list[str]:
    """The functions and classes a module defines, under `if` and `try` too."""
    names = []
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(statement.name)
        elif isinstance(statement, (ast.If, ast.Try, ast.With)):
            for block in statement_blocks(statement):
                names += defined_names(block)
    return names


def numeric_constants(body: list[ast.stmt]) -> dict[str, float]:
    """The module's names bound once, at its top level, to a number: `GB = 1024 ** 3`."""
    bound: dict[str, int] = {}
    values: dict[str, float] = {}
    for statement in body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                bound[target.id] = bound.get(target.id, 0) + 1
                value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) and len(targets) == 1 else None
                number = numbers.value(value, values.get) if value is not None else None
                if number is not None:
                    values[target.id] = number
    return {name: value for name, value in values.items() if bound[name] == 1}


def chained_methods(node: ast.Call) -> list[str]:
    """The methods called in a row that end in `node`: `x.log_softmax(-1).gather(-1, i)` ->
    [log_softmax, gather]."""
    found: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Call) and isinstance(current.func, ast.Attribute):
        found.append(current.func.attr)
        current = current.func.value
    return found[::-1]


def subject(entry: Known, node: ast.Call) -> ast.expr | None:
    """What a call computes from: a method's object, else its first argument."""
    if entry.method and isinstance(node.func, ast.Attribute):
        return node.func.value
    return node.args[0] if node.args else None


def last_word(node: ast.expr | None) -> str:
    """The last word of the name an object is read from: `batch["input_ids"]` -> `ids`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        name = node.slice.value
    else:
        name = called_name(node) if node is not None else ""
    return name.lower().rsplit("_", 1)[-1]


def product_factors(node: ast.expr) -> list[str | None]:
    """The names multiplied in a product, "" for a small whole number (`2`, `6`: FLOPs per
    parameter and token), None for any other factor (a scale such as `1e3`, a call)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return product_factors(node.left) + product_factors(node.right)
    if isinstance(node, ast.Constant) and type(node.value) is int and 0 < node.value <= FLOPS_PER_PARAMETER:
        return [""]
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return [name]


def takes_element(entry: Known, element: tuple[int, int] | None) -> bool:
    """Whether the part of the result in use is the one the facts are about."""
    index, size = element if element is not None else (None, None)
    return entry.element == index and (entry.of is None or entry.of == size)


def is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def same_expression(a: ast.AST, b: ast.AST) -> bool:
    """Whether two expressions are written alike (where they are written aside). `ast.dump`
    answers the same, but each call leaves a reference cycle (its nested formatter), and the
    garbage of every comparison in a file made a collection necessary (tests/test_speed.py)."""
    if type(a) is not type(b):
        return False
    for name in a._fields:
        x, y = getattr(a, name, None), getattr(b, name, None)
        if isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y) or not all(_same_field(p, q) for p, q in zip(x, y)):
                return False
        elif not _same_field(x, y):
            return False
    return True


def _same_field(x: object, y: object) -> bool:
    if isinstance(x, ast.AST) and isinstance(y, ast.AST):
        return same_expression(x, y)
    return type(x) is type(y) and x == y


def ends_with(node: ast.expr, suffixes: frozenset[str]) -> bool:
    """Whether the name `node` is read from ends with one of `suffixes`, by whole words:
    `global_batch_size` and `args.batch_size` end with `batch_size`, `batch_sizes` does not."""
    return _words_before(called_name(node), suffixes) is not None


def _words_before(name: str, suffixes: frozenset[str]) -> list[str] | None:
    """The words of `name` before the shortest of `suffixes` it ends with, by whole words; None
    when it ends with none of them."""
    words = name.lower().split("_")
    for suffix in sorted(suffixes, key=lambda s: (s.count("_"), s)):
        size = suffix.count("_") + 1
        if size <= len(words) and "_".join(words[-size:]) == suffix:
            return words[:-size]
    return None


def counts_devices(divisor: ast.expr, devices: frozenset[str], subgroups: frozenset[str]) -> bool:
    """Whether a divisor is, or has as a factor, the number of devices of the run, by its name
    (rules/code/ranks.yaml `devices`): `world_size`, `args.rollout_num_gpus`, `dist.get_world_size()`;
    not a model-parallel group's (`tp_world_size`, `get_tensor_model_parallel_world_size()`)."""
    if isinstance(divisor, ast.BinOp) and isinstance(divisor.op, ast.Mult):
        return counts_devices(divisor.left, devices, subgroups) or counts_devices(divisor.right, devices, subgroups)
    if isinstance(divisor, ast.Call) and not divisor.args and not divisor.keywords:
        divisor = divisor.func
    before = _words_before(called_name(divisor), devices)
    return before is not None and not set(before) & subgroups
