"""The strings a Python expression may be, as far as one module can tell: how built keys get
into the inventory.

Many logged keys are built: `"train/" + name`, `f"{prefix}{key}"`, `"perf/%s_time" % name`, a
key formatted inside a loop over a literal list or a dict's keys. A key missing from the
inventory cannot own a tooltip pattern (ML003) and makes ML005 call its registry entry stale.
So an expression is evaluated to the strings it may hold: constants; names bound to strings in
the same function or at module level; concatenation, f-strings, `%` with `%s` and
`str.format`, each combination of the parts' values; a loop or comprehension variable over a
literal list, tuple or set of strings or over a dict literal's keys. A part whose value is not
known becomes a placeholder named after what varies (`{name}`, `{pos + 1}` -> `{pos}`), as an
f-string's field always did, so `"train/" + name` is the template `train/{name}`. Past `MAX_VALUES` combinations
a part stays a placeholder rather than listing them all.
"""

from __future__ import annotations

import ast
import itertools
import string
from typing import Callable, TypeGuard

from metriclint.base.keys import MAX_VALUES, REWRITE_ARGUMENTS, Rewrite, emptied, placeholders, rewritten

# The strings a name may be (None: unknown), and the strings a loop over a name yields.
Lookup = Callable[[str], "tuple[str, ...] | None"]


def values(node: ast.expr, name_values: Lookup, bound: str = "") -> tuple[str, ...] | None:
    """Every string `node` may be, unknown parts as placeholders; None when it is no string
    expression at all (a call, a number, a name not bound to a string). `bound`: the name a
    choice is bound to, the placeholder for a choice whose own would undo its test."""
    if type(node) is ast.Constant:
        return (node.value,) if isinstance(node.value, str) else None
    if type(node) is ast.Name:
        return name_values(node.id)
    if type(node) is ast.IfExp:  # `"eval_" if evaluating else ""`: either, when both are known whole
        kept = prefix_kept(node, name_values)
        if kept is not None:
            return kept[0]
        body, orelse = values(node.body, name_values), values(node.orelse, name_values)
        if body is None or orelse is None:
            return None
        if _adds_section(node.test, body, orelse):
            return body
        texts = (*body, *orelse)
        if _fills_tested(node.test, texts):  # `"" if role == "actor" else f"{role}-"`: filling `{role}` would undo the test
            free = tuple(text for text in texts if not _fills_tested(node.test, (text,)))
            return (*free, f"{{{bound}}}") if free and bound else None  # `role_tag` is "" or not known
        return tuple(dict.fromkeys(texts))
    if type(node) is ast.JoinedStr:
        return _joined([_fstring_part(part, name_values) for part in node.values])
    if type(node) is ast.BinOp and type(node.op) is ast.Add:
        left, right = _part(node.left, name_values), _part(node.right, name_values)
        if left is None and right is None:
            return None
        return _joined([left or (_placeholder(node.left),), right or (_placeholder(node.right),)])
    if type(node) is ast.BinOp and type(node.op) is ast.Mod and type(node.left) is ast.Constant and isinstance(node.left.value, str):
        items = node.right.elts if type(node.right) is ast.Tuple else [node.right]
        return _percent(node.left.value, items, name_values)
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "str" and len(node.args) == 1 and not node.keywords:
        return values(node.args[0], name_values)  # `str(key)`: the text it already is
    # `k.replace(" ", "_")`; the method's name is tested first, since this reads every argument
    # of every call and most are no rewrite (calling `rewrites` for each cost 0.4% of a cold run)
    if type(node) is ast.Call and _rewrite_name(node.func) and (found := rewrites(node)) is not None:
        inner = _part(found[0], name_values)
        return tuple(dict.fromkeys(rewritten(text, found[1]) for text in inner)) if inner is not None else None
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "format":
        template = node.func.value
        if type(template) is ast.Constant and isinstance(template.value, str):
            return _format(template.value, node, name_values)
    return None


def _adds_section(test: ast.expr, body: tuple[str, ...], orelse: tuple[str, ...]) -> bool:
    """`f"{section}/{name}" if section else name`: the other branch is the first with the
    tested name left empty, so the first alone says both (an empty section fills as nothing,
    base/keys.py `emptied`)."""
    if type(test) is not ast.Name:
        return False
    mark = f"{{{test.id}}}"
    return all(mark in text for text in body) and set(orelse) <= {emptied(text, test.id) for text in body}


