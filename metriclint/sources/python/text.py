"""A Python file as text: decoding, positions, literals and comments, all from CPython's parser.

`ast` is CPython's own parser, ten times faster than libcst's, and it accepts exactly what the
running Python accepts. Its columns are UTF-8 byte offsets; findings count characters (as ruff
and editors do), so every position goes through `column`.

Comments are not in the tree, but the language reference (2.1.3) makes them exact to find once
the string literals are known: outside a literal, `#` starts a comment that runs to the end of
the line. The literals' spans come from the tree, so nothing is guessed. Only a literal that
spans lines and holds a `#` is handed to `tokenize`, because an implicit concatenation may
carry a comment between its pieces.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from metriclint.base.columns import Columns
from metriclint.model import Span
from metriclint.sources import Unreadable, source_lines

TOO_DEEP = "nested too deeply for the Python parser"
# CPython's own nesting limits, reported as such rather than as a syntax error.
_CPYTHON_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation", "too many statically nested blocks")
_PREFIX_LETTERS = "rRuUbBfF"


@dataclass(frozen=True, slots=True)
class Literal:
    """One string token: `raw` as written, and where its content starts in the file."""

    raw: str
    prefix: str
    quote: str
    line: int
    column: int  # 0-based character column of the token's first character
    end_line: int

    @property
    def content(self) -> str:
        return self.raw[len(self.prefix) + len(self.quote) : len(self.raw) - len(self.quote)]

    @property
    def text(self) -> str:
        """The content as a reader sees it, one character for each character written.

        Each escape becomes the character it stands for, padded with spaces to the escape's
        width (a line break or tab becomes a space), so an offset into the text is still an
        offset into the source and every reported position lands on what is written there.
        """
        content = self.content
        if "\\" not in content or "r" in self.prefix.lower():
            return content
        pieces, at = [], 0
        while (slash := content.find("\\", at)) != -1:
            width = _escape_width(content, slash)
            pieces += [content[at:slash], _padded(content[slash : slash + width])]
            at = slash + width
        return "".join(pieces) + content[at:]

    @property
    def content_column(self) -> int:
        """1-based column of the content's first character."""
        return self.column + len(self.prefix) + len(self.quote) + 1


@dataclass(frozen=True, slots=True)
class Comment:
    line: int
    column: int  # 0-based character column of the `#`
    text: str  # from the `#` to the end of the line
    trailing: bool  # code comes before it on its line


def encoding(source: bytes) -> str:
    """The file's codec by its coding cookie or byte-order mark (PEP 263): "utf-8-sig" leaves
    the mark out of the text, as Python does. A SyntaxError for a bad cookie."""
    return tokenize.detect_encoding(io.BytesIO(source).readline)[0]


