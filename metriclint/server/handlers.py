"""`metriclint server`'s LSP side: which request or notification does what to the `Server`
(language_server.py), and `serve`, which speaks LSP on stdin and stdout."""

from __future__ import annotations

import logging
import multiprocessing
import sys

from lsprotocol import types

from metriclint.extract import runner
from metriclint.server import actions, navigation, stream, watching
from metriclint.server.buffers import differs, encoded, on_disk
from metriclint.server.language_server import DEBOUNCE, Server
from metriclint.server.locations import document, location_of, path_of, shown
from metriclint.server.project import client_options
from metriclint.server.protocol import quieten_pygls

server = Server()


@server.feature(types.INITIALIZE)
def initialize(ls: Server, params: types.InitializeParams) -> None:
    ls.options = client_options(params.initialization_options)


@server.feature(types.INITIALIZED)
def initialized(ls: Server, params: types.InitializedParams) -> None:
    if watching.wanted(ls.client_capabilities):
        ls.start(watching.register(ls.client_register_capability_async))
    ls.start(ls.load())


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files_changed(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
    """Files changed on disk outside the editor (server/watching.py)."""
    held = lambda path: (project := ls.project_for(path)) is not None and (project.knows(path) or project.is_registry(path))  # noqa: E731
    found = watching.changes(params.changes, set(ls.open_buffers()), held)
    if found.reload:
        ls.start(ls.load())
    for path, data in found.reread.items():
        ls.edited(path, data, 0)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def configuration_changed(ls: Server, params: types.DidChangeConfigurationParams) -> None:
    """New workspace settings (none sent: the same ones), and each folder's asked again."""
    if params.settings is not None:
        ls.options = client_options(params.settings)
    ls.start(ls.reconfigure())


@server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
def folders_changed(ls: Server, params: types.DidChangeWorkspaceFoldersParams) -> None:
    ls.start(ls.load())


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def opened(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is not None and differs(path, encoded(params.text_document.text)):
        ls.buffer_edited(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def changed(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
    ls.buffer_edited(params.text_document.uri, DEBOUNCE)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def saved(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
    ls.buffer_edited(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def closed(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
    """A buffer closed unsaved: the file on disk is what the project holds again."""
    path = path_of(params.text_document.uri)
    data = on_disk(path) if path is not None else None
    if path is not None and data is not None:
        ls.edited(path, data, 0)


@server.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
    await ls.loaded()
    found = ls.metric_at(params.text_document.uri, params.position)
    if found is None:
        return None
    project, key = found
    text = navigation.explanation(project.analysis, key, navigation.last_run(project.root, project.runs, project.analysis, key))
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
async def definition(ls: Server, params: types.DefinitionParams) -> types.Location | None:
    await ls.loaded()
    found = ls.metric_at(params.text_document.uri, params.position)
    span = navigation.definition(found[0].analysis, found[1]) if found is not None else None
    return location_of(ls.workspace, span) if span is not None else None


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
async def references(ls: Server, params: types.ReferenceParams) -> list[types.Location] | None:
    await ls.loaded()
    found = ls.metric_at(params.text_document.uri, params.position)
    if found is None:
        return None
    spans = navigation.references(found[0].analysis, found[1], params.context.include_declaration)
    return [location_of(ls.workspace, span) for span in spans]


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
async def code_action(ls: Server, params: types.CodeActionParams) -> list[types.CodeAction] | None:
    await ls.loaded()
    found = ls.findings_in(params.text_document.uri, params.range)
    if found is None:
        return None
    project, findings = found
    text = document(ls.workspace, params.text_document.uri)
    name = shown(params.text_document.uri) or ""
    return [a for f in findings for a in actions.actions(ls.workspace, text, name, f, project.analysis.registry)] if text else None


def serve() -> None:
    """Speak LSP on stdin and stdout (server/stream.py); log to stderr, which clients show as
    the server's log."""
    logging.basicConfig(level=logging.WARNING, format="metriclint server: %(levelname)s %(name)s: %(message)s")
    quieten_pygls()
    # Extraction workers start from a clean process rather than a fork of this one: a fork
    # taken while the event loop and its threads run hangs in the child.
    multiprocessing.set_start_method("forkserver")
    with runner.standing():  # each project's buffers are read in a worker kept for them
        stream.serve(server, sys.stdin.buffer, sys.stdout.buffer)
