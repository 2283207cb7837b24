"""`metriclint server` end to end: a real server over stdio, driven by pytest-lsp's client, on a
copy of fixtures/demo (the #2132 contradiction: a docstring that calls the logged gradient norm
"after clipping")."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, AsyncIterator, Callable

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="needs the server extra: pip install -e '.[server]'")
pytestmark = pytest.mark.slow  # each test starts an editor server: seconds apiece

from conftest import ROOT  # noqa: E402
from lsprotocol import types  # noqa: E402 - only with the extra
from pygls.exceptions import JsonRpcException  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "metriclint", "server"])
TIMEOUT = 30.0  # seconds; a run on the demo takes well under one


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    project = (tmp_path / "demo").resolve()
    shutil.copytree(ROOT / "fixtures" / "demo", project, ignore=shutil.ignore_patterns(".metriclint_cache", "expected.txt"))
    return project


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, demo: Path) -> AsyncIterator[None]:
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=demo.as_uri(),
        workspace_folders=[types.WorkspaceFolder(demo.as_uri(), "demo")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def _until(condition: Callable[[], bool]) -> None:
    """Wait for the server's notifications to make `condition` true."""

    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), TIMEOUT)


def _codes(client: LanguageClient, path: Path) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line) for d in client.diagnostics.get(path.as_uri(), []))


def _open(client: LanguageClient, path: Path) -> None:
    language = {".py": "python", ".yaml": "yaml", ".md": "markdown"}[path.suffix]
    item = types.TextDocumentItem(path.as_uri(), language, 1, path.read_text(encoding="utf-8"))
    client.text_document_did_open(types.DidOpenTextDocumentParams(item))


def _replace(client: LanguageClient, path: Path, version: int, line: int, old: str, new: str) -> None:
    """An incremental edit of line `line` (0-based): `old` becomes `new`, as typing does."""
    column = path.read_text(encoding="utf-8").splitlines()[line].index(old)
    where = types.Range(types.Position(line, column), types.Position(line, column + len(old)))
    change = types.TextDocumentContentChangePartial(where, new)
    document = types.VersionedTextDocumentIdentifier(version, path.as_uri())
    client.text_document_did_change(types.DidChangeTextDocumentParams(document, [change]))


async def _apply(client: LanguageClient, action: types.CodeAction, versions: dict[str, int]) -> None:
    """Apply a code action's edit to the open buffers, as an editor does."""
    assert action.edit is not None and action.edit.changes is not None
    for uri, edits in action.edit.changes.items():
        versions[uri] = versions.get(uri, 1) + 1
        changes: list[types.TextDocumentContentChangeEvent] = [types.TextDocumentContentChangePartial(e.range, e.new_text) for e in edits]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(versions[uri], uri), changes)
        )


@pytest.mark.asyncio
async def test_the_2132_contradiction_is_a_diagnostic_with_its_other_side(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: bool(client.diagnostics.get(source.as_uri())))
    [found] = client.diagnostics[source.as_uri()]
    assert (found.code, found.severity, found.source) == ("ML001", types.DiagnosticSeverity.Error, "metriclint")
    assert found.range == types.Range(types.Position(9, 33), types.Position(9, 47))
    assert found.code_description is None  # the package declares no documentation page yet: no dead link
    assert found.message.startswith("train/grad_norm: docstring says clipping=after")
    [other] = found.related_information or []
    assert other.location.uri == (demo / "metrics.yaml").as_uri()
    assert (other.location.range.start.line, other.message) == (6, "clipping: before")


