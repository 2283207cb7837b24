"""`metriclint server` under a hostile or broken client (issues 34 and 36): texts that crash,
stall or flood a parser, message framing no client library would send, documents never
opened or too large, a flood of changes, URIs it cannot or must not read, settings and a
registry it cannot use, and the ways a client goes away. Each is answered as the protocol
says or ignored; the server stays alive (its worker restarted) or ends cleanly, and its memory
stays bounded. Driven over stdio with raw bytes (tests/lsp_raw.py), with a file's limits
lowered (tests/hostile.py)."""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("pygls", reason="needs the server extra: pip install -e '.[server]'")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

from conftest import ROOT  # noqa: E402
from hostile import HOSTILE, KINDS  # noqa: E402
from lsp_raw import RawClient, framed  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import signals  # noqa: E402  (bench/ is a folder of scripts, not a package)

from metriclint.server import navigation, stream  # noqa: E402

HOVERED = (9, 36)  # "after clipping" in the demo's docstring: a hover there names train/grad_norm


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    project = (tmp_path / "demo").resolve()
    shutil.copytree(ROOT / "fixtures" / "demo", project, ignore=shutil.ignore_patterns(".metriclint_cache", "expected.txt"))
    return project


@pytest.fixture
def client(demo: Path) -> Iterator[RawClient]:
    started = RawClient(demo)
    started.start(demo)
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait()


def _alive(client: RawClient, demo: Path) -> None:
    """The server answers a hover from the analysis, as it did before."""
    answer = client.hover((demo / "trainer" / "logging_utils.py").as_uri(), *HOVERED)
    assert "train/grad_norm" in answer["result"]["contents"]["value"], answer


def _open(client: RawClient, path: Path, text: str, version: int = 1, language: str = "python") -> str:
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": language, "version": version, "text": text}}
    )
    return path.as_uri()


def _replace_all(client: RawClient, uri: str, version: int, text: str) -> None:
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})


def _shown(client: RawClient, kind: int = 1) -> list[str]:
    """The messages the server asked the editor to show, of `kind` (1: error, 2: warning)."""
    return [m["params"]["message"] for m in _drained(client) if m.get("method") == "window/showMessage" and m["params"]["type"] == kind]


def _drained(client: RawClient) -> list[dict[str, Any]]:
    while not client.arrived.empty():
        client.received.append(client.arrived.get())
    return client.received


# -- texts that break a parser ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_buffer_is_ml900_and_the_server_answers_after_it(client: RawClient, demo: Path, kind: str) -> None:
    """The probe's buffers: one killed the server (SIGSEGV in libcst's parser), one drove it to
    5.8 GB, one left it answering nothing. Each is now its file's ML900; the worker that read
    it is replaced, and the next edit of the file is read as usual."""
    name, text, message = HOSTILE[kind]
    uri = _open(client, demo / name, text)
    [found] = client.diagnostics(uri, version=1)
    assert (found["code"], found["message"].startswith(message)) == ("ML900", True), found
    _alive(client, demo)
    _replace_all(client, uri, 2, "x = 1\n" if name.endswith(".py") else "{}\n")
    assert client.diagnostics(uri, version=2) == []
    assert client.stop() == 0 and b"Traceback" not in client.errors


