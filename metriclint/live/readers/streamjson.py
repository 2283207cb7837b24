"""The elements of one array inside a large JSON document, decoded one at a time.

`trainer_state.json` keeps a run's whole history in one array; a long run's is hundreds of
megabytes. The standard library's decoder reads one value from a buffer (`raw_decode`), and
accepts the `NaN` and `Infinity` that Python's encoder writes for a diverged loss (which
streaming parsers such as ijson reject), so the document is walked with it: the top-level
object's keys one by one, each other value decoded and dropped, the array's elements yielded
as they come. Memory is one element and one chunk.
"""

from __future__ import annotations

import json
from typing import IO, Iterator

CHUNK = 1 << 20
LARGEST = 64 << 20  # one value larger than this is no history entry: the file is taken as corrupt
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class JsonError(ValueError):
    pass


class _Buffer:
    def __init__(self, handle: IO[bytes]) -> None:
        self.handle, self.text, self.at, self.ended = handle, "", 0, False
        self._pending = b""
        self._lines = 0  # line breaks in the text dropped so far

    def fill(self) -> bool:
        """Read on; False at the end of the file."""
        if self.ended:
            return False
        data = self._pending + self.handle.read(CHUNK)
        if len(data) == len(self._pending):
            self.ended = True
            if self._pending:
                raise JsonError("the file ends inside a UTF-8 character")
            return False
        try:
            text, self._pending = data.decode("utf-8"), b""
        except UnicodeDecodeError as error:
            if error.start < len(data) - 3:
                raise JsonError(f"not UTF-8 at byte {error.start} of a chunk") from None
            text, self._pending = data[: error.start].decode("utf-8"), data[error.start :]
        self._lines += self.text.count("\n", 0, self.at)
        self.text = self.text[self.at :] + text
        self.at = 0
        return True

    def line(self) -> int:
        """The line of the next character."""
        return self._lines + self.text.count("\n", 0, self.at) + 1

    def char(self) -> str:
        """The next character that is not white space, without taking it; "" at the end."""
        while True:
            while self.at < len(self.text) and self.text[self.at] in _SPACE:
                self.at += 1
            if self.at < len(self.text) or not self.fill():
                return self.text[self.at : self.at + 1]

    def take(self, expected: str) -> None:
        found = self.char()
        if found != expected:
            raise JsonError(f"expected {expected!r}, found {found or 'the end of the file'!r}")
        self.at += 1

    def value(self) -> object:
        self.char()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.at)
            except json.JSONDecodeError as error:
                if len(self.text) - self.at > LARGEST:
                    raise JsonError(f"a value longer than {LARGEST >> 20} MiB") from None
                if self.fill():
                    continue
                raise JsonError(error.msg) from None
            except RecursionError:
                raise JsonError("a value nested too deeply") from None
            if end == len(self.text) and not self.ended and self.fill():
                continue  # a number may go on in the next chunk
            self.at = end
            return value


def array_items(handle: IO[bytes], key: str) -> Iterator[object]:
    """The elements of the array at top-level `key` of the JSON object in `handle`."""
    buffer = _Buffer(handle)
    buffer.take("{")
    if buffer.char() == "}":
        return
    while True:
        name = buffer.value()
        buffer.take(":")
        if name == key and buffer.char() == "[":
            yield from _elements(buffer)
        else:
            buffer.value()
        if buffer.char() == "}":
            return
        buffer.take(",")


def top_level(handle: IO[bytes], skip: str) -> dict[str, tuple[object, int]]:
    """The top-level object's scalar members with their lines, its `skip` member passed over
    element by element."""
    buffer = _Buffer(handle)
    found: dict[str, tuple[object, int]] = {}
    buffer.take("{")
    if buffer.char() == "}":
        return found
    while True:
        buffer.char()
        line = buffer.line()
        name = buffer.value()
        buffer.take(":")
        if name == skip and buffer.char() == "[":
            for _ in _elements(buffer):
                pass
        else:
            value = buffer.value()
            if isinstance(name, str) and not isinstance(value, (dict, list)):
                found[name] = (value, line)
        if buffer.char() == "}":
            return found
        buffer.take(",")


def _elements(buffer: _Buffer) -> Iterator[object]:
    buffer.take("[")
    if buffer.char() == "]":
        buffer.take("]")
        return
    while True:
        yield buffer.value()
        if buffer.char() == "]":
            buffer.take("]")
            return
        buffer.take(",")
