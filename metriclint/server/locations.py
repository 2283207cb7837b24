"""Where things are, in the editor's terms: a finding's `Span` (1-based lines, columns in
characters, as the working directory shows the path) as an LSP `Location` (a URI, 0-based
lines, columns in the code units the client negotiated), and back.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from metriclint.base import files
from metriclint.base.paths import display
from metriclint.model import Span


def path_of(uri: str) -> Path | None:
    """The file a `file:` URI names; None for other schemes (an untitled buffer), and for a
    path no file can have (a NUL in it)."""
    found = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(found) if found and "\x00" not in found else None


def document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The document at `uri`: the editor's buffer when it is open, else the file, read as a run
    reads it (pygls reads whatever is there: a FIFO hung the server, /dev/zero filled its
    memory); None if it cannot be read."""
    found = workspace.text_documents.get(unquote(uri))
    if found is not None:
        return found
    path = path_of(uri)
    try:
        text = files.read_text(path) if path is not None else None
    except (OSError, UnicodeDecodeError):
        return None
    return TextDocument(uri, text, position_codec=workspace.position_codec) if text is not None else None


def uri_of(shown: str) -> str:
    """The URI of a path as the engine shows it (relative to the working directory)."""
    return Path(os.getcwd(), shown).resolve().as_uri()


def shown(uri: str) -> str | None:
    """How the engine shows the file a URI names, to match findings and sightings against it."""
    path = path_of(uri)
    return display(path) if path is not None else None


def range_of(workspace: Workspace, span: Span) -> types.Range:
    """`span` in the client's units, counted on the document's text (its buffer when open)."""
    found = document(workspace, uri_of(span.path))
    lines = found.lines if found is not None else []  # gone from disk: characters are the best guess
    inner = ServerTextRange(ServerTextPosition(span.line - 1, span.column - 1), ServerTextPosition(span.end_line - 1, span.end_column - 1))
    return (
        workspace.position_codec.range_to_client_units(lines, inner)
        if lines
        else types.Range(types.Position(inner.start.line, inner.start.character), types.Position(inner.end.line, inner.end.character))
    )


def location_of(workspace: Workspace, span: Span) -> types.Location:
    return types.Location(uri_of(span.path), range_of(workspace, span))


def position_in(workspace: Workspace, found: TextDocument, position: types.Position) -> tuple[int, int]:
    """A client position in `found` (see `document`) as the engine counts it: 1-based line
    and character column."""
    inner = workspace.position_codec.position_from_client_units(found.lines, position)
    return inner.line + 1, inner.character + 1


def contains(span: Span, line: int, column: int) -> bool:
    """Whether the 1-based position falls in `span` (its end included: a cursor after the last character is on it)."""
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)
