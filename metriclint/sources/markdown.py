"""Markdown docs: tables of metrics, definition lists and sections, with markdown-it-py.

A docs page states what a metric means in a few set shapes: a table row whose key column names
it (`| `grad_norm` | below clip_grad |`), a list item that leads with it
(``- `eval/accuracy`: fraction solved``, `**grad_norm** — ...`), or a section whose heading
names it. Each such text speaks for the names it is attached to. Other prose names metrics in
passing more often than it defines them, so it is not read; nor are code blocks, HTML and
front matter, which state nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from metriclint.base import keys
from metriclint.base.builtin import word_lists
from metriclint.model import Mention, SourceKind, Span, Suppression
from metriclint.sources import DEFAULT_OPTIONS, Extraction, Extractor, Options, Unreadable, directives, source_lines, unread, utf8

# Leading punctuation that separates a list item's name from its definition.
_SEPARATORS = ":—–-="
# What a run that leads with a marked name starts with: a code span's or bold text's markup.
_LEADING_MARKS = ("`", "**", "__")
# One of these is in the raw text of every name: a marked one's markup, an unmarked one's
# `_` or `/` (`_name_shaped`), or an entity that writes either.
_NAME_MARKS = ("`", "*", "_", "/", "&")
# Words allowed between the names of a key cell: "`rollout_time` / `train_time`".
_JOINERS = frozenset({"", "/", ",", "and", "or", "&"})
# The most words a label before a colon has, in a list item of a metric's: "Token-level RS: ...".
_LABEL_WORDS = 4
# Longer code spans are not parsed to be told formulas: a page cannot make the reader parse at length.
_FORMULA_WIDTH = 200


@lru_cache(maxsize=2)
def parser(blocks_only: bool) -> MarkdownIt:
    """The block parser leaves each inline run unparsed (`InlineRun` parses it when asked for);
    the other parses one such run. Built once per process: building one costs as much as
    parsing a short page."""
    built = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    return built.disable("inline") if blocks_only else built


def encoding(data: bytes) -> str:
    """A byte-order mark is no part of the text markdown-it reads."""
    return utf8(data)


def extractor(suffix: str, options: Options = DEFAULT_OPTIONS) -> Extractor:
    return extract


def extract(path: str, source: bytes) -> Extraction:
    try:
        text = source.decode(encoding(source))
    except UnicodeDecodeError as error:
        raise Unreadable(f"cannot decode Markdown as UTF-8: {error.reason}") from None
    # markdown-it reads NUL as U+FFFD; so do the lines its contents are found in, or a cell
    # holding one is not found and is placed at the line's start (a fuzz find). One character
    # for one: columns stay the file's.
    text = text.replace("\x00", "\ufffd")
    lines = source_lines(text)  # as markdown-it counts lines: not at form feeds or U+2028
    env: dict[str, Any] = {}  # the link references the blocks define, for the runs that use them
    tree = Node.tree(parser(blocks_only=True).parse(text, env))
    # Only a file with the directive's mark needs its every node looked at for one: a sixth of
    # the Markdown work on radixark/miles's docs, none of which has one.
    suppressions = tuple(find_suppressions(path, lines, tree, env)) if directives.MARK in source else ()
    return Extraction(unread(_Walker(path, lines, env).document(tree)), suppressions=suppressions)


class Node:
    """One node of a page's syntax tree: an unnested token, or an `_open`/`_close` pair and
    what is between them, as markdown-it's `SyntaxTreeNode` has it, with only the fields the
    walk reads. Building `SyntaxTreeNode`s (a class and a property call per field read) was a
    sixth of the Markdown work on radixark/miles's docs."""

    __slots__ = ("type", "tag", "map", "content", "markup", "attrs", "children")

    def __init__(self, token: Token, kind: str) -> None:
        self.type, self.tag, self.map, self.content = kind, token.tag, token.map, token.content
        self.markup, self.attrs = token.markup, token.attrs
        self.children: list[Node] = []

    @staticmethod
    def tree(tokens: list[Token]) -> list[Node]:
        """The top-level nodes of a token stream, each with its nested nodes below it."""
        top: list[Node] = []
        open_lists = [top]  # the children list each still open pair fills
        for token in tokens:
            nesting = token.nesting
            if nesting < 0:
                open_lists.pop()
            elif nesting > 0:
                node = Node(token, token.type.removesuffix("_open"))
                open_lists[-1].append(node)
                open_lists.append(node.children)
            else:
                node = Node(token, token.type)
                if token.children:
                    node.children = Node.tree(token.children)
                open_lists[-1].append(node)
        return top

    def walk(self) -> Iterator[Node]:
        """This node and every node below it, in the token stream's order."""
        yield self
        for child in self.children:
            yield from child.walk()


