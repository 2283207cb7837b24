"""JSON-lines metrics files, for the walk (rules/sinks.yaml `line_record`): a dict serialised as
one JSON value and ended by a newline, `f.write(json.dumps(record) + "\\n")` (or an f-string
ending in one), or `json.dump(record, f)` followed by `f.write("\\n")`.

Writing one record per line is how a project keeps a metrics log; it is also how it dumps data
(predictions, a dataset, samples). What tells them apart here is where the record comes from:
written in a loop from the loop's own items (`for item in samples: json.dump(item, f)`, or a
dict of the item's fields), it is a row of data, and nothing is logged. A record written once
per call, or in a loop from values the loop computes, is a metrics record.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterable

# How the file's imports resolve a call (`json.dumps`), or None.
Resolve = Callable[[ast.expr], "str | None"]

_SERIALISERS = frozenset({"json.dumps"})
_DUMPERS = frozenset({"json.dump"})
_NEWLINES = frozenset({"\n", "\r\n"})


def written_record(written: ast.expr, resolve: Resolve) -> ast.expr | None:
    """The dict a `write` argument serialises as one line: `json.dumps(d) + "\\n"`, or
    `f"{json.dumps(d)}\\n"`; None for anything else (text, a record without its newline)."""
    if isinstance(written, ast.BinOp) and isinstance(written.op, ast.Add) and _newline(written.right):
        return _serialised(written.left, resolve)
    if isinstance(written, ast.JoinedStr) and len(written.values) == 2 and _newline(written.values[1]):
        first = written.values[0]
        if isinstance(first, ast.FormattedValue) and first.conversion == -1 and first.format_spec is None:
            return _serialised(first.value, resolve)
    return None


def dumped_lines(body: list[ast.stmt], resolve: Resolve) -> Iterable[int]:
    """The `json.dump(d, f)` calls of a block (their node ids) that the next statement ends
    with a newline written to the same file: each is one line's record."""
    for statement, after in zip(body, body[1:]):
        call = statement.value if type(statement) is ast.Expr else None
        if type(call) is not ast.Call or not isinstance(call.func, ast.Attribute) or call.func.attr != "dump" or len(call.args) < 2:
            continue
        following = after.value if type(after) is ast.Expr else None
        if (
            type(following) is ast.Call
            and isinstance(following.func, ast.Attribute)
            and following.func.attr == "write"
            and len(following.args) == 1
            and _newline(following.args[0])
            and ast.dump(following.func.value) == ast.dump(call.args[1])
            and resolve(call.func) in _DUMPERS
        ):
            yield id(call)


def reads_loop_items(record: ast.expr, values: Iterable[ast.expr], loops: Iterable[ast.AST]) -> bool:
    """Whether a record written in these loops is made of their items: the item itself, or a
    dict whose values read it (`{"prompt": item["prompt"]}`): a row of data, not metrics."""
    items = {name.id for loop in loops if isinstance(loop, (ast.For, ast.AsyncFor)) for name in _names(_items(loop))}
    if not items:
        return False
    return any(name.id in items for part in (record, *values) for name in _names(part))


def _items(loop: ast.For | ast.AsyncFor) -> ast.AST:
    """What a loop's target holds of a collection: nothing for a counter (`for step in
    range(n)`), the item for `for i, item in enumerate(rows)`."""
    over = loop.iter
    name = over.func.id if isinstance(over, ast.Call) and isinstance(over.func, ast.Name) else ""
    if name in ("range", "count"):
        return ast.Tuple(elts=[], ctx=ast.Load())
    if name == "enumerate" and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2:
        return loop.target.elts[1]
    return loop.target


def _serialised(node: ast.expr, resolve: Resolve) -> ast.expr | None:
    if isinstance(node, ast.Call) and node.args and resolve(node.func) in _SERIALISERS:
        return node.args[0]
    return None


def _newline(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in _NEWLINES


def _names(node: ast.AST) -> Iterable[ast.Name]:
    return (n for n in ast.walk(node) if isinstance(n, ast.Name))