def _fills_tested(test: ast.expr, texts: tuple[str, ...]) -> bool:
    """Whether a choice's strings leave a placeholder for a name its test reads: filling it
    later (`{role}` with "actor") could make a string the test rules out. One for a name the
    test does not read (`f"{source}/" if several else ""`) stays a placeholder of either."""
    named = {found[1:-1] for text in texts for found in placeholders(text)}
    return bool(named) and any(
        isinstance(node, ast.Name) and node.id in named or isinstance(node, ast.Attribute) and node.attr in named for node in ast.walk(test)
    )


def prefix_kept(node: ast.IfExp, name_values: Lookup) -> tuple[tuple[str, ...], str] | None:
    """`f"{prefix}{key}" if not key.startswith(prefix) else key` (or the test the other way
    round, `key if key.startswith(prefix) else prefix + key`): the key with a prefix it is given
    unless it has it already, so every string it may be starts with the prefix. The strings of
    the branch that adds it, and the prefix (a placeholder when not known here); None for any
    other choice."""
    test, added, kept = node.test, node.orelse, node.body
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, added, kept = test.operand, kept, added
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and isinstance(test.func.value, ast.Name)
        and isinstance(kept, ast.Name)
        and kept.id == test.func.value.id
        and len(test.args) == 1
        and not test.keywords
    ):
        return None
    prefix = test.args[0]
    prefixes = _part(prefix, name_values) or (_placeholder(prefix),)
    key = name_values(kept.id) or ("{" + kept.id + "}",)
    named = (kept.id, prefix.id if isinstance(prefix, ast.Name) else "")
    texts = values(added, lambda name: name_values(name) or (("{" + name + "}",) if name in named else None))
    if len(prefixes) != 1 or texts is None or set(texts) != {prefixes[0] + k for k in key}:
        return None
    return texts, prefixes[0]


def loop_values(node: ast.expr, collection: Lookup) -> tuple[str, ...] | None:
    """The strings a `for` over `node` yields: the items of a literal list, tuple or set of
    strings, the keys of a dict literal (also through `.keys()` and `.items()`, whose first
    element the caller takes), or of a name bound to one of those."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("keys", "items") and not node.args:
        node = node.func.value
    if isinstance(node, ast.Name):
        return collection(node.id)
    return literal_collection(node)


def literal_numbers(node: ast.expr) -> tuple[str, ...] | None:
    """`(1, 2, 4, 8)`: the whole numbers a literal list, tuple or set holds, as an f-string
    formats each (`f"pass@{k}"`); None unless every item is one (not a flag)."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not node.elts:
        return None
    found = [item.value for item in node.elts if isinstance(item, ast.Constant) and type(item.value) is int]
    return tuple(dict.fromkeys(str(number) for number in found)) if len(found) == len(node.elts) else None


def literal_columns(node: ast.expr, width: int) -> list[tuple[str, ...]] | None:
    """`(("sglang_reqs", "reqs"), ("sglang_hits", "hits"))`: the strings at each position of a
    literal list or tuple of tuples of `width` strings, as `for name, key in ...` binds them;
    None unless every item is such a tuple."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    rows = [literal_collection(row) if isinstance(row, ast.Tuple) and len(row.elts) == width else None for row in node.elts]
    if any(row is None or len(row) != width for row in rows):
        return None  # a row that repeats a string (`("a", "a")`) is not read either
    return [tuple(dict.fromkeys(row[i] for row in rows if row is not None)) for i in range(width)]


def literal_collection(node: ast.expr) -> tuple[str, ...] | None:
    """The strings a literal list, tuple or set holds, or a dict literal's keys; None unless
    every item is a string constant."""
    items: list[ast.expr | None]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.keys)
    else:
        return None
    found = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return tuple(dict.fromkeys(found)) if found and len(found) == len(items) else None


def _fstring_part(part: ast.expr, name_values: Lookup) -> tuple[str, ...]:
    if isinstance(part, ast.FormattedValue):
        plain = part.conversion == -1 and part.format_spec is None  # `!r` adds quotes, a spec pads
        known = _part(part.value, name_values) if plain else None
        return known or (_placeholder(part.value),)
    return (str(part.value),) if isinstance(part, ast.Constant) else ("{value}",)


def _part(node: ast.expr, name_values: Lookup) -> tuple[str, ...] | None:
    """A part of a key being built; there, `self.sep` is what the class stores in it
    (attribute_strings.py), `meter.sep` a placeholder the project-wide step fills with what the
    class of `meter` stores (State.string), and `type(self).__name__` the class's name. Only
    there: asked of every call's arguments, reading each class's attributes cost more than the
    keys it finds."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return name_values(f"self.{node.attr}")
    if isinstance(node, ast.Attribute) and node.attr in CLASS_NAMES and _own_class(node.value):
        return name_values(f"self.{node.attr}")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return name_values(f"{node.value.id}.{node.attr}")  # an object's: its class's strings, which the project-wide step knows
    return values(node, name_values)


