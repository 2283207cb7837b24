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

from metriclint.knowledge.sinks import LineWriters
from metriclint.sources.python.code_shapes import same_expression

# How the file's imports resolve a call (`json.dumps`), or None.
Resolve = Callable[[ast.expr], "str | None"]

_NEWLINES = frozenset({"\n", "\r\n"})


def may_be_line(call: ast.Call, dumped: set[int]) -> bool:
    """Whether a `write`, `json.dump` or `print` call may write a line record, asked before
    anything else is read of it: most `write` calls write text, most `print` calls the console."""
    if id(call) in dumped or any(k.arg == "file" for k in call.keywords):
        return True
    written = call.args[0] if call.args else None
    if isinstance(written, ast.BinOp):
        return _newline(written.right)
    return isinstance(written, ast.JoinedStr) and bool(written.values) and _newline(written.values[-1])


def written_record(written: ast.expr, resolve: Resolve, writers: LineWriters) -> ast.expr | None:
    """The dict a `write` argument serialises as one line: `json.dumps(d) + "\\n"`, or
    `f"{json.dumps(d)}\\n"`; None for anything else (text, a record without its newline)."""
    if isinstance(written, ast.BinOp) and isinstance(written.op, ast.Add) and _newline(written.right):
        return _serialised(written.left, resolve, writers)
    if isinstance(written, ast.JoinedStr) and len(written.values) == 2 and _newline(written.values[1]):
        first = written.values[0]
        if isinstance(first, ast.FormattedValue) and first.conversion == -1 and first.format_spec is None:
            return _serialised(first.value, resolve, writers)
    return None


def printed_record(call: ast.Call, resolve: Resolve, writers: LineWriters) -> ast.expr | None:
    """The dict `print(json.dumps(d), file=f)` writes as one line of a file (its newline is
    print's `end`); None for a print to the console (no `file`, or `sys.stdout`/`sys.stderr`),
    one that ends its text otherwise, or one that prints anything but a serialised record."""
    given = {k.arg: k.value for k in call.keywords if k.arg is not None}
    target = given.get("file")
    if target is None or resolve(target) in _CONSOLES or len(call.args) != 1:
        return None
    if "end" in given and not _newline(given["end"]):
        return None
    return _serialised(call.args[0], resolve, writers)


_CONSOLES = frozenset({"sys.stdout", "sys.stderr"})


def dumped_lines(body: list[ast.stmt], resolve: Resolve, writers: LineWriters) -> Iterable[int]:
    """The `json.dump(d, f)` calls of a block (their node ids) that the next statement ends
    with a newline written to the same file: each is one line's record."""
    for statement, after in zip(body, body[1:]):
        call = statement.value if type(statement) is ast.Expr else None
        if (
            type(call) is not ast.Call
            or not isinstance(call.func, ast.Attribute)
            or call.func.attr not in writers.names
            or len(call.args) < 2
        ):
            continue
        following = after.value if type(after) is ast.Expr else None
        if (
            type(following) is ast.Call
            and isinstance(following.func, ast.Attribute)
            and following.func.attr == "write"
            and len(following.args) == 1
            and _newline(following.args[0])
            and not _indented(call)
            and same_expression(following.func.value, call.args[1])
            and resolve(call.func) in writers.dumpers
        ):
            yield id(call)


def reads_loop_items(record: ast.expr, values: Iterable[ast.expr], loops: Iterable[ast.AST]) -> bool:
    """Whether a record written in these loops is made of their items: the item itself, a
    dict whose values read it (`{"prompt": item["prompt"]}`), or a name the loop derives from it
    (`text = sample.get("text")`, or a list it grows from it: `turns.append({"content":
    row["q"]})`); with a counter loop, a row a counter indexes (`v[i]`). A row of data, not
    metrics."""
    fors = [loop for loop in loops if isinstance(loop, (ast.For, ast.AsyncFor))]
    items: set[str] = set()
    counters: set[str] = set()
    for loop in fors:
        item, counter = _targets(loop)
        items.update(n.id for n in _names(item))
        counters.update(n.id for n in _names(counter))
    if not items and not counters:
        return False
    derived = [found for loop in fors for node in ast.walk(loop) if (found := _derivation(node)) is not None]
    parts = [record, *values]
    for _ in range(2):  # a name derived from a derived name, in either order
        for names, value in derived:
            if _reads(value, items, counters):
                items |= names
            if isinstance(record, ast.Name) and record.id in names:
                parts.append(value)
    return any(_reads(part, items, counters) for part in parts)


_GROWS = frozenset({"append", "extend", "insert", "add", "update"})


def _derivation(node: ast.AST) -> tuple[set[str], ast.expr] | None:
    """The names a statement binds or grows and what it puts in them: `x = value`, a loop's
    `for part in parts`, or `xs.append(value)` (a list, set or dict grown in place); None for
    another statement."""
    if isinstance(node, ast.Assign):
        return {n.id for target in node.targets for n in _names(target)}, node.value
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return {n.id for n in _names(node.target)}, node.iter
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Attribute) and func.attr in _GROWS and isinstance(func.value, ast.Name) and node.value.args:
            return {func.value.id}, ast.Tuple(elts=list(node.value.args), ctx=ast.Load())
    return None


def _reads(node: ast.AST, items: set[str], counters: set[str]) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and inner.id in items:
            return True
        if isinstance(inner, ast.Subscript) and counters and any(n.id in counters for n in _names(inner.slice)):
            return True
    return False


def nested_keys(function: ast.AST) -> Iterable[ast.expr]:
    """The keys a function writes one level down (`info[name]["mem_gb"].append(x)`,
    `info[name]["mem_gb"] = x`): a record's entry, for a dict of dicts, is the outer key; the
    inner ones are no keys of the line it is written as."""
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Subscript):
            yield node.slice


def _targets(loop: ast.For | ast.AsyncFor) -> tuple[ast.AST, ast.AST]:
    """What a loop's target holds of a collection, and what only counts: `for step in
    range(n)` only counts, `for i, item in enumerate(rows)` has both, `for row in rows` items."""
    over, nothing = loop.iter, ast.Tuple(elts=[], ctx=ast.Load())
    name = over.func.id if isinstance(over, ast.Call) and isinstance(over.func, ast.Name) else ""
    if name in ("range", "count"):
        return nothing, loop.target
    if name == "enumerate" and isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2:
        return loop.target.elts[1], loop.target.elts[0]
    return loop.target, nothing


def _serialised(node: ast.expr, resolve: Resolve, writers: LineWriters) -> ast.expr | None:
    if isinstance(node, ast.Call) and node.args and not _indented(node) and resolve(node.func) in writers.serialisers:
        return node.args[0]
    return None


def _indented(call: ast.Call) -> bool:
    """`json.dumps(d, indent=2)`: a document laid out over lines, not one line's record."""
    return any(k.arg == "indent" and not (isinstance(k.value, ast.Constant) and k.value.value is None) for k in call.keywords)


def _newline(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in _NEWLINES


def _names(node: ast.AST) -> Iterable[ast.Name]:
    return (n for n in ast.walk(node) if isinstance(n, ast.Name))