@pytest.mark.asyncio
async def test_fixing_the_unsaved_buffer_clears_the_diagnostic(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    _replace(client, source, 2, 9, "after clipping", "before clipping")
    await _until(lambda: _codes(client, source) == [])
    assert "after clipping" in source.read_text(encoding="utf-8")  # the buffer was checked, not the file


@pytest.mark.asyncio
async def test_every_analysed_edit_is_answered_with_its_versioned_diagnostics(client: LanguageClient, demo: Path) -> None:
    """An edit that changes no finding still gets its diagnostics, with the buffer's version:
    the editor (and bench/server.py) can tell they are of the text it holds now."""
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    _replace(client, source, 2, 0, "Formats", "Shapes")
    published = await _published(client, source)
    assert (published.version, [(d.code, d.range.start.line) for d in published.diagnostics]) == (2, [("ML001", 9)])


async def _published(client: LanguageClient, path: Path) -> types.PublishDiagnosticsParams:
    """The next diagnostics published for `path`."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), TIMEOUT)
        if params.uri == path.as_uri():
            return params


@pytest.mark.asyncio
async def test_editing_the_registry_moves_the_diagnostics(client: LanguageClient, demo: Path) -> None:
    source, registry = demo / "trainer" / "logging_utils.py", demo / "metrics.yaml"
    _open(client, registry)
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    _replace(client, registry, 2, 6, "before", "after")
    # the docstring now agrees with the registry; the registry's own description does not
    await _until(lambda: _codes(client, source) == [] and _codes(client, registry) == [("ML001", 4)])


@pytest.mark.asyncio
async def test_a_broken_registry_buffer_is_diagnosed_at_its_line(client: LanguageClient, demo: Path) -> None:
    registry = demo / "metrics.yaml"
    _open(client, registry)
    _replace(client, registry, 2, 6, "before", "sideways")
    await _until(lambda: any("sideways" in d.message for d in client.diagnostics.get(registry.as_uri(), [])))


@pytest.mark.asyncio
async def test_hover_shows_what_every_source_says(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: source.as_uri() in client.diagnostics)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(source.as_uri()), types.Position(9, 36)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "train/grad_norm" in text and "clipping=before" in text and "clipping=after" in text
    assert "metrics.yaml:3" in text and "logged:" in text


@pytest.mark.asyncio
async def test_definition_and_references(client: LanguageClient, demo: Path) -> None:
    source, registry = demo / "trainer" / "logging_utils.py", demo / "metrics.yaml"
    _open(client, source)
    await _until(lambda: source.as_uri() in client.diagnostics)
    where = types.TextDocumentPositionParams(types.TextDocumentIdentifier(source.as_uri()), types.Position(18, 20))
    found = await client.text_document_definition_async(types.DefinitionParams(where.text_document, where.position))
    assert isinstance(found, types.Location)
    assert (found.uri, found.range.start) == (registry.as_uri(), types.Position(2, 2))

    context = types.ReferenceContext(include_declaration=True)
    key = types.TextDocumentIdentifier(registry.as_uri())
    refs = await client.text_document_references_async(
        types.ReferenceParams(context=context, text_document=key, position=types.Position(2, 5))
    )
    places = {(Path(r.uri.removeprefix("file://")).name, r.range.start.line) for r in refs or []}
    assert {("metrics.yaml", 2), ("logging_utils.py", 18), ("logging_utils.py", 9)} <= places


async def _actions(client: LanguageClient, path: Path, line: int) -> list[types.CodeAction]:
    where = types.Range(types.Position(line, 0), types.Position(line, 1000))
    context = types.CodeActionContext(diagnostics=client.diagnostics.get(path.as_uri(), []))
    found = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(path.as_uri()), where, context)
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


@pytest.mark.asyncio
async def test_the_fix_action_rewrites_the_phrase(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    fix, *others = await _actions(client, source, 9)
    assert fix.is_preferred and fix.title.startswith('Reword "after clipping"')
    assert fix.edit is not None and fix.edit.changes is not None
    [edit] = fix.edit.changes[source.as_uri()]
    assert (edit.range.start, edit.new_text) == (types.Position(9, 33), "before")
    await _apply(client, fix, {})
    await _until(lambda: _codes(client, source) == [])


@pytest.mark.asyncio
async def test_the_suppress_action_silences_the_finding(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    _open(client, source)
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    [silence] = [a for a in await _actions(client, source, 9) if a.title.startswith("Silence ML001")]
    assert silence.edit is not None and silence.edit.changes is not None
    [edit] = silence.edit.changes[source.as_uri()]
    assert (edit.range.start.line, edit.new_text) == (15, "  # metriclint: ignore[ML001]")
    await _apply(client, silence, {})
    await _until(lambda: _codes(client, source) == [])


@pytest.mark.asyncio
async def test_an_unregistered_key_can_be_added_to_the_registry(client: LanguageClient, demo: Path) -> None:
    source, registry = demo / "trainer" / "logging_utils.py", demo / "metrics.yaml"
    _open(client, source)
    _replace(client, source, 2, 18, "train/{tag}grad_norm", "train/{tag}grad_norm_raw")
    await _until(lambda: ("ML004", 18) in _codes(client, source))
    [add] = [a for a in await _actions(client, source, 18) if a.title.startswith("Add 'train/{tag}grad_norm_raw'")]
    assert add.edit is not None and add.edit.changes is not None
    [edit] = add.edit.changes[registry.as_uri()]
    assert (edit.range.start.line, edit.new_text) == (12, '  "train/{tag}grad_norm_raw":\n')  # after the last line


@pytest.mark.asyncio
async def test_a_failing_request_is_an_error_response_and_the_server_goes_on(client: LanguageClient, demo: Path) -> None:
    source = demo / "trainer" / "logging_utils.py"
    await _until(lambda: source.as_uri() in client.diagnostics)  # the project is loaded
    missing = types.TextDocumentIdentifier((demo / "gone.py").as_uri())
    found = await client.text_document_references_async(  # a file that cannot be read names nothing: no error
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=False), text_document=missing, position=types.Position(0, 0)
        )
    )
    assert found is None
    with pytest.raises(JsonRpcException):
        await client.protocol.send_request_async("metriclint/no-such-method", {})
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(source.as_uri()), types.Position(9, 36)))
    assert hover is not None


def test_malformed_messages_are_answered_with_json_rpc_errors(demo: Path) -> None:
    """Bytes no client library would send: each is answered with its JSON-RPC error (the
    client would wait forever for a request that gets no answer), and the server goes on."""
    source = (demo / "trainer" / "logging_utils.py").as_uri()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": demo.as_uri()}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": "bad", "method": "textDocument/hover", "params": {"textDocument": {}}},
        b"{not json",
        b"[1, 2]",
        b"\xff\xfe",
        {"jsonrpc": "2.0", "id": 6},  # neither a request nor a response
        {"jsonrpc": "2.0", "id": 7, "method": "metriclint/no-such-method", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": source}, "position": {"line": 9, "character": 36}},
        },
    ]
    server = subprocess.Popen(SERVER.server_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=demo)
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(TIMEOUT * 2, server.kill)  # a server that stops answering fails the test, not hangs it
    watchdog.start()
    try:
        server.stdin.write(b"".join(_framed(m if isinstance(m, bytes) else json.dumps(m).encode()) for m in messages))
        server.stdin.flush()
        answers: list[dict[str, Any]] = []
        while not answers or answers[-1].get("id") != 8:  # the hover waits for the analysis
            answers += [m for m in [_read_message(server.stdout)] if "id" in m]
        shutdown = [{"jsonrpc": "2.0", "id": 9, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
        _, errors_written = server.communicate(b"".join(_framed(json.dumps(m).encode()) for m in shutdown))
    finally:
        watchdog.cancel()
    errors = [(m["id"], m["error"]["code"]) for m in answers if "error" in m]
    assert errors == [("bad", -32602), (None, -32700), (None, -32600), (None, -32700), (6, -32600), (7, -32601)]
    assert "train/grad_norm" in answers[-1]["result"]["contents"]["value"]
    assert server.returncode == 0 and b"Traceback" not in errors_written


def _framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_message(stream: IO[bytes]) -> dict[str, Any]:
    """The next message of a JSON-RPC stream: headers, an empty line, the body."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.partition(b":")
        length = int(value) if name.strip().lower() == b"content-length" else length
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


@pytest_lsp.fixture(config=SERVER)
async def uninitialized(lsp_client: LanguageClient, demo: Path) -> AsyncIterator[None]:
    """A server that has not been told the client is ready, so it has not analysed anything."""
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_request_before_the_first_analysis_waits_for_it(uninitialized: LanguageClient, demo: Path) -> None:
    client = uninitialized
    params = types.InitializeParams(client_capabilities("visual-studio-code"), root_uri=demo.as_uri())
    client.capabilities = params.capabilities  # as initialize_session does, without its `initialized`
    await client.initialize_async(params)
    source = types.TextDocumentIdentifier((demo / "trainer" / "logging_utils.py").as_uri())
    hover = asyncio.ensure_future(client.text_document_hover_async(types.HoverParams(source, types.Position(9, 36))))
    where = types.DefinitionParams(source, types.Position(18, 20))
    definition = asyncio.ensure_future(client.text_document_definition_async(where))
    await asyncio.sleep(0.5)
    assert not hover.done() and not definition.done()  # no answer from an analysis that is not there yet
    client.initialized(types.InitializedParams())
    answered = await asyncio.wait_for(hover, TIMEOUT)
    assert answered is not None and isinstance(answered.contents, types.MarkupContent) and "train/grad_norm" in answered.contents.value
    found = await asyncio.wait_for(definition, TIMEOUT)
    assert isinstance(found, types.Location) and found.uri == (demo / "metrics.yaml").as_uri()


ALTERNATIVE = "alt.yaml"  # the demo's registry, but saying the gradient norm is clipped first


def _alternative(project: Path) -> Path:
    registry = project / ALTERNATIVE
    registry.write_text(
        (project / "metrics.yaml").read_text(encoding="utf-8").replace("clipping: before", "clipping: after"), encoding="utf-8"
    )
    return registry


def _session(*folders: Path, options: Any = None) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=folders[0].as_uri(),
        workspace_folders=[types.WorkspaceFolder(f.as_uri(), f.name) for f in folders],
        initialization_options=options,
    )


