"""What the last run logged, in the editor: the hover on a metric adds the newest run's values
(the folder's `runs` setting), and an event file that grew is read on from its last offset."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import AsyncIterator

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="needs the server extra: pip install -e '.[server]'")
pytest.importorskip("google_crc32c")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

from conftest import ROOT  # noqa: E402
from live_writers import tensorboard  # noqa: E402
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from metriclint.live import summary  # noqa: E402

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "metriclint", "server"])


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    project = (tmp_path / "demo").resolve()
    shutil.copytree(ROOT / "fixtures" / "demo", project, ignore=shutil.ignore_patterns(".metriclint_cache", "expected.txt"))
    (project / "runs" / "old").mkdir(parents=True)
    (project / "runs" / "old" / "log.jsonl").write_text(json.dumps({"step": 1, "train/grad_norm": 9.0}) + "\n", encoding="utf-8")
    (project / "runs" / "new").mkdir()
    records = [{"step": s, "train/grad_norm": v} for s, v in [(1, 0.5), (2, 2.5), (3, 0.75)]]
    (project / "runs" / "new" / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return project


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, demo: Path) -> AsyncIterator[None]:
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=demo.as_uri(),
        workspace_folders=[types.WorkspaceFolder(demo.as_uri(), "demo")],
        initialization_options={"runs": ["runs/*"]},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_hover_shows_what_the_newest_run_logged(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    item = types.TextDocumentItem(source.as_uri(), "python", 1, source.read_text(encoding="utf-8"))
    client.text_document_did_open(types.DidOpenTextDocumentParams(item))
    where = types.HoverParams(types.TextDocumentIdentifier(source.as_uri()), types.Position(9, 36))
    hover = await client.text_document_hover_async(where)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "The last run (new) logged:" in text
    assert "train/grad_norm: 3 values, last 0.75 at step 3, from 0.5 to 2.5 (runs/new/log.jsonl)" in text
    assert "9.0" not in text  # the older run is not the last


def test_an_event_file_that_grew_is_read_on_from_its_offset(in_tmp: Path) -> None:
    tensorboard(in_tmp / "run", {"train/loss": [(1, 2.0), (2, 1.5)]})
    (path,) = (in_tmp / "run").glob("events.out.tfevents.*")
    first = summary.logged(in_tmp / "run")
    assert first[f"run/{path.name}"]["train/loss"].count == 2
    kept = summary._READ[f"run/{path.name}"]
    assert kept.offset == path.stat().st_size
    grown = in_tmp / "more"
    tensorboard(grown, {"train/loss": [(3, 1.25)]})
    (extra,) = grown.glob("events.out.tfevents.*")
    written = bytearray(path.read_bytes())
    written[20] ^= 0xFF  # spoil the first record: read again from the start, the file would stop there
    path.write_bytes(bytes(written) + _records(extra.read_bytes())[-1])  # and one record more, as a writer appends it
    again = summary.logged(in_tmp / "run")[f"run/{path.name}"]["train/loss"]
    assert (again.count, again.step, again.last) == (3, 3, 1.25)


def _records(data: bytes) -> list[bytes]:
    """The framed records of an event file, each whole."""
    import struct

    found, at = [], 0
    while at + 12 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        found.append(data[at : at + 16 + length])
        at += 16 + length
    return found
