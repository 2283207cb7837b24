"""A language client that writes raw bytes: what a broken or hostile client sends, framed or
not, and what the server answers, read in a thread of its own."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any, Callable

from hostile import LIMITED

# `metriclint server` with a file's limits lowered (hostile.py)
COMMAND = [sys.executable, "-c", LIMITED, "server"]
TIMEOUT = 30.0


def framed(body: bytes | dict[str, Any]) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(data), data)


class RawClient:
    """The server as a process, and every message it sent, in order."""

    def __init__(self, cwd: Path, command: list[str] = COMMAND, session: bool = False) -> None:
        """`session`: in a session of its own, whose id is its pid, to find what it leaves running."""
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=session,
        )
        self.received: list[dict[str, Any]] = []
        self.arrived = queue.Queue[dict[str, Any]]()
        self.errors = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_errors, daemon=True).start()
        self.next_id = 1

    def _read(self) -> None:
        assert self.process.stdout is not None
        while (message := _read_message(self.process.stdout)) is not None:
            self.arrived.put(message)

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.errors += line

    def send(self, *messages: bytes | dict[str, Any], raw: bool = False) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(m if raw and isinstance(m, bytes) else framed(m) for m in messages))
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def until(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT) -> dict[str, Any]:
        """The first message received, or yet to come, that is `wanted`."""
        deadline = time.monotonic() + timeout
        for message in self.received:
            if wanted(message):
                return message
        while True:
            message = self.arrived.get(timeout=max(0.0, deadline - time.monotonic()))
            self.received.append(message)
            if wanted(message):
                return message

    def answer(self, request_id: int, timeout: float = TIMEOUT) -> dict[str, Any]:
        return self.until(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def diagnostics(self, uri: str, version: int | None = None, timeout: float = TIMEOUT) -> list[dict[str, Any]]:
        """The diagnostics published next for `uri` (at `version`, if given)."""

        def published(m: dict[str, Any]) -> bool:
            params = m.get("params") or {}
            right_version = version is None or params.get("version") == version
            return m.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri and right_version

        found: list[dict[str, Any]] = self.until(published, timeout)["params"]["diagnostics"]
        return found

    def start(self, root: Path, options: Any = None) -> None:
        """initialize and initialized, for one folder."""
        answered = self.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "initializationOptions": options,
            },
        )
        self.answer(answered)
        self.notify("initialized", {})

    def hover(self, uri: str, line: int, character: int, timeout: float = TIMEOUT) -> dict[str, Any]:
        asked = self.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
        return self.answer(asked, timeout)

    def memory(self) -> int:
        """The server's resident memory, in KiB (Linux)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self) -> int:
        """shutdown, exit; the exit status."""
        self.request("shutdown", None)
        self.notify("exit", None)
        return self.wait()

    def wait(self, timeout: float = TIMEOUT) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGKILL)
                self.process.wait()


def _read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message of a JSON-RPC stream: headers, an empty line, the body; None at its end."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        length = int(value) if name.strip().lower() == b"content-length" else length
    if not line:
        return None
    message: dict[str, Any] = json.loads(stream.read(length))
    return message