def test_a_buffer_over_the_size_limit_is_ml900_unread(client: RawClient, demo: Path) -> None:
    """A 50 MB document: refused at max-file-size, as a file is, before a worker gets it."""
    uri = _open(client, demo / "trainer" / "huge.py", "x = 1\n" * (50 * 2**20 // 6))
    [found] = client.diagnostics(uri, version=1, timeout=120)
    assert "more than the limit of 16,777,216" in found["message"]
    _alive(client, demo)
    assert client.memory() < 1024 * 1024  # KiB: the document and a copy or two, not a parse of it
    assert client.stop() == 0


# -- messages no client library would send ---------------------------------------------------


def _messages(data: bytes) -> list[bytes | stream.Skipped]:
    return list(stream.messages(io.BytesIO(data)))


def test_the_stream_is_read_in_bounded_pieces() -> None:
    body = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
    huge = stream.MAX_MESSAGE + 1
    assert _messages(framed(body) * 2) == [body, body]
    assert _messages(b"content-length: %d\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n%s" % (len(body), body)) == [body]
    assert _messages(b"Content-Length: %d\r\n\r\n%s" % (huge, b" " * huge) + framed(body)) == [stream.Skipped(huge), body]
    assert _messages(b"Content-Length: 99999999999\r\n\r\n" + body) == []  # the stream ends first: nothing to answer
    assert _messages(b"Content-Length: 500\r\n\r\n" + body) == []  # cut short by the end of the stream
    assert _messages(b"X-Long: " + b"x" * 10 * stream.MAX_HEADER + b"\r\n" + framed(body)) == [body]
    assert _messages(b"Content-Length: abc\r\n\r\n" + framed(body)) == [body]
    # a body shorter than its length takes the next message with it, but for its end, which
    # comes before the next header on one line: the message after is read
    cut = len(b"{}" + framed(body)) - 10
    assert _messages(b"Content-Length: %d\r\n\r\n{}" % cut + framed(body) + framed(body)) == [b"{}" + framed(body)[:-10], body]


def test_a_content_length_beyond_any_memory_is_read_past(client: RawClient, demo: Path) -> None:
    """99,999,999,999 bytes killed the server as it asked for them; a message over the limit is
    now read past in pieces and said so, and the next one is answered."""
    client.send(b"Content-Length: %d\r\n\r\n" % (stream.MAX_MESSAGE + 1) + b" " * (stream.MAX_MESSAGE + 1), raw=True)
    _alive(client, demo)
    assert any("over the limit" in text for text in _shown(client, kind=2))
    client.send(b"Content-Length: 99999999999\r\n\r\n{}", raw=True)
    client.process.stdin.close()  # type: ignore[union-attr]
    assert client.wait(10) == 1  # ended without a shutdown request: 1, as for `exit`
    assert b"Traceback" not in client.errors and b"MemoryError" not in client.errors


def test_a_body_shorter_than_its_length_costs_the_next_message_only(client: RawClient, demo: Path) -> None:
    source = (demo / "trainer" / "logging_utils.py").as_uri()
    hover = {
        "jsonrpc": "2.0",
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": source}, "position": {"line": 9, "character": 36}},
    }
    client.send(b"Content-Length: 120\r\n\r\n{}" + framed({**hover, "id": 101}) + framed({**hover, "id": 102}), raw=True)
    assert client.until(lambda m: m.get("error", {}).get("code") == -32700)["id"] is None
    assert "train/grad_norm" in client.answer(102)["result"]["contents"]["value"]


def test_unknown_methods_and_a_text_that_is_not_utf_8(client: RawClient, demo: Path) -> None:
    client.notify("metriclint/no-such-notification", {"x": 1})
    client.notify("$/cancelRequest", {"id": 12345})
    assert client.answer(client.request("metriclint/no-such-request", {}))["error"]["code"] == -32601
    uri = _open(client, demo / "trainer" / "surrogate.py", '"""The norm \ud800 after clipping."""\n')
    [found] = client.diagnostics(uri, version=1)
    assert found["code"] == "ML900" and "decode" in found["message"]
    _alive(client, demo)
    assert _shown(client) == []


def test_a_change_to_a_document_never_opened_is_ignored(client: RawClient, demo: Path) -> None:
    """pygls raised on it, and showed the user an error for the client's slip."""
    _replace_all(client, (demo / "trainer" / "logging_utils.py").as_uri(), 2, "x = 1\n")
    client.notify(
        "textDocument/didChange", {"textDocument": {"uri": "file:///nowhere/x.py", "version": 2}, "contentChanges": [{"text": ""}]}
    )
    _alive(client, demo)
    assert _shown(client) == []


def test_a_thousand_changes_in_a_second_are_analysed_together(client: RawClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    uri = _open(client, source, source.read_text(encoding="utf-8"))
    _alive(client, demo)
    before = client.memory()
    change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "#"}
    client.send(
        *(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]},
            }
            for v in range(2, 1002)
        )
    )
    [found] = client.diagnostics(uri, version=1001)
    assert (found["code"], found["range"]["start"]["line"]) == ("ML001", 9)
    analysed = [m for m in _drained(client) if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
    assert len(analysed) < 100  # taken together, not one analysis per keystroke
    assert client.memory() < 1.5 * before


def test_uris_outside_the_project_or_of_another_scheme_are_left_alone(client: RawClient, demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "notes.py"
    outside.parent.mkdir()
    outside.write_text('"""The norm after clipping."""\n', encoding="utf-8")
    uris = [
        "untitled:Untitled-1",
        "https://example.com/train.py",
        "file://server/share/train.py",
        outside.as_uri(),
        demo.as_uri() + "/../../../../etc/passwd",
        "file:///dev/zero",
        "vscode-notebook-cell:/x.ipynb#1",
    ]
    for uri in uris:
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}})
        answer = client.hover(uri, 0, 0)
        assert answer.get("result") is None or "error" in answer
    _alive(client, demo)
    published = {m["params"]["uri"] for m in _drained(client) if m.get("method") == "textDocument/publishDiagnostics"}
    assert not published & set(uris)