class InlineRun:
    """An inline run (the text of a heading, paragraph or cell) as the walk reads it: its
    nodes are parsed only when first asked for. Most runs are prose that no metric's text is
    taken from, and parsing every run was two fifths of the Markdown work on miles's docs."""

    __slots__ = ("content", "map", "_env", "_children")

    def __init__(self, node: Node, env: dict[str, Any]) -> None:
        self.content, self.map, self._env = node.content, node.map, env
        self._children: list[Node] | None = None

    @property
    def children(self) -> list[Node]:
        """The nodes a whole-page parse gives the run: the page's link references included."""
        if self._children is None:
            self._children = Node.tree(parser(blocks_only=False).parseInline(self.content, self._env))[0].children
        return self._children


def find_suppressions(path: str, lines: list[str], tree: list[Node], env: dict[str, Any]) -> list[Suppression]:
    """`<!-- metriclint: ignore[ML001] -->`: inside a paragraph, cell or item it covers that
    text's lines; on lines of its own, those lines and the next one."""
    found = []
    for node in (below for top in tree for below in top.walk()):
        if node.type == "html_block" and node.map is not None:
            first, end = node.map
            comments = [(node.content, first, set(range(first + 1, end + 2)))]
        elif node.type == "inline" and node.map is not None:
            first, end = node.map
            comments = [
                (c.content, first + node.content[: node.content.find(c.content)].count("\n"), set(range(first + 1, end + 1)))
                for c in InlineRun(node, env).children
                if c.type == "html_inline"
            ]
        else:
            continue
        for raw, line_index, covered in comments:
            text = raw.strip()
            if not text.startswith("<!--"):
                continue
            directive = directives.directive(text.removeprefix("<!--"))
            if directive is not None:
                line = lines[line_index] if line_index < len(lines) else ""
                column = max(line.find("metriclint:"), 0) + 1
                span = Span(path, line_index + 1, column, line_index + 1, len(line) + 1)
                found.append(directives.suppression(directive, span, covered))
    return found


@lru_cache(maxsize=1)
def metric_words() -> frozenset[str]:
    return frozenset(word.lower() for word in word_lists("markdown.yaml").get("metric_words", ()))


@lru_cache(maxsize=1)
def unit_headers() -> frozenset[str]:
    return frozenset(word.lower() for word in word_lists("markdown.yaml").get("unit_headers", ()))


@dataclass(frozen=True, slots=True)
class _Context:
    """What the headings above a block say: the metric they name, whether they are about metrics."""

    section: tuple[str, ...] = ()
    about_metrics: bool = False


