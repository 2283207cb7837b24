"""Character columns of UTF-8 byte offsets in one line (parsers count bytes, editors characters).

A column is counted from the nearest of points placed every few KB along the line, each at a
character's start and knowing how many characters precede it, so that a minified file (one
line of megabytes) is not decoded from the line's start for every node: that made a 1 MB
table cost a minute (issue 19).
"""

from __future__ import annotations

import bisect

_MARK = 4096  # bytes between two points


class Columns:
    def __init__(self, line: bytes) -> None:
        self.line = line
        self.offsets, self.counts = [0], [0]
        while len(line) - self.offsets[-1] > _MARK:
            mark = self.offsets[-1] + _MARK
            while mark < len(line) and 0x80 <= line[mark] < 0xC0:  # a continuation byte
                mark += 1
            self.counts.append(self.counts[-1] + _length(line[self.offsets[-1] : mark]))
            self.offsets.append(mark)

    def at(self, offset: int) -> int:
        """The 0-based character column of byte `offset`."""
        point = bisect.bisect_right(self.offsets, offset) - 1
        return self.counts[point] + _length(self.line[self.offsets[point] : offset])


def _length(data: bytes) -> int:
    """Characters in `data`; an undecodable byte counts as one, as an editor shows it."""
    return len(data.decode("utf-8", "replace"))