class PythonText:
    """The decoded lines of one file, and the positions of its nodes in characters."""

    def __init__(self, source: bytes) -> None:
        try:
            self.text = source.decode(encoding(source))
        except (UnicodeDecodeError, LookupError, SyntaxError) as error:
            raise Unreadable(f"cannot decode Python source: {error}") from None
        self.lines = source_lines(self.text)
        self._columns: dict[int, Columns | None] = {}  # each line's, None for ASCII: made when first asked
        self._ascii = self.text.isascii()  # most files: every column is its byte offset
        self._spans: dict[ast.AST, Span] = {}

    def parse(self) -> ast.Module:
        try:
            return ast.parse(self.text)
        except SyntaxError as error:
            line, offset = error.lineno or 1, error.offset or 1
            if error.msg in _CPYTHON_TOO_DEEP:
                raise Unreadable(f"{TOO_DEEP} ({error.msg})", line, offset) from None
            raise Unreadable(f"cannot parse Python: {error.msg}", line, offset) from None
        except ValueError as error:  # a NUL byte, before Python 3.12
            raise Unreadable(f"cannot parse Python: {error}") from None
        except (RecursionError, MemoryError):
            raise Unreadable(TOO_DEEP) from None

    # -- positions ----------------------------------------------------------------------------

    def column(self, line: int, offset: int) -> int:
        """The 0-based character column of UTF-8 byte `offset` in `line`."""
        if self._ascii:
            return offset
        if line not in self._columns:
            text = self.lines[line - 1]
            self._columns[line] = None if text.isascii() else Columns(text.encode())
        columns = self._columns[line]
        return offset if columns is None else columns.at(offset)

    def start(self, node: ast.AST) -> tuple[int, int]:
        if self._ascii:  # most files: the offset is the column, asked for without a call
            return node.lineno, node.col_offset  # type: ignore[attr-defined]
        return node.lineno, self.column(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> tuple[int, int]:
        if self._ascii:
            return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        return node.end_lineno, self.column(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def span(self, path: str, node: ast.AST) -> Span:
        """Asked of most assignments and calls, and of nearly half of them again (a call's span
        for its key, its value, its code facts): made once per node, so that what a worker sends
        holds one Span for each place rather than a copy for each asker. `path` is this file's."""
        found = self._spans.get(node)
        if found is None:
            found = self._spans[node] = self._span(path, node)
        return found

    def _span(self, path: str, node: ast.AST) -> Span:
        if self._ascii:  # an ASCII file's takes the node's offsets as they are
            return Span(path, node.lineno, node.col_offset + 1, node.end_lineno, node.end_col_offset + 1)  # type: ignore[attr-defined]
        (line, column), (end_line, end_column) = self.start(node), self.end(node)
        return Span(path, line, column + 1, end_line, end_column + 1)

    def segment(self, node: ast.AST) -> str:
        """The node's source, lines joined by "\\n"."""
        (line, column), (end_line, end_column) = self.start(node), self.end(node)
        if line == end_line:
            return self.lines[line - 1][column:end_column]
        middle = self.lines[line : end_line - 1]
        return "\n".join([self.lines[line - 1][column:], *middle, self.lines[end_line - 1][:end_column]])

    # -- literals and comments ----------------------------------------------------------------

    def literal(self, node: ast.AST) -> Literal | None:
        """A text string written as one token (not `"a" "b"`, not bytes), or None."""
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            return None
        return self._token(node)

    def _token(self, node: ast.expr) -> Literal | None:
        """The node as one string token, f-strings too, checked from its text alone: no
        tokenizer, which most literals do without."""
        raw = self.segment(node)
        prefix = raw[: len(raw) - len(raw.lstrip(_PREFIX_LETTERS))]
        quote = (
            raw[len(prefix) : len(prefix) + 3]
            if raw[len(prefix) : len(prefix) + 3] in ('"""', "'''")
            else raw[len(prefix) : len(prefix) + 1]
        )
        if len(raw) < len(prefix) + 2 * len(quote) or not raw.endswith(quote):
            return None
        line, column = self.start(node)
        found = Literal(raw, prefix, quote, line, column, node.end_lineno or line)
        if quote in found.content and not _one_token(raw):
            return None  # the quote inside may be escaped, or close one piece of a concatenation
        return found

    def pieces(self, node: ast.AST) -> tuple[Literal, ...] | None:
        """The string tokens a string node is written as: one, or each piece of an implicit
        concatenation (`f"a {x} GB " "b"`, the long message a formatter splits over lines),
        f-strings included; None for bytes or what the tokenizer cannot split."""
        if not isinstance(node, (ast.Constant, ast.JoinedStr)) or (isinstance(node, ast.Constant) and not isinstance(node.value, str)):
            return None
        single = self._token(node)
        if single is not None and "b" not in single.prefix.lower():
            return (single,)
        line, column = self.start(node)
        segment = self.segment(node)
        rows = segment.split("\n")
        found = []
        for (start_row, start_col), (end_row, end_col) in _string_tokens(segment):
            # the segment is tokenized inside a bracket: one column more on its first row
            raw = _cut_rows(rows, (start_row, start_col - (start_row == 1)), (end_row, end_col - (end_row == 1)))
            prefix = raw[: len(raw) - len(raw.lstrip(_PREFIX_LETTERS))]
            quote = (
                raw[len(prefix) : len(prefix) + 3]
                if raw[len(prefix) : len(prefix) + 3] in ('"""', "'''")
                else raw[len(prefix) : len(prefix) + 1]
            )
            if "b" in prefix.lower():
                return None
            at = column + start_col - 1 if start_row == 1 else start_col
            found.append(Literal(raw, prefix, quote, line + start_row - 1, at, line + end_row - 1))
        return tuple(found) or None

    def comments(self, literals: list[ast.AST]) -> list[Comment]:
        """Every comment, in order; `literals` are the tree's string nodes (f-strings whole)."""
        hashed = [number for number, line in enumerate(self.lines, 1) if "#" in line]
        if not hashed:
            return []
        covered: dict[int, list[tuple[int, int]]] = {}
        hidden: list[Comment] = []
        for node in literals:
            (line, column), (end_line, end_column) = self.start(node), self.end(node)
            if line == end_line:
                covered.setdefault(line, []).append((column, end_column))
                continue
            covered.setdefault(line, []).append((column, len(self.lines[line - 1])))
            for inner in range(line + 1, end_line):
                covered[inner] = [(0, len(self.lines[inner - 1]))]
            covered.setdefault(end_line, []).append((0, end_column))
            segment = self.segment(node)
            if "#" in segment:
                hidden += self._tokenized_comments(segment, line, column)
        found = [c for number in hashed if (c := self._comment_on(number, covered.get(number, ()))) is not None]
        return sorted(found + hidden, key=lambda c: (c.line, c.column)) if hidden else found

    def _comment_on(self, number: int, covered: list[tuple[int, int]] | tuple[()]) -> Comment | None:
        line = self.lines[number - 1]
        at = line.find("#")
        while at != -1 and any(start <= at < end for start, end in covered):
            at = line.find("#", at + 1)
        if at == -1:
            return None
        return Comment(number, at, line[at:], bool(line[:at].strip()))

    def _tokenized_comments(self, segment: str, line: int, column: int) -> list[Comment]:
        """Comments between the pieces of a literal that spans lines: `("a"  # why\\n "b")`."""
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(f"({segment})").readline) if t.type == tokenize.COMMENT]
        except (tokenize.TokenError, SyntaxError):
            return []
        comments = []
        for token in tokens:
            row, col = token.start
            at = line + row - 1
            at_column = column + col - 1 if row == 1 else col
            comments.append(Comment(at, at_column, token.string, bool(self.lines[at - 1][:at_column].strip())))
        return comments


