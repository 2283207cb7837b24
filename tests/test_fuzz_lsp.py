"""Fuzz targets for the editor server's input (issue 34): the byte stream its messages are
framed in, and streams of messages a broken or hostile client could send, each shaped like a
real one (the methods an editor sends, the demo's files, positions, versions, buffer texts)
with odd pieces mixed in (params of the wrong shape, URIs of other schemes or outside the
project, texts that crash or stall a parser, bodies that are not JSON or not UTF-8).

Whatever comes in, the framing never holds more than one message's bytes, and the server
answers the request that follows each stream, within the time a file may take, without a
traceback in its log, its memory under 2 GB. One server takes every stream of a run, as a
long editing session would. `METRICLINT_FUZZ=N` runs N examples per target (see test_fuzz.py):

    METRICLINT_FUZZ=10000 python -m pytest tests/test_fuzz_lsp.py -p no:randomly -n 0
"""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("pygls", reason="needs the server extra: pip install -e '.[server]'")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

from conftest import ROOT  # noqa: E402
from hostile import HOSTILE, SECONDS  # noqa: E402
from lsp_raw import RawClient, framed  # noqa: E402

from metriclint.server import stream  # noqa: E402

BUDGET = int(os.environ.get("METRICLINT_FUZZ", "15"))
FUZZ = settings(max_examples=BUDGET, deadline=None, suppress_health_check=list(HealthCheck))
ANSWER_SECONDS = 60.0  # issue 34: no hang over 60 s
MEMORY_KIB = 2 * 2**20  # no process over 2 GB

# -- framing ------------------------------------------------------------------------------------

BODY = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" "))
JUNK_HEADER = st.sampled_from(
    [
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        b"content-length: x\r\n",
        b"Content-Length: -3\r\n",
        b"Content-Length:\r\n",
        b"X: " + b"y" * 3000 + b"\r\n",
        b"\r\n",
        b"Content-Length: 1e3\r\n",
        b"\xff\xfe\r\n",
    ]
)


@st.composite
def frame(draw: st.DrawFn) -> bytes:
    body = draw(BODY)
    length = draw(st.one_of(st.just(len(body)), st.integers(0, 80), st.sampled_from([stream.MAX_MESSAGE + 1, 10**11])))
    headers = b"".join(draw(st.lists(JUNK_HEADER, max_size=3)))
    return headers + b"Content-Length: %d\r\n\r\n" % length + body


@FUZZ
@given(st.lists(st.one_of(frame(), BODY), max_size=8))
def test_fuzz_message_framing(parts: list[bytes]) -> None:
    data = b"".join(parts)
    found = list(stream.messages(io.BytesIO(data)))
    assert all(isinstance(m, stream.Skipped) or len(m) <= stream.MAX_MESSAGE for m in found)
    assert sum(len(m) for m in found if isinstance(m, bytes)) <= len(data)
    event(f"messages: {min(len(found), 4)}")


def test_well_framed_messages_come_out_as_they_went_in() -> None:
    bodies = [b"{}", b'{"a": "\\r\\n"}', b"x" * 5000, b""]
    assert list(stream.messages(io.BytesIO(b"".join(framed(b) for b in bodies if b)))) == [b for b in bodies if b]


# -- message streams ----------------------------------------------------------------------------

DEMO = (ROOT / "fixtures" / "demo").resolve()
FILES = ["trainer/logging_utils.py", "trainer/step.py", "metrics.yaml", "README.md", "trainer/new.py", "dash.json", "gone/x.py"]
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False), st.text(max_size=8))
JSON_VALUE = st.recursive(
    JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8
)
TEXT = st.one_of(
    st.sampled_from(
        [
            '"""The norm after clipping."""\n',
            'def f(grad_norm):\n    return {"train/grad_norm": grad_norm}  # pre-clip\n',
            "version: 1\nmetrics:\n  train/grad_norm:\n    semantics: {clipping: before}\n",
            "metrics: [\n",
            "# Metrics\n\n| a | b |\n|---|---|\n",
            '{"panels": [{"title": "train/grad_norm", "description": "after clipping"}]}',
            "",
            "\ud800",
            "\x00",
            "\ufeff\ufeff",
        ]
    ),
    st.text(max_size=60),
    st.sampled_from([text for _, text, _ in HOSTILE.values()]),
)


