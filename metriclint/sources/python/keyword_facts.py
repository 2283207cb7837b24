"""Facts an argument of a known call decides (rules/code/ `keyword`): a loss function's
`reduction` argument, "mean" unless passed, makes its result a mean or a sum over the elements
(torch.nn.functional docs), or leaves it one value per element ("none")."""

from __future__ import annotations

import ast

from metriclint.knowledge.code_entries import KeywordFacts


def chosen(keyword: KeywordFacts, node: ast.Call) -> tuple[tuple[tuple[str, str], ...], str]:
    """The facts the call's argument gives (its default's when it is not passed, a string's
    written out), and what it says; none for anything else or where one of `unless` (or
    `*args`, `**kwargs`) is passed."""
    passed = [k for k in node.keywords if k.arg == keyword.name]
    if any(k.arg is None or k.arg in keyword.unless for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        return (), ""
    value = passed[0].value if passed else None
    if value is None and keyword.position is not None and len(node.args) > keyword.position:
        value = node.args[keyword.position]
    if value is None:
        return dict(keyword.values).get(keyword.default, ()), f"with {keyword.name}={keyword.default!r} (the default)"
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return dict(keyword.values).get(value.value, ()), f"with {keyword.name}={value.value!r}"
    return (), ""