@pytest.mark.asyncio
async def test_the_registry_setting_replaces_the_folders_registry(uninitialized: LanguageClient, demo: Path) -> None:
    client, alternative, source = uninitialized, _alternative(demo), demo / "trainer" / "logging_utils.py"
    await client.initialize_session(_session(demo, options={"registry": ALTERNATIVE}))
    # the docstring agrees with alt.yaml; alt.yaml's own description does not
    await _until(lambda: _codes(client, alternative) == [("ML001", 4)])
    assert _codes(client, source) == [] and _codes(client, demo / "metrics.yaml") == []


@pytest.mark.asyncio
async def test_a_configuration_change_reloads_with_the_new_settings(client: LanguageClient, demo: Path) -> None:
    alternative, source = _alternative(demo), demo / "trainer" / "logging_utils.py"
    await _until(lambda: _codes(client, source) == [("ML001", 9)])
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams({"metriclint": {"registry": ALTERNATIVE}}))
    await _until(lambda: _codes(client, source) == [] and _codes(client, alternative) == [("ML001", 4)])
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams({"metriclint": {}}))
    await _until(lambda: _codes(client, source) == [("ML001", 9)] and _codes(client, alternative) == [])


@pytest.mark.asyncio
async def test_the_config_setting_names_the_settings_file(uninitialized: LanguageClient, demo: Path) -> None:
    client, alternative, source = uninitialized, _alternative(demo), demo / "trainer" / "logging_utils.py"
    (demo / "editor.toml").write_text(f'registry = "{ALTERNATIVE}"\n', encoding="utf-8")
    await client.initialize_session(_session(demo, options={"metriclint": {"config": "editor.toml"}}))
    await _until(lambda: _codes(client, alternative) == [("ML001", 4)])
    assert _codes(client, source) == []


@pytest.mark.asyncio
async def test_each_folder_of_a_multi_root_workspace_is_its_own_project(uninitialized: LanguageClient, demo: Path) -> None:
    """Two copies of the demo; the second's pyproject.toml names another registry."""
    client, other = uninitialized, demo.parent / "other"
    shutil.copytree(demo, other)
    alternative = _alternative(other)
    (other / "pyproject.toml").write_text(f'[tool.metriclint]\nregistry = "{ALTERNATIVE}"\n', encoding="utf-8")
    await client.initialize_session(_session(demo, other))
    first, second = demo / "trainer" / "logging_utils.py", other / "trainer" / "logging_utils.py"
    await _until(lambda: _codes(client, first) == [("ML001", 9)] and _codes(client, alternative) == [("ML001", 4)])
    assert _codes(client, second) == []
    _open(client, second)
    _replace(client, second, 2, 9, "after clipping", "before clipping")  # now it disagrees with its own folder's registry
    await _until(lambda: _codes(client, second) == [("ML001", 9)])
    assert _codes(client, first) == [("ML001", 9)]