@st.composite
def uri(draw: st.DrawFn, root: Path) -> str:
    kind = draw(st.sampled_from(["file", "file", "file", "other"]))
    if kind == "file":
        return (root / draw(st.sampled_from(FILES))).as_uri()
    return draw(
        st.sampled_from(
            [
                "untitled:Untitled-1",
                "https://example.com/a.py",
                "file:///dev/zero",
                "file://host/share/a.py",
                "file:///etc/passwd",
                root.as_uri() + "/../../a.py",
                "file:",
                "",
                "file:///%00",
                "file:///" + "a" * 300,
            ]
        )
    )


def position(draw: st.DrawFn) -> dict[str, Any]:
    line = draw(st.one_of(st.integers(0, 30), st.integers(-2, 2**31)))
    return {"line": line, "character": draw(st.one_of(st.integers(0, 60), st.integers(-2, 2**31)))}


@st.composite
def message(draw: st.DrawFn, root: Path) -> dict[str, Any] | bytes:
    """One message an editor could send, or a broken one."""
    where = draw(uri(root))
    span = {"start": position(draw), "end": position(draw)}
    document = {"uri": where, "version": draw(st.integers(-1, 10**6))}
    params = {
        "textDocument/didOpen": {"textDocument": {**document, "languageId": "python", "text": draw(TEXT)}},
        "textDocument/didChange": {
            "textDocument": document,
            "contentChanges": draw(
                st.lists(
                    st.one_of(
                        st.builds(lambda text: {"text": text}, TEXT),
                        st.builds(lambda text: {"range": span, "text": text}, TEXT),
                    ),
                    max_size=3,
                )
            ),
        },
        "textDocument/didSave": {"textDocument": {"uri": where}},
        "textDocument/didClose": {"textDocument": {"uri": where}},
        "textDocument/hover": {"textDocument": {"uri": where}, "position": position(draw)},
        "textDocument/definition": {"textDocument": {"uri": where}, "position": position(draw)},
        "textDocument/references": {"textDocument": {"uri": where}, "position": position(draw), "context": {"includeDeclaration": True}},
        "textDocument/codeAction": {"textDocument": {"uri": where}, "range": span, "context": {"diagnostics": []}},
        "workspace/didChangeConfiguration": {
            "settings": draw(
                st.one_of(
                    JSON_VALUE,
                    st.fixed_dictionaries(
                        {
                            "metriclint": st.fixed_dictionaries(
                                {"registry": st.sampled_from(["metrics.yaml", "missing.yaml", "../x.yaml", "", "/dev/zero"])}
                            )
                        }
                    ),
                )
            )
        },
        "$/cancelRequest": {"id": draw(st.integers(0, 100))},
        "$/setTrace": {"value": "verbose"},
        "metriclint/unknown": draw(JSON_VALUE),
    }
    method = draw(st.sampled_from(sorted(params)))
    shape = draw(st.sampled_from(["right", "right", "right", "odd params", "response", "not json", "not utf-8"]))
    if shape == "not json":
        return b'{"jsonrpc": "2.0", "method": "' + method.encode() + b'", "params": {'
    if shape == "not utf-8":
        return b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"text": "\xff\xfe"}}}'
    if shape == "response":
        return {"jsonrpc": "2.0", "id": draw(st.one_of(st.integers(0, 5), st.text(max_size=3))), "result": draw(JSON_VALUE)}
    found: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params[method] if shape == "right" else draw(JSON_VALUE)}
    if not method.startswith(("textDocument/did", "workspace/did", "$/")) and draw(st.booleans()):
        found["id"] = draw(st.integers(1000, 10**9))  # a request; else sent as a notification
    event(f"{method} ({shape})")
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawClient, Path]]:
    root = tmp_path_factory.mktemp("lsp") / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns(".metriclint_cache", "expected.txt"))
    client = RawClient(root)
    client.start(root)
    yield client, root
    client.stop()


@FUZZ
@given(st.data())
def test_fuzz_message_streams(server: tuple[RawClient, Path], data: st.DataObject) -> None:
    client, root = server
    sent = data.draw(st.lists(message(root), max_size=6))
    logged = len(client.errors)
    assert client.process.poll() is None, "the server ended: " + client.errors.decode(errors="replace")[-3000:]
    client.send(*sent)
    answer = client.hover((root / "trainer" / "logging_utils.py").as_uri(), 9, 36, timeout=ANSWER_SECONDS + SECONDS)
    time.sleep(0.05)  # for the log of what came before the answer to be read
    log = client.errors[logged:].decode(errors="replace")
    assert "error" not in answer or answer["error"]["code"] != -32603, answer
    assert client.process.poll() is None, log[-2000:]
    assert client.memory() < MEMORY_KIB
    assert "Traceback" not in log, log[-3000:] + "\n" + json.dumps(sent, default=repr)[:2000]
    client.received.clear()