# what `type(self).__name__` and `self.__class__.__qualname__` are (State.string)
CLASS_NAMES = ("__name__", "__qualname__")


def _own_class(node: ast.expr) -> bool:
    """`type(self)` or `self.__class__`: the class of the object whose method this is."""
    if isinstance(node, ast.Attribute):
        return node.attr == "__class__" and isinstance(node.value, ast.Name) and node.value.id == "self"
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "self"
    )


def _percent(template: str, items: list[ast.expr], name_values: Lookup) -> tuple[str, ...] | None:
    """`"perf/%s_time" % name`: only `%s` fields (and `%%`); any other conversion is not read."""
    pieces = template.replace("%%", "\0").split("%")
    if len(pieces) - 1 != len(items) or any(not piece.startswith("s") for piece in pieces[1:]):
        return None
    parts: list[tuple[str, ...]] = [(pieces[0].replace("\0", "%"),)]
    for item, piece in zip(items, pieces[1:]):
        parts += [values(item, name_values) or (_placeholder(item),), (piece[1:].replace("\0", "%"),)]
    return _joined(parts)


def _format(template: str, call: ast.Call, name_values: Lookup) -> tuple[str, ...] | None:
    """`"eval/{}_{name}".format(a, name=b)`, read with Python's own format-string parser."""
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return None
    named = {k.arg: k.value for k in call.keywords if k.arg is not None}
    parts: list[tuple[str, ...]] = []
    automatic = 0
    for literal, field, spec, conversion in fields:
        parts.append((literal,))
        if field is None:
            continue
        if field == "":
            field, automatic = str(automatic), automatic + 1
        argument = call.args[int(field)] if field.isdigit() and int(field) < len(call.args) else named.get(field)
        if argument is None or spec or conversion:
            return None
        parts.append(values(argument, name_values) or (_placeholder(argument),))
    return _joined(parts)


def _joined(parts: list[tuple[str, ...]]) -> tuple[str, ...]:
    """Every combination of the parts, in order; a part with too many values stays a placeholder."""
    total = 1
    for index, part in enumerate(parts):
        if total * len(part) > MAX_VALUES:
            parts[index] = ("{value}",)
        total *= len(parts[index])
    return tuple(dict.fromkeys("".join(combination) for combination in itertools.product(*parts)))


def _rewrite_name(func: ast.expr) -> TypeGuard[ast.Attribute]:
    return type(func) is ast.Attribute and func.attr in REWRITE_ARGUMENTS


def rewrites(node: ast.expr) -> tuple[ast.expr, tuple[Rewrite, ...]] | None:
    """`k.replace(" ", "_").lower()`: the text rewritten (`k`) and the str methods that rewrite
    it, in the order they run (base/keys.py REWRITE_ARGUMENTS), each with its string arguments;
    None for any other expression."""
    found: list[Rewrite] = []
    while (
        isinstance(node, ast.Call)
        and _rewrite_name(node.func)
        and len(node.args) in REWRITE_ARGUMENTS[node.func.attr]
        and not node.keywords
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
    ):
        found.append((node.func.attr, tuple(a.value for a in node.args)))  # type: ignore[attr-defined]
        node = node.func.value
    return (node, tuple(reversed(found))) if found else None


def _placeholder(field: ast.expr) -> str:
    """What an unknown part is called in a key template: its variable, attribute or function
    (`{pos + 1}` -> `{pos}`, `{self.role}` -> `{role}`, `{k.lower()}` -> `{k}`), so a reader of
    the registry sees what varies; `{value}` when the part names nothing."""
    rewritten_text = rewrites(field) if type(field) is ast.Call else None
    for node in ast.walk(rewritten_text[0] if rewritten_text is not None else field):
        if isinstance(node, ast.Name):
            return "{" + node.id + "}"
        if isinstance(node, ast.Attribute):
            return "{" + node.attr + "}"
    return "{value}"
