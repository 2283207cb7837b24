"""Files in syntax newer than the running Python: libcst reads their docstrings and comments.

CPython's parser accepts only its own version's grammar, while libcst knows every Python 3
grammar; a project on Python 3.12 linted by a pre-commit hook on 3.11 still has its texts
read. Only the texts: following values to logged keys needs CPython's tree (walk.py), so
such a file's keys and code facts are not read, which ML900 says, so that a user knows to run
metriclint with the project's Python. libcst is imported here alone, and only then.
"""

from __future__ import annotations

import sys
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from metriclint.model import ReadFailure, Span
from metriclint.sources import Extraction, Unreadable, unread
from metriclint.sources.python.prose import Prose
from metriclint.sources.python.text import Comment, Literal


def extract(path: str, text: str, cpython_error: Unreadable) -> Extraction:
    """The texts of a file CPython rejected with `cpython_error`, raised again if libcst cannot
    parse it either: CPython's message points at the real mistake more often."""
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        raise cpython_error from None
    reader = _Reader(Prose(path))
    MetadataWrapper(module, unsafe_skip_copy=True).visit(reader)
    prose = reader.prose
    return Extraction(
        unread(prose.mentions + prose.comment_mentions()),
        suppressions=tuple(prose.suppressions()),
        code_unread=_unread_code(path, cpython_error),
    )


def _unread_code(path: str, cpython_error: Unreadable) -> ReadFailure:
    """What ML900 says of a file read so: where CPython stopped and why, and what to do."""
    reason = cpython_error.message.removeprefix("cannot parse Python: ")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return ReadFailure(
        Span(path, cpython_error.line, cpython_error.column, cpython_error.line, cpython_error.column),
        f"syntax newer than Python {version} ({reason}): only its docstrings and comments were read; "
        "run metriclint with the project's Python to check what its code logs",
    )


class _Reader(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, prose: Prose) -> None:
        super().__init__()
        self.prose = prose

    def visit_Module(self, node: cst.Module) -> None:
        self._docstrings(node.body)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._docstrings(node.body.body)
        self._anchor(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        string = self._leading_string(node.body.body)
        if string is not None:
            self.prose.docstring(string, node.name.value, {})
        self._anchor(node)

    def _docstrings(self, body: Sequence[cst.CSTNode]) -> None:
        string = self._leading_string(body)
        if string is not None:
            self.prose.docstring(string)
        for before, after in zip(body, body[1:]):
            name = _assigned_name(before)
            string = self._leading_string([after]) if name else None
            if name and string is not None:
                self.prose.attribute_docstring(name, string)

    def _anchor(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        string = self._leading_string(node.body.body)
        if string is not None:
            lines = {self._where(node.name).start.line}
            if isinstance(node.body, cst.IndentedBlock):  # `def f(): "..."` has no header line of its own
                lines.add(self._where(node.body.header).start.line)
            self.prose.anchor(lines, string)

    def _leading_string(self, body: Sequence[cst.CSTNode]) -> Literal | None:
        first = body[0] if body else None
        small = first.body[0] if isinstance(first, cst.SimpleStatementLine) and first.body else first
        if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.SimpleString) or "b" in small.value.prefix.lower():
            return None
        where = self._where(small.value)
        return Literal(small.value.value, small.value.prefix, small.value.quote, where.start.line, where.start.column, where.end.line)

    def visit_EmptyLine(self, node: cst.EmptyLine) -> None:
        if node.comment is not None:
            self._comment(node.comment, trailing=False)

    def visit_TrailingWhitespace(self, node: cst.TrailingWhitespace) -> None:
        if node.comment is not None:
            self._comment(node.comment, trailing=True)

    def _comment(self, comment: cst.Comment, trailing: bool) -> None:
        start = self._where(comment).start
        self.prose.comment(Comment(start.line, start.column, comment.value, trailing))

    def _where(self, node: cst.CSTNode) -> cst.metadata.CodeRange:
        return self.get_metadata(PositionProvider, node)


def _assigned_name(statement: cst.CSTNode) -> str | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
        return small.target.value
    return None