_FIXED_WIDTHS = {"x": 4, "u": 6, "U": 10}
_OCTAL = frozenset("01234567")
_QUOTED = frozenset("\\'\"")  # \\ \' \" stand for the character after the backslash
_SPACES = frozenset("abfnrtv")  # bell, backspace, form feed, newline, return, tab, vertical tab


def _escape_width(content: str, slash: int) -> int:
    """How many characters the escape at `content[slash]` spans (the language reference, 2.4.1)."""
    kind = content[slash + 1 : slash + 2]
    if kind in _FIXED_WIDTHS:
        return min(_FIXED_WIDTHS[kind], len(content) - slash)
    if kind == "N":
        close = content.find("}", slash)
        return close - slash + 1 if close != -1 else 2
    if kind in _OCTAL:
        width = 2
        while width < 4 and content[slash + width : slash + width + 1] in _OCTAL:
            width += 1
        return width
    return 2 if kind else 1


def _padded(escape: str) -> str:
    """An escape as the character it stands for, padded to its width. White space and control
    characters become a space; the real line break of a continuation is kept; an escape Python
    does not know (`\\d`) stays as written, as Python keeps it."""
    kind = escape[1:2]
    if kind == "\n":
        return " \n"
    if kind in _QUOTED:
        return kind + " "
    if kind in _SPACES:
        return " " * len(escape)
    if kind not in _FIXED_WIDTHS and kind != "N" and kind not in _OCTAL:
        return escape
    try:
        char = ast.literal_eval(f'"{escape}"')
    except (SyntaxError, ValueError):
        return escape
    return (char if char.isprintable() else " ").ljust(len(escape))


_FSTRING_START, _FSTRING_END = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)


def _string_tokens(segment: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where each string token of `(segment)` starts and ends (row, column); an f-string that
    Python 3.12+ tokenizes in parts is one token from its start to its end."""
    found, depth, opened = [], 0, (0, 0)
    try:
        for token in tokenize.generate_tokens(io.StringIO(f"({segment})").readline):
            if token.type == _FSTRING_START:
                opened = token.start if depth == 0 else opened
                depth += 1
            elif token.type == _FSTRING_END:
                depth -= 1
                if depth == 0:
                    found.append((opened, token.end))
            elif token.type == tokenize.STRING and depth == 0:
                found.append((token.start, token.end))
    except (tokenize.TokenError, SyntaxError):
        return []
    return found


def _cut_rows(rows: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text between two (1-based row, column) positions of `rows`."""
    if start[0] == end[0]:
        return rows[start[0] - 1][start[1] : end[1]]
    return "\n".join([rows[start[0] - 1][start[1] :], *rows[start[0] : end[0] - 1], rows[end[0] - 1][: end[1]]])


def _one_token(raw: str) -> bool:
    try:
        first = next(tokenize.generate_tokens(io.StringIO(raw).readline))
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return False
    return first.type == tokenize.STRING and first.string == raw
