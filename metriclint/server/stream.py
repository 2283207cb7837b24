"""The client's messages on standard input, each of bounded size, and how the server ends.

pygls reads a message as its `Content-Length` header says, however large: a length of
99,999,999,999 killed the server asking for the memory, and a header line without an end grows
as long as the client writes. Here a header line is cut at `MAX_HEADER` bytes and a message
over `MAX_MESSAGE` is read past in small pieces and reported, never held. Messages are read
in a thread of their own, one at a time, and handled on the server's event loop before the
next is read, so at most one is in memory however fast the client writes.

The server ends at once, its workers killed, when standard input ends (0 after a `shutdown`
request, else 1, as for an `exit` notification), on `exit`, or on SIGTERM, SIGHUP or SIGINT
(143, 129, 130): nothing waits for an analysis under way, nor for a client that stopped
reading what the server writes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import os
import signal
import sys
import threading
from dataclasses import dataclass
from typing import BinaryIO, Iterator, NoReturn

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from metriclint.base import signals
from metriclint.server.protocol import Protocol

MAX_MESSAGE = 64 * 2**20  # bytes: a 16 MiB buffer (max-file-size), escaped as JSON, fits
MAX_HEADER = 1024  # bytes of one header line
_PIECE = 2**20  # bytes read at a time from a message read past
log = logging.getLogger("metriclint.server")


@dataclass(frozen=True)
class Skipped:
    """A message longer than MAX_MESSAGE, read past unparsed."""

    length: int


def messages(stream: BinaryIO) -> Iterator[bytes | Skipped]:
    """The bodies of the messages on `stream`, until it ends (in the middle of a message too).
    A header part without a valid `Content-Length` is passed over."""
    while True:
        length = _headers(stream)
        if length is None:
            return
        if length > MAX_MESSAGE:
            if not _read_past(stream, length):
                return
            yield Skipped(length)
            continue
        body = stream.read(length)
        if len(body) < length:
            return  # cut short by the end of the stream: nothing can answer it
        yield body


def _headers(stream: BinaryIO) -> int | None:
    """The `Content-Length` of the next message, once its headers' empty line is read; None at
    the end of the stream."""
    length = None
    while True:
        line = stream.readline(MAX_HEADER)
        if not line:
            return None
        if not line.endswith(b"\n"):  # too long: the rest of the line goes too
            while line and not line.endswith(b"\n"):
                line = stream.readline(MAX_HEADER)
            continue
        if not line.strip():
            if length is not None:
                return length
            continue
        # Anywhere in the line: after a body shorter than its length said, the next message's
        # header follows the rest of it on one line, and the stream is in step again.
        at = line.lower().rfind(b"content-length:")
        value = line[at + len(b"content-length:") :].strip() if at >= 0 else b""
        if value.isdigit():
            length = int(value)


def _read_past(stream: BinaryIO, length: int) -> bool:
    """Read `length` bytes and keep none; False if the stream ends first."""
    while length > 0:
        piece = stream.read(min(length, _PIECE))
        if not piece:
            return False
        length -= len(piece)
    return True


def serve(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> NoReturn:
    """Speak LSP on `stdin` and `stdout` until one of the endings above."""
    if threading.current_thread() is threading.main_thread():
        for signum in signals.ALL:
            signal.signal(signum, lambda number, frame: end(128 + number))
    server.protocol.set_writer(StdoutWriter(stdout))
    asyncio.run(_serve(server, stdin))
    raise AssertionError("the server's loop ends only by ending the process")


async def _serve(server: LanguageServer, stdin: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    reading = threading.Thread(target=_read, args=(server, stdin, loop), name="metriclint-stdin", daemon=True)
    reading.start()
    await asyncio.Event().wait()  # until `end`


def _read(server: LanguageServer, stdin: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
    """The reading thread: each message handled on the loop, the next read once it is."""
    for message in messages(stdin):
        asyncio.run_coroutine_threadsafe(_handle(server, message), loop).result()
    shut_down = getattr(server.protocol, "_shutdown", False)
    loop.call_soon_threadsafe(end, 0 if shut_down else 1)


async def _handle(server: LanguageServer, message: bytes | Skipped) -> None:
    if isinstance(message, Skipped):
        text = f"metriclint: a message of {message.length:,} bytes from the editor was over the limit of {MAX_MESSAGE:,} and was ignored"
        log.warning("%s", text)
        server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, text))
        return
    try:
        server.protocol.handle_message(json.loads(message, object_hook=server.protocol.structure_message))
    except SystemExit as exit:  # the `exit` notification
        end(exit.code if isinstance(exit.code, int) else 1)
    except JsonRpcException as error:  # a notification whose params do not fit: no id to answer at
        if not (isinstance(server.protocol, Protocol) and server.protocol.unreadable(error)):
            log.warning("a notification not read: %s", error)
    except Exception as error:  # noqa: BLE001 - answered (protocol.py) or shown; the server goes on
        if not (isinstance(server.protocol, Protocol) and server.protocol.unreadable(error)):
            log.exception("a message could not be handled")
            server.report_server_error(error, JsonRpcException)


def end(status: int) -> NoReturn:
    """End the process now: its worker processes killed, its output flushed. Nothing else is
    waited for: an analysis's thread may be anywhere, and the client may read no more."""
    for child in multiprocessing.active_children():
        child.kill()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
