"""JavaScript and TypeScript: tooltip tables bound to a variable, read with tree-sitter.

A table is named by its variable (`const METRIC_DESCRIPTIONS = [...]`, exported or not, with
type annotations and `as const`), which is how a configuration selects it. How the file's own
functions look a key up in it is read too (js_lookup.py).
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Iterator

from tree_sitter import Language, Node, Parser

from metriclint.model import TooltipTable
from metriclint.sources import DEFAULT_OPTIONS, TYPESCRIPT, Extraction, Extractor, Options, js_lookup, utf8
from metriclint.sources.tree_tables import TreeFile, table


@lru_cache(maxsize=3)
def _parser(suffix: str) -> Parser:
    if suffix in TYPESCRIPT:
        import tree_sitter_typescript

        grammar = tree_sitter_typescript.language_tsx() if suffix == ".tsx" else tree_sitter_typescript.language_typescript()
        return Parser(Language(grammar))
    import tree_sitter_javascript

    return Parser(Language(tree_sitter_javascript.language()))


def encoding(data: bytes) -> str:
    """Positions skip a byte-order mark on the first line (tree_tables.Source.position)."""
    return utf8(data)


def extractor(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor:
    kind = "typescript" if suffix in TYPESCRIPT else "javascript"
    key = suffix if suffix in TYPESCRIPT else ".js"

    def extract(path: str, data: bytes) -> Extraction:
        source = TreeFile(path, data, _parser(key).parse(data), "TypeScript" if kind == "typescript" else "JavaScript")
        source.check()
        return Extraction(tables=tuple(_tables(source, kind)), suppressions=source.suppressions())

    return extract


def _tables(source: TreeFile, kind: str) -> Iterator[TooltipTable]:
    for target, value in _bindings(source.tree.root_node):
        name = source.text(target)
        found = table(source, value, kind, name)
        if found is not None:
            lookup = js_lookup.infer(source, name, target) if target.type == "identifier" else None
            yield replace(found, lookup=lookup)


def _bindings(root: Node) -> Iterator[tuple[Node, Node]]:
    """(name, value) of every `const/let/var name = value` and `name = value`, in file order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                yield name, value
        elif node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and left.type in ("identifier", "member_expression"):
                yield left, right
        stack.extend(reversed(node.children))
