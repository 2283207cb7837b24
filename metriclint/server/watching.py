"""Files changed on disk outside the editor: a checkout, a pull, `metriclint fix` in a terminal,
a formatter. The server asks the client to watch the files a project reads (LSP's dynamic
registration of `workspace/didChangeWatchedFiles`), and is told of each change.

A file the analysis holds that changed is read again from the disk, as an edit is; a file
created or deleted, or one the analysis does not hold (a settings file, a file that was
excluded), may change which files are read at all, so the workspace is analysed again (with
the cache, so only what changed is parsed). A file open in the editor is left alone: its
buffer, not the disk, is what the user sees.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable, Sequence

from lsprotocol import types

from metriclint.base.files import read_regular
from metriclint.server.locations import path_of
from metriclint.sources import SUFFIXES, YAML

WATCHED = "**/*.{" + ",".join(sorted({suffix.lstrip(".") for suffix in (*SUFFIXES, *YAML, ".toml")})) + "}"
REGISTRATION_ID = "metriclint-watched-files"
log = logging.getLogger("metriclint.server")


def wanted(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client watches files for a server that asks (dynamic registration)."""
    workspace = capabilities.workspace
    watching = workspace.did_change_watched_files if workspace is not None else None
    return bool(watching is not None and watching.dynamic_registration)


def registration() -> types.RegistrationParams:
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=[types.FileSystemWatcher(glob_pattern=WATCHED)])
    return types.RegistrationParams([types.Registration(REGISTRATION_ID, types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)])


async def register(ask: Callable[[types.RegistrationParams], Awaitable[None]]) -> None:
    """Ask the client to watch the files (`ask`: the server's `client/registerCapability`
    request). A client that refuses leaves the server as it was: edits still arrive as buffers."""
    try:
        await ask(registration())
    except Exception:  # noqa: BLE001 - any refusal or failure of the client's
        log.warning(
            "the client did not register the file watchers; files changed outside the editor are seen after a restart", exc_info=True
        )


@dataclass(frozen=True)
class Changes:
    """What the disk's changes ask of the server: files to read again, or a new analysis."""

    reread: dict[Path, bytes]
    reload: bool


def changes(events: Sequence[types.FileEvent], open_files: set[Path], held: Callable[[Path], bool]) -> Changes:
    """`held(path)`: whether a project's analysis holds the file (a source it read, its registry)."""
    reread: dict[Path, bytes] = {}
    reload = False
    for event in events:
        path = path_of(event.uri)
        if path is None or path in open_files:
            continue
        if event.type == types.FileChangeType.Changed and held(path):
            try:
                reread[path] = read_regular(path)  # not a FIFO's or a device's endless bytes
                continue
            except OSError:  # gone again already, or no longer a file: as deleted
                pass
        reload = True
    return Changes(reread, reload)
