"""`metriclint server` follows the disk: files changed outside the editor (a checkout, a pull,
`metriclint fix` in a terminal, a formatter) are read again when the client's file watchers
say so, and the hover and definition work on a metric's own name (an `Args:` entry's name,
the parameter that carries the value), not only on its key and its description."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="needs the server extra: pip install -e '.[server]'")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

import test_server  # noqa: E402
from lsprotocol import types  # noqa: E402 - only with the extra
from pytest_lsp import LanguageClient  # noqa: E402

# the server test's project, client and wait, as fixtures of this module too
demo, client, _until = test_server.demo, test_server.client, test_server._until


def _cleared(client: LanguageClient, path: Path) -> bool:
    return path.as_uri() in client.diagnostics and not client.diagnostics[path.as_uri()]


def _changed(client: LanguageClient, *changes: tuple[Path, types.FileChangeType]) -> None:
    events = [types.FileEvent(path.as_uri(), kind) for path, kind in changes]
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(events))


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_is_read_again(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    await _until(lambda: bool(client.diagnostics.get(source.as_uri())))  # the contradiction, from the first analysis
    await _until(lambda: any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in getattr(client, "registered", [])))
    [watching] = [r for r in getattr(client, "registered", []) if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert watching.register_options is not None
    # `metriclint fix` in a terminal: the file is rewritten, not opened in the editor.
    source.write_text(source.read_text(encoding="utf-8").replace("after clipping", "before clipping"), encoding="utf-8")
    _changed(client, (source, types.FileChangeType.Changed))
    await _until(lambda: _cleared(client, source))


@pytest.mark.asyncio
async def test_a_file_created_or_deleted_on_disk_is_seen(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    await _until(lambda: bool(client.diagnostics.get(source.as_uri())))
    added = demo / "trainer" / "added.py"  # a checkout brings a file that contradicts the registry
    added.write_text('def f(grad_norm):\n    """Args:\n        grad_norm: norm after clipping.\n    """\n', encoding="utf-8")
    _changed(client, (added, types.FileChangeType.Created))
    await _until(lambda: bool(client.diagnostics.get(added.as_uri())))
    source.unlink()  # and removes one
    _changed(client, (source, types.FileChangeType.Deleted))
    await _until(lambda: _cleared(client, source))


def _position(path: Path, line: int, name: str) -> types.Position:
    return types.Position(line, path.read_text(encoding="utf-8").splitlines()[line].index(name) + 1)


@pytest.mark.asyncio
@pytest.mark.parametrize("line", [3, 9], ids=["parameter", "args-entry"])
async def test_hover_and_definition_on_a_metrics_own_name(client: LanguageClient, demo: Path, line: int) -> None:
    # `def log_train_step(tracker, loss: float, grad_norm: float, ...)` and `grad_norm: Gradient
    # norm after clipping.` in its Args: the names people hover first.
    source = demo / "trainer" / "logging_utils.py"
    await _until(lambda: bool(client.diagnostics.get(source.as_uri())))
    document = types.TextDocumentIdentifier(source.as_uri())
    at = _position(source, line, "grad_norm")
    hover = await client.text_document_hover_async(types.HoverParams(document, at))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("```text\ntrain/grad_norm\nregistry (metrics.yaml:3):")
    found = await client.text_document_definition_async(types.DefinitionParams(document, at))
    assert isinstance(found, types.Location) and (found.uri, found.range.start) == ((demo / "metrics.yaml").as_uri(), types.Position(2, 2))
    elsewhere = await client.text_document_hover_async(types.HoverParams(document, _position(source, line, ":")))
    assert elsewhere is None  # not on a name