class _Walker:
    def __init__(self, path: str, lines: list[str], env: dict[str, Any]) -> None:
        self.path, self.lines, self.env = path, lines, env
        self.words = metric_words()

    def _run(self, node: Node) -> InlineRun:
        return InlineRun(node, self.env)

    def _about_metrics(self, text: str) -> bool:
        return any(word.strip("`*_:()").lower() in self.words for word in text.split())

    def document(self, nodes: list[Node]) -> list[Mention]:
        """Top-level blocks, each read in the context of the headings above it."""
        mentions: list[Mention] = []
        headings: list[tuple[int, tuple[str, ...], bool]] = []  # level, names, about metrics
        for node in nodes:
            if node.type == "heading":
                level = int(node.tag[1:])
                headings = [h for h in headings if h[0] < level]
                inline = self._run(node.children[0]) if node.children else None
                names = tuple(_names(inline) or ()) if inline else ()
                headings.append((level, names, inline is not None and self._about_metrics(inline.content)))
                continue
            named = [h[1] for h in headings if h[1]]
            context = _Context(named[-1] if named else (), any(h[2] for h in headings))
            mentions += self.blocks([node], context)
        return mentions

    def blocks(self, nodes: list[Node], context: _Context) -> list[Mention]:
        mentions: list[Mention] = []
        for node in nodes:
            if node.type == "paragraph" and context.section:
                # Free prose outside a metric's section is not read: its sentences name metrics
                # in passing ("halves per-GPU weights, checked against `x`"), a false claim's source.
                mentions += self._inline(self._run(node.children[0]), context.section, context.about_metrics)
            elif node.type == "table":
                mentions += self._table(node, context)
            elif node.type == "list_item":
                mentions += self._list_item(node, context)
            elif node.type in ("bullet_list", "ordered_list", "blockquote"):
                mentions += self.blocks(node.children, context)
            # fence, code_block, html_block, front_matter, hr: nothing stated
        return mentions

    def _list_item(self, item: Node, context: _Context) -> list[Mention]:
        children = item.children
        if not children or children[0].type != "paragraph":
            return self.blocks(children, context)
        inline = self._run(children[0].children[0])
        lead = _leading_name(inline)
        if lead is None and context.section:
            label = _label_end(inline.content)  # "- Token-level RS: ..." in a metric's item: one case of it
            return self._inline(inline, context.section, context.about_metrics, label) + self.blocks(children[1:], context)
        if lead is None:
            return self.blocks(children, context)
        name, offset = lead
        inner = _Context((name,), context.about_metrics)
        return self._inline(inline, inner.section, inner.about_metrics, offset) + self.blocks(children[1:], inner)

    def _table(self, table: Node, context: _Context) -> list[Mention]:
        head = [
            cell.children[0].content if cell.children else ""
            for part in table.children
            if part.type == "thead"
            for row in part.children
            for cell in row.children
        ]
        rows = [row for part in table.children for row in part.children if part.type == "tbody"]
        cells = [[self._run(cell.children[0]) for cell in row.children if cell.children] for row in rows]
        key_column = _key_column(cells)
        if key_column is None:
            return []  # a table of anything but names (flags, paths, endpoints) says nothing here
        sure = context.about_metrics or (key_column < len(head) and self._about_metrics(head[key_column]))
        units = {index for index, title in enumerate(head) if title.strip().lower() in unit_headers()}
        mentions = []
        for row in cells:
            subjects = tuple(_names(row[key_column]) or ()) if key_column < len(row) else ()
            cursor = 0  # cells are found left to right, so equal cells keep their own columns
            for index, cell in enumerate(row):
                line = self._line(cell.map[0]) if cell.map else ""
                cursor = max(cursor, line.find(cell.content, cursor))
                if index != key_column:
                    mentions += self._inline(cell, subjects, sure, search_from=cursor, unit=index in units)
                cursor += len(cell.content)
        return mentions

    def _line(self, index: int) -> str:
        return self.lines[index] if index < len(self.lines) else ""

    def _inline(
        self, inline: InlineRun, subjects: tuple[str, ...], sure: bool, offset: int = 0, search_from: int = 0, unit: bool = False
    ) -> list[Mention]:
        """The text of one inline run from `offset` on, with every line mapped to the file. A
        `unit` cell (its column's header says so) opens with a unit symbol ("s", "ms"), read
        there as a log message's symbol is right after its value."""
        content = _readable(inline)
        if not content[offset:].strip() or inline.map is None:
            return []
        first_line, written = inline.map[0], inline.content.split("\n")  # lines as written, to find them in the file
        pieces, origins, position = [], [], 0
        for index, line in enumerate(content.split("\n")):
            start, position = position, position + len(line) + 1
            if position <= offset:
                continue
            skip = max(0, offset - start)
            piece = line[skip:]
            skip += len(piece) - len(piece.lstrip())
            piece = piece.strip()
            if not piece:
                continue
            found = self._line(first_line + index).find(written[index], search_from if index == 0 else 0)
            column = (found if found >= 0 else 0) + skip + 1
            pieces.append(piece)
            origins.append((first_line + index + 1, column))
        text = "\n".join(pieces)
        if not pieces:
            return []
        return [
            Mention(
                SourceKind.DOC,
                self.path,
                text,
                tuple(origins),
                subjects,
                names_metrics=sure and bool(subjects),
                values=(0,) if unit else (),
            )
        ]


def _readable(inline: InlineRun) -> str:
    """The raw inline text with HTML comments and formulas in backticks blanked out, so
    positions stay exact."""
    content = inline.content
    if "<!--" not in content and "`" not in content:
        return content  # nothing to blank, and no need to parse the run to know it
    cursor = 0
    for child in inline.children:
        if child.type == "html_inline" and child.content.startswith("<!--"):
            raw = child.content
        elif child.type == "code_inline" and _formula(child.content):
            raw = child.markup + child.content + child.markup
        else:
            continue
        at = content.find(raw, cursor)
        if at >= 0:
            blank = "".join("\n" if c == "\n" else " " for c in raw)
            content = content[:at] + blank + content[at + len(blank) :]
            cursor = at + len(blank)
    return content


def _formula(code: str) -> bool:
    """A code span that does arithmetic (`(-logprobs).sum(1)`, `beta * kl`): its words name the
    operands, not the value, so "logprobs" in a negation states no log-probability. A key
    (`objective/kl`), a name (`logprobs`, `log_probs.sum()`) or a word with hyphens, such as a
    command-line option (`--track-slot-norms`), in backticks still says what it is."""
    if len(code) > _FORMULA_WIDTH or _name_shaped(code, marked=True) or all(c.isalnum() or c in "-_." for c in code.strip()):
        return False
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, (ast.BinOp, ast.UnaryOp)) for node in ast.walk(tree))


def _key_column(rows: list[list[InlineRun]]) -> int | None:
    """The first column whose every filled cell names metrics: the rows' subject."""
    width = max((len(row) for row in rows), default=0)
    for column in range(width):
        filled = [row[column] for row in rows if column < len(row) and row[column].content.strip()]
        if filled and all(_names(cell) for cell in filled):
            return column
    return None


