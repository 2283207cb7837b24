"""The language server's state, on pygls: the projects of the workspace, the buffers waiting to be
analysed, and what was published (handlers.py says which LSP message does what to it).

Each workspace folder is a `WorkspaceFolder`, analysed once when the client is ready, with its own
settings when the client answers `workspace/configuration` for it (else the workspace's, from
`initializationOptions` or `didChangeConfiguration`). Edits are
taken from the unsaved buffers: a change waits `DEBOUNCE` seconds for the next keystroke, a
save goes at once, and then only the edited files are read again and the checks re-run (in a
worker thread, so requests are answered meanwhile); keystrokes that arrive while an analysis
runs are analysed together after it. Diagnostics are published for every file whose findings
changed, so editing the registry moves them in every file that cites it.

A failure in a request is pygls's error response (and a line in the log); a failure while
analysing is logged and shown, and the last good analysis stays.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from pathlib import Path
from typing import Any, Coroutine, Sequence

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from metriclint import __version__
from metriclint.model import ConfigError, Finding, Problem
from metriclint.server import navigation
from metriclint.server.buffers import differs, encoded
from metriclint.server.diagnostics import diagnostic, problem_diagnostic
from metriclint.server.locations import document, path_of, position_in, shown, uri_of
from metriclint.server.project import WorkspaceFolder, WorkspaceOptions, client_options
from metriclint.server.protocol import Protocol

# Seconds without a keystroke before an edit is analysed: enough to take a burst of changes
# (an editor applying a multi-part edit) together; the analysis itself costs ~0.1 s on miles.
DEBOUNCE = 0.03
# Seconds a request about the code (hover, definition, references, code actions) waits for the
# workspace's analysis while it loads, before it is answered with an error that says so.
LOADING_WAIT = 30.0
# Seconds the server waits for the client's answer to `workspace/configuration` before it goes
# on with the workspace-wide settings: a client that never answers must not stop the analysis.
CONFIGURATION_WAIT = 5.0
REQUEST_FAILED = -32803  # LSP's error code for a valid request that could not be answered
_TOLD = 3  # a folder's settings problems quoted in the message; all are diagnostics
log = logging.getLogger("metriclint.server")


class Server(LanguageServer):
    """The projects of the workspace, the buffers waiting to be analysed, and what was published."""

    def __init__(self) -> None:
        super().__init__("metriclint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental, protocol_cls=Protocol)
        self.options = WorkspaceOptions()  # the workspace's settings (initializationOptions, didChangeConfiguration)
        self.settings: dict[Path, WorkspaceOptions] = {}  # each folder's, as its project was last loaded with
        self.projects: dict[Path, WorkspaceFolder] = {}
        self.ready = asyncio.Event()
        # Edited files not analysed yet: what was read from disk, or the URI of the open buffer,
        # whose text is taken when it is analysed (one copy, however many keystrokes came).
        self.waiting: dict[Path, bytes | str] = {}
        self.timer: asyncio.TimerHandle | None = None
        self.busy = asyncio.Lock()  # one analysis at a time: each starts from the last one's result
        self.published: dict[str, list[types.Diagnostic]] = {}
        self.problems: dict[Path, list[Problem]] = {}  # a folder's config or registry errors, until fixed
        self.running: set[asyncio.Task[None]] = set()  # held until done: the loop keeps only weak references

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message that could not be read is answered with its error (protocol.py); other
        failures outside a request are shown as pygls shows them."""
        if isinstance(self.protocol, Protocol) and self.protocol.unreadable(error):
            return
        super().report_server_error(error, source)

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in the background: a notification's handler returns at once, and the
        analysis it starts is not cancelled with it."""
        task = asyncio.get_running_loop().create_task(work)
        self.running.add(task)
        task.add_done_callback(self.finished)

    def finished(self, task: asyncio.Task[None]) -> None:
        """A background task's end: a failure is logged and shown, never lost with the task."""
        self.running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a background task failed", exc_info=task.exception())
            self.tell("metriclint: the analysis failed; see the log", types.MessageType.Error)

    def tell(self, text: str, kind: types.MessageType = types.MessageType.Error) -> None:
        """A message the editor shows the user (window/showMessage), and logs."""
        log.warning("%s", text)
        self.window_show_message(types.ShowMessageParams(kind, text))

    # -- projects --------------------------------------------------------------------------

    def folders(self) -> dict[Path, str]:
        """Each workspace folder, with the URI the client names it by."""
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if not uris and self.workspace.root_uri:
            uris = [self.workspace.root_uri]
        return {path: uri for uri in uris if (path := path_of(uri)) is not None}

    async def folder_settings(self, folders: dict[Path, str]) -> dict[Path, WorkspaceOptions]:
        """Each folder's settings: the client's answer for the folder (section `metriclint`,
        scoped to its URI) over the workspace's. A client that cannot answer (no capability,
        an error, no answer in time) leaves the workspace's."""
        settings = {folder: self.options for folder in folders}
        workspace = self.client_capabilities.workspace
        if not folders or workspace is None or not workspace.configuration:
            return settings
        items = [types.ConfigurationItem(scope_uri=uri, section="metriclint") for uri in folders.values()]
        try:
            answers = await asyncio.wait_for(self.workspace_configuration_async(types.ConfigurationParams(items)), CONFIGURATION_WAIT)
        except Exception:  # noqa: BLE001 - any failure of the client's: go on with the workspace's settings
            log.warning("the client did not answer workspace/configuration; using the workspace's settings", exc_info=True)
            return settings
        padded = [*answers, *[None] * len(folders)]  # a folder the client left out: the workspace's
        return {folder: client_options(answer).over(self.options) for folder, answer in zip(folders, padded)}

    async def reconfigure(self) -> None:
        """Reload if any folder's settings changed: a pull-model client's `didChangeConfiguration`
        says only that something may have."""
        if await self.folder_settings(self.folders()) != self.settings:
            await self.load()

    async def load(self) -> None:
        """(Re)analyse every workspace folder, then everything edited meanwhile."""
        folders = self.folders()
        settings = await self.folder_settings(folders)
        async with self.busy:
            self.ready.clear()
            projects = {}
            if folders:  # paths show as a run from the first folder shows them, and its cache entries are shared
                os.chdir(next(iter(folders)))
            self.problems = {}
            self.settings = settings
            for folder in folders:
                try:
                    projects[folder] = await asyncio.to_thread(WorkspaceFolder, folder, settings[folder])
                except ConfigError as error:
                    # Diagnostics of the files at fault, which may be neither open nor in the
                    # folder (a `registry` setting naming a missing file): said at once too.
                    self.problems[folder] = error.problems
                    self.tell(f"metriclint cannot check {folder}: " + "; ".join(map(str, error.problems[:_TOLD])))
                except Exception:  # noqa: BLE001 - the other folders are analysed; the server goes on
                    log.exception("analysing %s failed", folder)
                    self.tell(f"metriclint: analysing {folder} failed; see the log")
            self.projects = projects
            _settle()
            self.ready.set()
            self.publish()
        self.waiting.update({path: data for path, data in self.open_buffers().items() if differs(path, data)})
        await self.flush()

    def project_for(self, path: Path) -> WorkspaceFolder | None:
        """The innermost folder that holds `path`."""
        holding = [p for root, p in self.projects.items() if p.holds(path)]
        return max(holding, key=lambda p: len(p.root.parts), default=None)

    def open_buffers(self) -> dict[Path, bytes]:
        found = {path_of(uri): encoded(document.source) for uri, document in self.workspace.text_documents.items()}
        return {path: data for path, data in found.items() if path is not None}

    # -- edits -----------------------------------------------------------------------------

    def edited(self, path: Path, data: bytes | str, delay: float) -> None:
        """Analyse `data` (or the buffer whose URI it is) as the contents of `path` after `delay`
        seconds, unless another edit comes first."""
        self.waiting[path] = data
        if self.timer is not None:
            self.timer.cancel()
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(delay, lambda: self.start(self.flush()))

    def buffer_edited(self, uri: str, delay: float) -> None:
        path = path_of(uri)
        if path is not None:
            self.edited(path, uri, delay)

    async def flush(self) -> None:
        await self.ready.wait()
        async with self.busy:
            if not self.waiting:
                return  # an earlier flush took these edits together with its own
            waiting, self.waiting = self.waiting, {}
            by_project: dict[Path, dict[Path, bytes]] = {}
            for path, data in waiting.items():
                project, text = self.project_for(path), self.text_of(data)
                if project is not None and text is not None:
                    by_project.setdefault(project.root, {})[path] = text
            for root, buffers in by_project.items():
                try:
                    await asyncio.to_thread(self.projects[root].edit, buffers)
                    self.problems.pop(root, None)
                except ConfigError as error:  # a registry mid-edit: its problems are its diagnostics
                    self.problems[root] = error.problems
                except Exception:  # noqa: BLE001 - the last good analysis stays; the server goes on
                    log.exception("analysing %s failed", ", ".join(map(str, buffers)))
                    self.tell("metriclint: analysis failed; see the log")
            self.publish([path for buffers in by_project.values() for path in buffers])

    def text_of(self, data: bytes | str) -> bytes | None:
        """What `waiting` holds for a file, as bytes: a buffer's text when it is analysed (the
        file's, if it was closed since); None if that cannot be read."""
        if not isinstance(data, str):
            return data
        found = document(self.workspace, data)
        return encoded(found.source) if found is not None else None

    # -- diagnostics -----------------------------------------------------------------------

    def publish(self, analysed: Sequence[Path] = ()) -> None:
        """Send the diagnostics of every file whose findings changed since they were last sent,
        and of each `analysed` buffer even if they did not, with its version: the editor learns
        that they are the diagnostics of the text it holds now. A folder's config or registry
        errors are diagnostics of their files too."""
        current: dict[str, list[types.Diagnostic]] = {}
        for project in self.projects.values():
            for path, found in project.findings().items():
                current.setdefault(uri_of(path), []).extend(diagnostic(self.workspace, finding) for finding in found)
        for problem in (p for problems in self.problems.values() for p in problems if p.line > 0):  # the rest are said (load)
            current.setdefault(uri_of(problem.path), []).append(problem_diagnostic(self.workspace, problem))
        versions = self.versions(analysed)
        for uri in sorted(current.keys() | self.published.keys() | versions.keys()):
            diagnostics = current.get(uri, [])
            if uri in versions or self.published.get(uri, []) != diagnostics:
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diagnostics, versions.get(uri)))
        self.published = current

    def versions(self, paths: Sequence[Path]) -> dict[str, int | None]:
        """The URI each of `paths` is published under, with the version of its open buffer."""
        wanted = {path.resolve() for path in paths}
        found: dict[str, int | None] = {uri_of(str(path)): None for path in wanted}
        for uri, buffer in self.workspace.text_documents.items():
            path = path_of(uri)
            if path is not None and path.resolve() in wanted:
                found[uri_of(str(path.resolve()))] = buffer.version
        return found

    # -- what the cursor is on -------------------------------------------------------------

    async def loaded(self) -> None:
        """Wait for the analysis a request answers from, while the workspace (re)loads: an
        answer from no analysis would be an empty one that looks like "nothing here"."""
        try:
            await asyncio.wait_for(self.ready.wait(), LOADING_WAIT)
        except asyncio.TimeoutError:
            raise JsonRpcException("metriclint is still analysing the workspace; try again in a moment", REQUEST_FAILED) from None

    def metric_at(self, uri: str, position: types.Position) -> tuple[WorkspaceFolder, str] | None:
        path, name = path_of(uri), shown(uri)
        project = self.project_for(path) if path is not None else None
        found = document(self.workspace, uri) if project is not None else None
        if project is None or name is None or found is None:
            return None
        line, column = position_in(self.workspace, found, position)
        word = navigation.word_at(found.lines[line - 1], column) if line <= len(found.lines) else None
        key = navigation.metric_at(project.analysis, name, line, column, word)
        return (project, key) if key is not None else None

    def findings_in(self, uri: str, span: types.Range) -> tuple[WorkspaceFolder, list[Finding]] | None:
        path, name = path_of(uri), shown(uri)
        project = self.project_for(path) if path is not None else None
        text = document(self.workspace, uri) if project is not None else None
        if project is None or name is None or text is None:
            return None
        first, last = (position_in(self.workspace, text, at) for at in (span.start, span.end))
        found = project.findings().get(name, [])
        return project, [f for f in found if (f.span.line, f.span.column) <= last and first <= (f.span.end_line, f.span.end_column)]


def _settle() -> None:
    """Collect what the last analysis left, then exempt what is alive now (most of it the
    projects' analyses, kept until the next load) from the garbage collector's passes: a full
    pass over them costs ~0.1 s on miles, and struck in the middle of edits' analyses."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
