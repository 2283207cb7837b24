"""JavaScript and TypeScript: tooltip tables bound to a variable, read with tree-sitter.

A table is named by its variable (`const METRIC_DESCRIPTIONS = [...]`, exported or not, with
type annotations and `as const`), which is how a configuration selects it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator

from tree_sitter import Language, Node, Parser

from metriclint.model import TooltipTable
from metriclint.sources import TYPESCRIPT, Extraction, Extractor
from metriclint.sources.tree_tables import Source, table


@lru_cache(maxsize=3)
def _parser(suffix: str) -> Parser:
    if suffix in TYPESCRIPT:
        import tree_sitter_typescript

        grammar = tree_sitter_typescript.language_tsx() if suffix == ".tsx" else tree_sitter_typescript.language_typescript()
        return Parser(Language(grammar))
    import tree_sitter_javascript

    return Parser(Language(tree_sitter_javascript.language()))


def extractor(suffix: str) -> Extractor:
    kind = "typescript" if suffix in TYPESCRIPT else "javascript"
    key = suffix if suffix in TYPESCRIPT else ".js"

    def extract(path: str, data: bytes) -> Extraction:
        source = Source(path, data, _parser(key).parse(data), "TypeScript" if kind == "typescript" else "JavaScript")
        source.check()
        return Extraction(tables=tuple(_tables(source, kind)))

    return extract


def _tables(source: Source, kind: str) -> Iterator[TooltipTable]:
    for name, value in _bindings(source.tree.root_node, source):
        found = table(source, value, kind, name)
        if found is not None:
            yield found


def _bindings(root: Node, source: Source) -> Iterator[tuple[str, Node]]:
    """(name, value) of every `const/let/var name = value` and `name = value`, in file order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_declarator":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                yield source.text(name), value
        elif node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and left.type in ("identifier", "member_expression"):
                yield source.text(left), right
        stack.extend(reversed(node.children))
