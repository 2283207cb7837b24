"""Code actions for the findings under the cursor: the rewrite `metriclint fix` would make (on
the unsaved buffer), a suppression comment, and, for a key nobody registered (ML004), a new
registry entry."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace
from pygls.workspace.position_codec import ServerTextPosition

from metriclint.checks import ML004
from metriclint.fix import rewrite
from metriclint.knowledge.registry import Registry
from metriclint.model import Finding
from metriclint.server.edits import Insertion, registry_entry, suppression
from metriclint.server.locations import document, uri_of


def actions(
    workspace: Workspace, document: TextDocument, shown: str, finding: Finding, registry: Registry | None
) -> list[types.CodeAction]:
    """Every action that settles `finding`, the fix first."""
    found = [_fix(document, shown, finding), _suppress(document, shown, finding)]
    if finding.rule == ML004.code and registry is not None:
        found.append(_register(workspace, registry, finding.metric))
    return [action for action in found if action is not None]


def _fix(document: TextDocument, shown: str, finding: Finding) -> types.CodeAction | None:
    if finding.fix is None or finding.fix.reason:
        return None
    planned = rewrite.rewrite_data(shown, document.source.encode("utf-8"), [finding])
    if not planned.fixed:
        return None
    new = planned.rewritten.decode(planned.encoding)
    edit = _difference(document, document.source, new)
    title = f'Reword "{finding.fix.phrase}" to "{finding.fix.replacement}" ({finding.rule})'
    return _action(title, document.uri, edit, preferred=True)


def _suppress(document: TextDocument, shown: str, finding: Finding) -> types.CodeAction | None:
    insertion = suppression(shown, document.source, finding)
    if insertion is None:
        return None
    return _action(f"Silence {finding.rule} here (metriclint: ignore)", document.uri, _inserted(document, insertion))


def _register(workspace: Workspace, registry: Registry, key: str) -> types.CodeAction | None:
    uri = uri_of(registry.path)
    found = document(workspace, uri)
    if found is None:
        return None
    return _action(f"Add '{key}' to {registry.path}", uri, _inserted(found, registry_entry(found.source, registry, key)))


def _action(title: str, uri: str, edit: types.TextEdit, preferred: bool = False) -> types.CodeAction:
    return types.CodeAction(
        title, kind=types.CodeActionKind.QuickFix, edit=types.WorkspaceEdit(changes={uri: [edit]}), is_preferred=preferred or None
    )


def _inserted(document: TextDocument, insertion: Insertion) -> types.TextEdit:
    at = document.position_codec.position_to_client_units(document.lines, ServerTextPosition(insertion.line - 1, insertion.column - 1))
    return types.TextEdit(types.Range(at, at), insertion.text)


def _difference(document: TextDocument, old: str, new: str) -> types.TextEdit:
    """One edit from `old` to `new`: the span between their common start and common end, so
    the editor keeps the cursor and the undo step small."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    first, last = document.client_position_at_offset(start), document.client_position_at_offset(len(old) - end)
    return types.TextEdit(types.Range(first, last), new[start : len(new) - end])
