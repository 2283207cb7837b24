"""ML900 unparsable-source: a file that could not be read, decoded or parsed; the run went on."""

from __future__ import annotations

from typing import Iterator

from metriclint.checks.rule import Corpus, Example, Rule
from metriclint.model import Finding, Severity


def unreadable_sources(corpus: Corpus) -> Iterator[Finding]:
    for item in corpus.unreadable:
        yield ML900.finding(item.span, item.message, phrase=item.message)


ML900 = Rule(
    code="ML900",
    name="unparsable-source",
    severity=Severity.WARNING,
    kind="hygiene",
    summary="A file could not be read, decoded or parsed, or reading it took longer than 60 s or 2 GiB of memory; the rest of the run went on.",
    why="Whatever the file says about metrics was not checked.",
    fix=(
        "Fix the syntax or encoding, or exclude the file in `[tool.metriclint] exclude` (a file over a limit is mostly generated). "
        "A reader that stalls without working (a machine too busy) is replaced and the file read once more before it is reported."
    ),
    check=unreadable_sources,
    good=(Example({"ok.py": "x = 1\n"}),),
    bad=(Example({"broken.py": "def f(:\n    pass\n"}, None, ("ML900 broken.py:1",)),),
    by_comment=False,  # a file that cannot be parsed yields no comments
)