def _names(inline: InlineRun) -> list[str] | None:
    """The metric names an inline run consists of, or None if it says anything else."""
    if not any(mark in inline.content for mark in _NAME_MARKS) or _prose_before_code(inline.content):
        return None  # nothing in it can be a name, or it says something else: no need to parse the run to know it
    names = []
    for child in inline.children:
        if child.type == "code_inline":
            if not _name_shaped(child.content, marked=True):
                return None
            names.append(child.content)
        elif child.type == "text":
            for word in child.content.replace(",", " , ").split():
                if word.lower() in _JOINERS:
                    continue
                if not _name_shaped(word, marked=False):
                    return None
                names.append(word)
        elif child.type in ("strong", "em") and len(child.children) == 1 and child.children[0].type == "text":
            word = child.children[0].content
            if not _name_shaped(word, marked=True):
                return None
            names.append(word)
        elif child.type != "softbreak":
            return None
    return names or None


def _prose_before_code(content: str) -> bool:
    """Whether a word before the run's first backtick is neither a joiner nor a name, as
    `_names` reads the words of a text node. A word without markup (`*`, `_`, a backslash or an
    entity's `&`) is a whole word of a text node, or inside emphasis or a link whose text
    spans words, which are no names either; only a code span may hold words with spaces
    around them (`` ` loss ` ``), hence only the words before its backtick are told."""
    for word in content.replace(",", " , ").split():
        if "`" in word:
            return False
        if not any(mark in word for mark in "*_\\&") and word.lower() not in _JOINERS and not _name_shaped(word, marked=False):
            return True
    return False


def _leading_name(inline: InlineRun) -> tuple[str, int] | None:
    """`name` and the offset its definition starts at, for "`name`: text", "**name** — text",
    "**`name`**: text" or a name alone on the first line."""
    if not inline.content.startswith(_LEADING_MARKS) or not _separator_after_markup(inline.content):
        return None  # the run cannot start with its name's markup and a separator: no need to parse it
    children = [c for c in inline.children if c.type != "text" or c.content]  # the parser leaves empty text nodes
    if len(children) < 2:
        return None
    head, rest = children[0], children[1]
    if head.type == "code_inline":
        name, raw = head.content, head.markup + head.content + head.markup
    elif head.type == "strong" and len(head.children) == 1 and head.children[0].type in ("text", "code_inline"):
        inner = head.children[0]
        name = inner.content
        code = inner.markup if inner.type == "code_inline" else ""
        raw = head.markup + code + name + code + head.markup
    else:
        return None
    if not _name_shaped(name, marked=True) or not inline.content.startswith(raw):
        return None
    after = inline.content[len(raw) :]
    if rest.type in ("softbreak", "hardbreak"):
        # The name alone on the item's first line, its definition on the lines below
        # ("- `kl/mean`" then "  Mean KL over the response tokens."): a docs page's other
        # way of writing "`kl/mean`: ...".
        newline = after.find("\n")
        return (name, len(raw) + newline + 1) if newline >= 0 else None
    if rest.type != "text":
        return None
    stripped = after.lstrip()
    if not stripped or stripped[0] not in _SEPARATORS:
        return None
    body = stripped[1:]
    return name, len(inline.content) - len(body)


def _separator_after_markup(content: str) -> bool:
    """Whether a separator or a line break in `content` follows closing markup (a backtick, `*`
    or `_`, or a hard break's backslash) with only spaces between. Every run that leads with a
    name has one right after the name's markup, so a run without one need not be parsed: most
    list items that open with a code span or bold text go on with prose, not a separator."""
    for mark in _SEPARATORS + "\n":
        at = content.find(mark)
        while at >= 0:
            if content[:at].rstrip().endswith(("`", "*", "_", "\\")):
                return True
            at = content.find(mark, at + 1)
    return False


def _label_end(content: str) -> int:
    """Where the text after a short label and its colon starts ("Token-level RS: rejects the
    sequence" -> after "RS: "), else 0. In a metric's item such a label names one case or one
    aspect of it ("**Formula**", "Geometric mode"), and a facet phrase in it is about that case:
    two cases of one metric are no contradiction."""
    colon = content.find(": ")
    label = content[:colon]
    return colon + 2 if 0 < colon and len(label.split()) <= _LABEL_WORDS and not any(c in label for c in ".;!?\n") else 0


def _name_shaped(word: str, marked: bool) -> bool:
    """A word that can be a metric key or alias; unmarked prose words need `_` or `/`."""
    word = word.strip()
    if not word or any(c.isspace() for c in word) or not (word[0].isalpha() or word[0] in "_{"):
        return False
    if not all(c.isalnum() or c in "_/{}.-" for c in word) or word.endswith(("/", ".", "-")):
        return False
    return marked or "_" in word or keys.looks_like_key(word)
