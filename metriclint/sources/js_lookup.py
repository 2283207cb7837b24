"""How a JavaScript or TypeScript dashboard looks a key up in its tooltip table, read from the
function that reads it.

A table alone does not say how it matches. `METRIC_DESCRIPTIONS.find(([p]) => rest.includes(p))`
after `rest = key.slice(key.indexOf("/") + 1)` shows the first entry whose pattern the key after
its category contains; binding that table with exact matching misses every key that really gets
another metric's text. So each place a function reads the table is read too: the test applied
to a pattern (`rules/tooltips.yaml: lookup.javascript`), whether the first match wins (`find`,
a loop that returns or breaks on a match), and what was done to the key on its way from the
function's parameter (cut after the first "/", lower-cased). Only shapes understood whole count;
a reading that is anything else (a `filter`, a negated test, a subject that is not the key, two
functions that disagree) leaves the table to the configuration or to auto-detection.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tree_sitter import Node

from metriclint.model import Lookup
from metriclint.sources.lookup_rules import Key, lookup_rules
from metriclint.sources.tree_tables import TreeFile

_FUNCTIONS = (
    "function_declaration",
    "function_expression",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "function",
)
_EQUALITY = ("===", "==")
_TRACE_LIMIT = 8  # declarations followed from a subject back to the parameter


@dataclass(frozen=True, slots=True)
class Pattern:
    """How a pattern appears where an entry is tested: a variable, or element 0 of one."""

    name: str
    element: bool  # the variable holds a [pattern, text] pair


def infer(source: TreeFile, name: str, declaration: Node) -> Lookup | None:
    """The one way the file's functions read table `name` (declared by `declaration`), or None."""
    found = {_reading(source, ref) for ref in _references(source, name, declaration)}
    found.discard(None)
    kinds = {(f.match, f.first, f.strip_prefix, f.lower) for f in found if f is not None}
    if len(kinds) != 1:
        return None
    return min((f for f in found if f is not None), key=lambda f: f.line)


def _references(source: TreeFile, name: str, declaration: Node) -> list[Node]:
    stack, found = [source.tree.root_node], []
    while stack:
        node = stack.pop()
        if node.type == "identifier" and node != declaration and source.text(node) == name:
            found.append(node)
        stack.extend(node.children)
    return found


def _reading(source: TreeFile, ref: Node) -> Lookup | None:
    """The lookup that this reference to the table performs, if it is one understood whole."""
    function = _enclosing(ref)
    if function is None:
        return None
    rules = lookup_rules("javascript")
    holder, element = ref, True
    call = _call_around(ref)
    if call is not None and _callee(source, call) in rules.pairs | rules.patterns:
        holder, element = call, _callee(source, call) in rules.pairs
    parent = holder.parent
    if parent is None:
        return None
    if parent.type == "subscript_expression" and parent.child_by_field_name("object") == holder and holder is ref:
        index = parent.child_by_field_name("index")
        return _exact(source, function, index, ref, "subscript")
    if parent.type == "member_expression" and parent.child_by_field_name("object") == holder:
        method = source.text(parent.child_by_field_name("property") or parent)
        outer = parent.parent
        if outer is None or outer.type != "call_expression":
            return None
        if method in rules.exact and holder is ref:
            return _exact(source, function, _argument(outer, 0), ref, f"`{method}`")
        if method in rules.first:
            return _callback(source, function, _argument(outer, 0), element, ref, method)
        return None
    if parent.type == "for_in_statement" and parent.child_by_field_name("right") == holder:
        return _loop(source, function, parent, element, ref)
    return None


def _exact(source: TreeFile, function: Node, subject: Node | None, ref: Node, how: str) -> Lookup | None:
    if subject is None or subject.type in ("number", "string", "template_string"):
        return None
    key = _key(source, function, subject)
    return None if key is None else _lookup(source, function, ref, "exact", True, key, how)


def _callback(source: TreeFile, function: Node, callback: Node | None, element: bool, ref: Node, method: str) -> Lookup | None:
    """`T.find(([p]) => key.includes(p))`: the callback's test decides; `find` takes the first."""
    if callback is None or callback.type not in ("arrow_function", "function_expression"):
        return None
    pattern = _pattern_variable(source, _first_parameter(callback), element)
    body = callback.child_by_field_name("body")
    if pattern is None or body is None:
        return None
    if body.type == "statement_block":
        statements = _named(body)
        if len(statements) != 1 or statements[0].type != "return_statement" or not _named(statements[0]):
            return None
        body = _named(statements[0])[0]
    return _tested(source, function, body, pattern, ref, f"`{method}` (first match)")


