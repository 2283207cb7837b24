"""Where things are, in the editor's terms: a finding's `Span` (1-based lines, columns in
characters, as the working directory shows the path) as an LSP `Location` (a URI, 0-based
lines, columns in the code units the client negotiated), and back.
"""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import Workspace
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from metriclint.base.paths import display
from metriclint.model import Span


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names; None for other schemes (an untitled buffer)."""
    found = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(found) if found else None


def uri_of(shown: str) -> str:
    """The URI of a path as the engine shows it (relative to the working directory)."""
    return Path(os.getcwd(), shown).resolve().as_uri()


def shown(uri: str) -> str | None:
    """How the engine shows the file a URI names, to match findings and sightings against it."""
    path = path_of(uri)
    return display(path) if path is not None else None


def range_of(workspace: Workspace, span: Span) -> types.Range:
    """`span` in the client's units, counted on the document's text (its buffer when open)."""
    document = workspace.get_text_document(uri_of(span.path))
    try:
        lines = document.lines
    except OSError:  # gone from disk: characters are the best guess
        lines = []
    inner = ServerTextRange(
        ServerTextPosition(span.line - 1, span.column - 1), ServerTextPosition(span.end_line - 1, span.end_column - 1)
    )
    return document.position_codec.range_to_client_units(lines, inner) if lines else types.Range(
        types.Position(inner.start.line, inner.start.character), types.Position(inner.end.line, inner.end.character)
    )


def location_of(workspace: Workspace, span: Span) -> types.Location:
    return types.Location(uri_of(span.path), range_of(workspace, span))


def position_in(workspace: Workspace, uri: str, position: types.Position) -> tuple[int, int]:
    """A client position as the engine counts it: 1-based line and character column."""
    document = workspace.get_text_document(uri)
    inner = document.position_codec.position_from_client_units(document.lines, position)
    return inner.line + 1, inner.character + 1


def contains(span: Span, line: int, column: int) -> bool:
    """Whether the 1-based position falls in `span` (its end included: a cursor after the last character is on it)."""
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)
