"""What a Python file says in prose: its docstrings and comments as mentions.

Both Python readers fill one `Prose`: the `ast` walk (walk.py) for every file, and the
libcst one (cst.py) for a file written in syntax newer than the running Python. The
walk decides what each text is about; this module turns the texts into mentions, and keeps the
suppression directives and the lines each one covers.
"""

from __future__ import annotations

import re
from typing import Iterable

from metriclint.model import Mention, SourceKind, Span, Suppression
from metriclint.sources import directives, source_lines
from metriclint.sources.python import docstrings
from metriclint.sources.python.text import Comment, Literal

# A line of a docstring that defines a name as a list does: "- gap_max: ...", "* `kl`: ...".
_DEFINITION = re.compile(r"\s*(?:[-*•]\s+)?`?([\w/{}.-]+)`?\s*:\s+\S")
# A heading that sets off a region of code, framed on both sides by a run of rule characters
# (`# ── unpack the slice ──────`, `# ===== Metrics =====`): it names what the code below is
# about, and no value on the line under it.
_HEADING = re.compile(r"\s*([-=─━═*~_+#])\1+\s.*\S\s*([-=─━═*~_+#])\2+\s*")


class Prose:
    def __init__(self, path: str) -> None:
        self.path = path
        self.mentions: list[Mention] = []
        self.keys_on_line: dict[int, list[str]] = {}  # what a trailing comment's line logs
        self.names_on_line: dict[int, list[str]] = {}  # and what it assigns
        self.calls_logging: dict[int, list[str]] = {}  # the keys a logging call that starts on a line logs
        self.forks_on_line: dict[int, dict[str, tuple[str, ...]]] = {}  # ... and the keys it writes that it logs as others
        self.entries_on_line: dict[int, list[str]] = {}  # the bare keys of dict entries on a line (`"mean_reward": r`)
        self.item_ends: dict[int, int] = {}  # where a statement `d[k] = v` that starts on a line ends
        self.comments: list[tuple[int, int, str, bool]] = []  # line, column, text, trailing
        self.directives: list[tuple[Span, directives.Directive]] = []
        # A multi-line string's findings may be silenced on the line where it closes, or on
        # its def/class line: anchor line -> the lines of the strings it speaks for.
        self.anchors: dict[int, set[int]] = {}

    def forked(self, line: int, written: Iterable[str], suffixes: tuple[str, ...]) -> None:
        """The keys a logging call starting on `line` writes, each logged once per suffix."""
        found = self.forks_on_line.setdefault(line, {})
        for key in written:
            found[key] = tuple(key + suffix for suffix in suffixes)

    # -- docstrings -------------------------------------------------------------------------

    def docstring(
        self,
        string: Literal,
        function: str = "",
        flows: dict[str, tuple[str, ...]] | None = None,
        written: frozenset[str] = frozenset(),
        returned: tuple[str, ...] = (),
    ) -> None:
        """A module, class or function docstring; `flows` maps the function's parameters to
        the keys their values are logged under (None outside a function), `written` holds the
        keys its body writes, `returned` those it logs the value it returns under."""
        only = self._only_logged(written)
        for block, mention in self._blocks(string):
            param = _documented(block.name, flows) if block.kind == "param" and flows is not None else None
            defined = _defined(mention.text, written) if written and block.kind in ("text", "returns") else ()
            if param is not None and flows is not None:
                self.mentions.append(_with(mention, (block.name,), flows[param]))
            elif defined:
                # "- gap_max: largest gap of any sequence" in the docstring of the function
                # that writes `stats["gap_max"]`: a sentence naming one of those keys speaks for
                # it, as a comment right above the entry would (attribution._below).
                self.mentions.append(Mention(mention.source, mention.path, mention.text, mention.origins, below=defined))
            elif only and block.kind == "text" and function:
                # "Only the slowest rank's time is reported." in the docstring of the function
                # that logs one key: the text is about that value, sentence by sentence as an
                # entry's is (attribution._about_the_value).
                self.mentions.append(_with(mention, (), only))
            elif block.kind in ("param", "attribute"):
                self.mentions.append(_with(mention, (block.name,)))
            elif block.kind == "returns" and function:
                # "Returns: the mean of the batch's losses" of a function that logs what it
                # returns under one key: the text is about that key's value too
                self.mentions.append(_with(mention, (block.name or function,), returned if len(returned) == 1 else ()))
            else:
                self.mentions.append(mention)

    def _only_logged(self, written: frozenset[str]) -> tuple[str, ...]:
        """The one key a function writes, when it logs it in this file itself; () otherwise."""
        if len(written) != 1:
            return ()
        (key,) = written
        return (key,) if any(key in found for found in self.keys_on_line.values()) else ()

    def attribute_docstring(self, name: str, string: Literal) -> None:
        """A string right after `name = ...` documents `name` (the Sphinx attribute docstring)."""
        for _, mention in self._blocks(string):
            self.mentions.append(_with(mention, (name,)))

    def anchor(self, lines: set[int], string: Literal) -> None:
        """A directive on one of `lines` (a def/class header) covers the docstring."""
        for line in lines:
            self.anchors.setdefault(line, set()).update(range(string.line, string.end_line + 1))

    def _blocks(self, string: Literal) -> list[tuple[docstrings.Block, Mention]]:
        self.anchor({string.end_line}, string)
        lines = source_lines(string.text)
        result = []
        for block in docstrings.parse(lines):
            if not block.pieces:
                continue  # a NumPy entry that gives only a type says nothing
            text = "\n".join(lines[i][s:e] for i, s, e in block.pieces)
            origins = tuple((string.line + i, (string.content_column if i == 0 else 1) + s) for i, s, _ in block.pieces)
            result.append((block, Mention(SourceKind.DOCSTRING, self.path, text, origins)))
        return result

    def log_message(self, text: str, origins: tuple[tuple[int, int], ...], keys: tuple[str, ...], value_end: int) -> None:
        """The words of a message next to a value it formats, which is logged under `keys` (said.py)."""
        self.mentions.append(Mention(SourceKind.LOG, self.path, text, origins, flows_to=keys, values=(value_end,)))

    # -- comments ---------------------------------------------------------------------------

    def comment(self, comment: Comment) -> None:
        body = comment.text.lstrip("#")
        text = body.lstrip()
        column = comment.column + 1 + len(comment.text) - len(text)
        found = directives.directive(text)
        if found is not None:
            at = column + found.start
            self.directives.append((Span(self.path, comment.line, at, comment.line, comment.column + 1 + len(comment.text)), found))
            text = text[: found.start].rstrip().rstrip("#")  # the remark before it is still read
        if text.strip() and not _HEADING.fullmatch(text):
            self.comments.append((comment.line, column, text.rstrip(), comment.trailing))

    def suppressions(self) -> list[Suppression]:
        """A directive covers its own line, and the strings it anchors (see `anchors`)."""
        return [directives.suppression(found, span, {span.line} | self.anchors.get(span.line, set())) for span, found in self.directives]

    def comment_mentions(self) -> list[Mention]:
        """Trailing comments speak for what their line logs or assigns; runs of own-line
        comments form one text whose sentences are attributed by the metrics they name."""
        mentions: list[Mention] = []
        block: list[tuple[int, int, str, bool]] = []

        def flush() -> None:
            if block:
                text = "\n".join(c[2] for c in block)
                # A logging call that starts on the next line, or a key written there (a dict entry,
                # `m["k"] = v`): attribution keeps the one a sentence names, if the code logs it.
                after = block[-1][0] + 1
                below = tuple(
                    dict.fromkeys(
                        (*self.calls_logging.get(after, ()), *self.keys_on_line.get(after, ()), *self.entries_on_line.get(after, ()))
                    )
                )
                assigns = tuple(self.names_on_line.get(after, ()))
                origins = tuple((c[0], c[1]) for c in block)
                forks = tuple(self.forks_on_line.get(after, {}).items())
                written = self._written_alone(after)
                mentions.append(
                    Mention(SourceKind.COMMENT, self.path, text, origins, below=below, assigns=assigns, writes=written, forks=forks)
                )
                block.clear()

        for comment in sorted(self.comments):
            line, column, text, trailing = comment
            if trailing:
                flush()
                subjects = tuple(self.names_on_line.get(line, ()))
                flows = tuple(dict.fromkeys(self.keys_on_line.get(line, ()))) or self._one_entry(line)
                mentions.append(Mention(SourceKind.COMMENT, self.path, text, ((line, column),), subjects, flows))
            elif block and (block[-1][0] != line - 1 or block[-1][1] != column):
                flush()
                block.append(comment)
            else:
                block.append(comment)
        flush()
        return mentions

    def _written_alone(self, line: int) -> str:
        """The key a statement `d[k] = v` starting on the line writes, when it writes one and the
        line after it writes none: a comment above a run of writes heads them all, and speaks
        for none of them by itself."""
        end = self.item_ends.get(line)
        if end is None or self.keys_on_line.get(end + 1) or self.entries_on_line.get(end + 1):
            return ""  # most blocks: no `d[k] = v` right below
        written = {*self.keys_on_line.get(line, ()), *self.entries_on_line.get(line, ())}
        return written.pop() if len(written) == 1 else ""

    def _one_entry(self, line: int) -> tuple[str, ...]:
        """The key of the one dict entry a line writes (`m["kl"] = v`), whose value a trailing
        comment speaks for wherever that dict is logged and under whatever sections; () when the
        line writes none or several."""
        entries = set(self.entries_on_line.get(line, ()))
        return tuple(entries) if len(entries) == 1 else ()


def _defined(text: str, written: frozenset[str]) -> tuple[str, ...]:
    """The keys of `written` that a docstring's lines define as a list does, each line opening
    with the key and a colon (`- gap_max: ...`, `kl: ...`), in their order."""
    found = (_DEFINITION.match(line) for line in text.split("\n"))
    return tuple(dict.fromkeys(m.group(1) for m in found if m is not None and m.group(1) in written))


def _documented(name: str, flows: dict[str, tuple[str, ...]]) -> str | None:
    """The parameter a docstring entry documents: its own name, or the one parameter that is
    the name with a word added (`ratio` for `ratio_value`, `norm` for `grad_norm`)."""
    if name in flows:
        return name
    near = [p for p in flows if p.startswith(name + "_") or p.endswith("_" + name)]
    return near[0] if len(near) == 1 else None


def _with(mention: Mention, subjects: tuple[str, ...], flows_to: tuple[str, ...] = ()) -> Mention:
    return Mention(mention.source, mention.path, mention.text, mention.origins, subjects, flows_to)