# -- settings and a registry it cannot use ----------------------------------------------------


def test_a_registry_setting_it_cannot_use_is_said(demo: Path) -> None:
    """A `registry` setting that names a missing file, or one outside the folder that does not
    load, stopped every diagnostic and said nothing."""
    (demo.parent / "outside.yaml").write_text("version: 1\nmetrics: [\n", encoding="utf-8")
    for setting, said in (("missing.yaml", "registry file not found"), ("../outside.yaml", "outside.yaml:")):
        client = RawClient(demo)
        client.start(demo, {"registry": setting})
        message = client.until(lambda m: m.get("method") == "window/showMessage")["params"]
        assert message["type"] == 1 and said in message["message"] and str(demo) in message["message"], message
        assert client.hover((demo / "trainer" / "logging_utils.py").as_uri(), *HOVERED)["result"] is None  # answered: no analysis
        assert client.stop() == 0 and b"Traceback" not in client.errors, client.errors.decode()  # a problem with no line is no diagnostic


def test_a_registry_made_invalid_while_the_server_runs(client: RawClient, demo: Path) -> None:
    registry = demo / "metrics.yaml"
    good = registry.read_text(encoding="utf-8")
    uri = _open(client, registry, good, language="yaml")
    _alive(client, demo)
    _replace_all(client, uri, 2, good + "  broken: [\n")  # in the editor: diagnosed at its line
    assert any(d["severity"] == 1 for d in client.diagnostics(uri, version=2))
    _alive(client, demo)  # the last good analysis stays
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    registry.write_text("metrics: {\n", encoding="utf-8")  # on disk, then the folder is loaded again
    client.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": []}})
    message = client.until(lambda m: m.get("method") == "window/showMessage")["params"]["message"]
    assert "metrics.yaml:" in message
    registry.write_text(good, encoding="utf-8")
    client.notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [], "removed": []}})
    source = (demo / "trainer" / "logging_utils.py").as_uri()
    client.received.clear()
    again = client.until(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == source and m["params"]["diagnostics"]
    )
    assert [d["code"] for d in again["params"]["diagnostics"]] == ["ML001"]


# -- a client that goes away ------------------------------------------------------------------


def _session_left(client: RawClient) -> list[int]:
    """The processes the server started (its fork server and workers) still alive: the server
    leads their session, as bench/signals.py's runs do."""
    return signals.session_processes(client.process.pid)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see what the server leaves running")