def _loop(source: TreeFile, function: Node, loop: Node, element: bool, ref: Node) -> Lookup | None:
    """`for (const [p, t] of T) { if (key.includes(p)) return t; }`: the first match wins when
    the matching branch returns or breaks; a loop that goes on would let the last one win."""
    operator = loop.child_by_field_name("operator")
    if operator is None or source.text(operator) != "of":
        if operator is None or source.text(operator) != "in" or ref.parent != loop:
            return None
        element = False  # `for (const p in T)` walks the keys
    pattern = _pattern_variable(source, loop.child_by_field_name("left"), element)
    body = loop.child_by_field_name("body")
    if pattern is None or body is None:
        return None
    branches = [n for n in _named(body) if n.type == "if_statement"] if body.type == "statement_block" else [body]
    if len(branches) != 1 or branches[0].type != "if_statement":
        return None
    branch = branches[0]
    condition, taken = branch.child_by_field_name("condition"), branch.child_by_field_name("consequence")
    if condition is None or taken is None or not _leaves(taken):
        return None
    return _tested(source, function, condition, pattern, ref, "a loop that returns on a match (first match)")


def _tested(source: TreeFile, function: Node, test: Node, pattern: Pattern, ref: Node, order: str) -> Lookup | None:
    """The match mode of `test`, which must be one whole test of `pattern` against the key."""
    test = _unparenthesised(test)
    subject, mode, method = None, None, ""
    if test.type == "binary_expression" and source.text(test.child_by_field_name("operator") or test) in _EQUALITY:
        left, right = test.child_by_field_name("left"), test.child_by_field_name("right")
        if left is not None and right is not None:
            subject = right if _is_pattern(source, left, pattern) else left if _is_pattern(source, right, pattern) else None
            mode, method = "exact", "`===`"
    elif test.type == "call_expression":
        member = test.child_by_field_name("function")
        if member is None or member.type != "member_expression":
            return None
        receiver, name = member.child_by_field_name("object"), source.text(member.child_by_field_name("property") or member)
        argument = _argument(test, 0)
        if receiver is None or argument is None:
            return None
        if name in lookup_rules("javascript").tests and _is_pattern(source, argument, pattern):
            subject, mode, method = receiver, lookup_rules("javascript").tests[name], f"`{name}`"
        elif name == "test" and _regexp_of(source, receiver, pattern):
            subject, mode, method = argument, "regex", "`new RegExp(pattern).test`"
    if subject is None or mode is None:
        return None
    key = _key(source, function, subject)
    if key is None:
        return None
    return _lookup(source, function, ref, mode, True, key, f"{method} ({mode}), {order}")


def _regexp_of(source: TreeFile, node: Node, pattern: Pattern) -> bool:
    """`new RegExp(pattern)` without flags (a flag such as "i" changes what matches)."""
    node = _unparenthesised(node)
    if node.type != "new_expression" or source.text(node.child_by_field_name("constructor") or node) != "RegExp":
        return False
    arguments = node.child_by_field_name("arguments")
    values = _named(arguments) if arguments is not None else []
    return len(values) == 1 and _is_pattern(source, values[0], pattern)


def _key(source: TreeFile, function: Node, node: Node) -> Key | None:
    """What was done to a parameter of `function` to make `node`: cut after the first "/",
    lower-cased, through local declarations; None when `node` is not made from a parameter."""
    key = Key()
    for _ in range(_TRACE_LIMIT):
        node = _unparenthesised(node)
        if node.type == "identifier":
            name = source.text(node)
            if name in _parameters(source, function):
                return key
            value = _declared(source, function, name)
            if value is None:
                return None
            node = value
            continue
        if node.type != "call_expression":
            return None
        member = node.child_by_field_name("function")
        if member is None or member.type != "member_expression":
            return None
        receiver, method = member.child_by_field_name("object"), source.text(member.child_by_field_name("property") or member)
        if receiver is None:
            return None
        if method in lookup_rules("javascript").lower and not _arguments(node) and not key.lower:
            key, node = replace(key, lower=True, how=(*key.how, f"`{method}` (lower-case)")), receiver
        elif not key.strip_prefix and (inner := _after_first_slash(source, node)) is not None:
            key, node = replace(key, strip_prefix=True, how=(*key.how, "cut after the first '/' (strip_prefix)")), inner
        else:
            return None
    return None


def _after_first_slash(source: TreeFile, call: Node) -> Node | None:
    """`x.slice(x.indexOf("/") + 1)` (or `substring`) and `x.split("/").slice(1).join("/")`: x."""
    member = call.child_by_field_name("function")
    receiver = member.child_by_field_name("object") if member is not None else None
    method = source.text(member.child_by_field_name("property") or member) if member is not None else ""
    if receiver is None:
        return None
    values = _arguments(call)
    if method in ("slice", "substring") and len(values) == 1:
        start = _unparenthesised(values[0])
        if start.type != "binary_expression" or source.text(start.child_by_field_name("operator") or start) != "+":
            return None
        index, one = start.child_by_field_name("left"), start.child_by_field_name("right")
        if index is None or one is None or source.text(one) != "1" or index.type != "call_expression":
            return None
        finder = index.child_by_field_name("function")
        if (
            finder is None
            or finder.type != "member_expression"
            or source.text(finder.child_by_field_name("property") or finder) != "indexOf"
        ):
            return None
        searched = finder.child_by_field_name("object")
        if searched is None or source.text(searched) != source.text(receiver) or not _is_slash(source, _argument(index, 0)):
            return None
        return receiver
    if method == "join" and len(values) == 1 and _is_slash(source, values[0]) and receiver.type == "call_expression":
        sliced = receiver.child_by_field_name("function")
        if sliced is None or sliced.type != "member_expression" or source.text(sliced.child_by_field_name("property") or sliced) != "slice":
            return None
        if [source.text(v) for v in _arguments(receiver)] != ["1"]:
            return None
        split = sliced.child_by_field_name("object")
        split_member = split.child_by_field_name("function") if split is not None and split.type == "call_expression" else None
        if split is None or split_member is None or split_member.type != "member_expression":
            return None
        if source.text(split_member.child_by_field_name("property") or split_member) != "split" or len(_arguments(split)) != 1:
            return None
        if not _is_slash(source, _argument(split, 0)):
            return None
        return split_member.child_by_field_name("object")
    return None