@pytest.mark.parametrize("ending", ["stdin closed", "stdin closed mid-message", "SIGTERM"])
def test_the_server_ends_at_once_and_leaves_nothing_running(demo: Path, ending: str) -> None:
    """SIGTERM was ignored while stdin stayed open (pygls waited for its reading thread)."""
    client = RawClient(demo, session=True)
    client.start(demo)
    uri = _open(client, demo / "trainer" / "b.py", "x = 1\n")
    client.diagnostics(uri, version=1)  # a worker reads buffers now
    assert _session_left(client), "no worker was started"
    started = time.monotonic()
    if ending == "SIGTERM":
        client.process.send_signal(signal.SIGTERM)
    else:
        if ending.endswith("mid-message"):
            client.send(b'Content-Length: 300\r\n\r\n{"jsonrpc": "2.0", "method"', raw=True)
        client.process.stdin.close()  # type: ignore[union-attr]
    assert client.wait(10) == (143 if ending == "SIGTERM" else 1)
    assert time.monotonic() - started < 5 and b"Traceback" not in client.errors
    deadline = time.monotonic() + 5
    while _session_left(client) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _session_left(client) == []


def test_memory_after_a_thousand_edits_stays_within_half_again_that_after_the_first(client: RawClient, demo: Path) -> None:
    """Every analysed edit kept its buffer: 100 KB more memory per edit of this file."""
    blob = demo / "trainer" / "blob.py"
    blob.write_text('BLOB = b"' + "x" * 100_000 + '"\n', encoding="utf-8")
    uri = _open(client, blob, blob.read_text(encoding="utf-8"))
    _alive(client, demo)
    memory = []
    for version in range(2, 1002):
        change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": f"# {version}\n"}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        client.diagnostics(uri, version=version)
        client.received.clear()
        memory.append(client.memory())
    assert memory[-1] <= 1.5 * memory[0], (memory[0], memory[-1])


def test_a_watched_file_that_became_a_fifo_is_not_waited_for(client: RawClient, demo: Path) -> None:
    """A file the analysis holds, changed on disk: it is read again as a run reads it. Read
    as it was, a FIFO in its place (or a link to /dev/zero) held the server's loop for good."""
    held = demo / "trainer" / "step.py"
    _alive(client, demo)  # loaded: the file is one the analysis holds
    held.unlink()
    os.mkfifo(held)
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": held.as_uri(), "type": 2}]})
    _alive(client, demo)
    assert client.stop() == 0 and b"Traceback" not in client.errors


def test_a_position_past_the_end_of_its_line_names_no_word() -> None:
    """A client may send any character offset: one past the line's end raised IndexError in
    the hover, definition and references handlers (found by the LSP fuzz target); it is the
    line's end."""
    assert navigation.word_at("x = grad_norm", 14) == "grad_norm"  # just after it
    assert navigation.word_at("x = grad_norm", 26_498_757) == "grad_norm"  # at the line's end
    assert navigation.word_at("x = grad_norm  ", 26_498_757) is None
    assert navigation.word_at("", 5) is None


def test_a_registry_buffer_that_is_not_utf_8_is_its_diagnostic(client: RawClient, demo: Path) -> None:
    """JSON carries a lone surrogate, UTF-8 cannot: the registry's buffer raised in the
    analysis, logged with its traceback (found by the LSP fuzz target). It is now the
    registry's error, as a file that is not UTF-8 is, and the last good analysis stays."""
    registry = demo / "metrics.yaml"
    uri = _open(client, registry, registry.read_text(encoding="utf-8"), language="yaml")
    _alive(client, demo)
    _replace_all(client, uri, 2, "\ud800")
    [found] = client.diagnostics(uri, version=2)
    assert found["severity"] == 1 and found["message"].startswith("cannot read the registry: 'utf-8' codec"), found
    _alive(client, demo)
    assert client.stop() == 0 and b"Traceback" not in client.errors, client.errors.decode()