def _is_slash(source: TreeFile, node: Node | None) -> bool:
    return node is not None and node.type == "string" and source.key(node) == "/"


def _lookup(source: TreeFile, function: Node, ref: Node, match: str, first: bool, key: Key, how: str) -> Lookup:
    line, _ = source.position(ref)
    described = ", ".join((how, *key.how))
    return Lookup(match, first and match != "exact", key.strip_prefix, key.lower, _function_name(source, function), line, described)


def _pattern_variable(source: TreeFile, node: Node | None, element: bool) -> Pattern | None:
    """The variable a pattern is bound to: `[p, t]` binds p; `e` binds a pair (`e[0]`) or a pattern."""
    if node is None:
        return None
    if node.type == "array_pattern":
        items = _named(node)
        return Pattern(source.text(items[0]), False) if element and items and items[0].type == "identifier" else None
    if node.type == "identifier":
        return Pattern(source.text(node), element)
    if node.type == "formal_parameters":
        items = _named(node)
        return _pattern_variable(source, items[0], element) if items else None
    return None


def _is_pattern(source: TreeFile, node: Node, pattern: Pattern) -> bool:
    node = _unparenthesised(node)
    if not pattern.element:
        return node.type == "identifier" and source.text(node) == pattern.name
    if node.type != "subscript_expression":
        return False
    inner, index = node.child_by_field_name("object"), node.child_by_field_name("index")
    return inner is not None and index is not None and source.text(inner) == pattern.name and source.text(index) == "0"


def _first_parameter(callback: Node) -> Node | None:
    single = callback.child_by_field_name("parameter")
    return single if single is not None else callback.child_by_field_name("parameters")


def _parameters(source: TreeFile, function: Node) -> set[str]:
    """Every name a function's parameters bind, destructured ones included."""
    names: set[str] = set()
    stack = [p for p in (function.child_by_field_name("parameters"), function.child_by_field_name("parameter")) if p is not None]
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            names.add(source.text(node))
        elif node.type not in ("type_annotation", "predefined_type", "type_identifier"):
            stack.extend(node.named_children)
    return names


def _declared(source: TreeFile, function: Node, name: str) -> Node | None:
    """The value of the one `const/let/var name = value` in `function` (outside nested functions)."""
    values, stack = [], list(function.named_children)
    while stack:
        node = stack.pop()
        if node.type in _FUNCTIONS:
            continue
        if node.type == "variable_declarator":
            target = node.child_by_field_name("name")
            if target is not None and source.text(target) == name:
                values.append(node.child_by_field_name("value"))
        stack.extend(node.named_children)
    return values[0] if len(values) == 1 else None


def _leaves(node: Node) -> bool:
    """Whether a branch ends the loop: it returns or breaks (not inside a nested function)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("return_statement", "break_statement"):
            return True
        if current.type not in _FUNCTIONS:
            stack.extend(current.named_children)
    return False


def _enclosing(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type not in _FUNCTIONS:
        parent = parent.parent
    return parent


def _function_name(source: TreeFile, function: Node) -> str:
    name = function.child_by_field_name("name")
    if name is None and function.parent is not None and function.parent.type == "variable_declarator":
        name = function.parent.child_by_field_name("name")
    return source.text(name) if name is not None else "an anonymous function"


def _call_around(ref: Node) -> Node | None:
    """The call `ref` is the only argument of: `Object.entries(ref)`."""
    arguments = ref.parent
    if arguments is None or arguments.type != "arguments" or len(_named(arguments)) != 1:
        return None
    return arguments.parent if arguments.parent is not None and arguments.parent.type == "call_expression" else None


def _callee(source: TreeFile, call: Node) -> str:
    function = call.child_by_field_name("function")
    return source.text(function) if function is not None else ""


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return _named(arguments) if arguments is not None else []


def _argument(call: Node, index: int) -> Node | None:
    values = _arguments(call)
    return values[index] if index < len(values) else None


def _named(node: Node) -> list[Node]:
    return [c for c in node.named_children if c.type != "comment"]


def _unparenthesised(node: Node) -> Node:
    while node.type == "parenthesized_expression" and _named(node):
        node = _named(node)[0]
    return node
