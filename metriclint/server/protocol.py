"""JSON-RPC error responses for the messages pygls cannot read.

pygls logs a request it cannot read (not JSON, not a JSON-RPC object, params that do not fit
the method), and shows the user an error, but sends no response: the client waits for one
forever. Here each is answered with the error JSON-RPC 2.0 prescribes: a parse error or an
invalid request with a null id when no id could be read, else the reading error at the
request's id (invalid params, for params that do not fit).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol, lsp_method

log = logging.getLogger("metriclint.server")


class UnreadableRequest(Exception):
    """A request whose id could be read, but not the rest."""

    def __init__(self, request_id: int | str, error: JsonRpcException) -> None:
        super().__init__(str(error))
        self.request_id = request_id
        self.error = error


class Protocol(LanguageServerProtocol):
    """pygls's protocol, which keeps the id of a request it cannot read, and answers a message
    that is no JSON-RPC object."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            request_id = data.get("id")
            if not isinstance(request_id, (int, str)) or isinstance(request_id, bool) or "result" in data or "error" in data:
                raise  # no id to answer, or a response to a request of this server's
            raise UnreadableRequest(request_id, error if "method" in data else JsonRpcInvalidRequest()) from error

    def handle_message(self, message: Any) -> None:
        if isinstance(message, (dict, list, str, int, float, bool)) or message is None:  # JSON, but no JSON-RPC message
            log.warning("not a JSON-RPC message: %.200r", message)
            self.answer(None, JsonRpcInvalidRequest())
            return
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """A change to a document the client never opened (or closed) is ignored: there is no
        text to apply it to (pygls raised, and showed the user an error for the client's slip)."""
        if unquote(params.text_document.uri) not in self.workspace.text_documents:
            log.warning("a change to %.200s, which is not open, was ignored", params.text_document.uri)
            return
        yield from super().lsp_text_document__did_change(params)

    def answer(self, request_id: int | str | None, error: JsonRpcException) -> None:
        """Send the error response; as a plain object, since pygls's message types leave out an
        id that is null, and JSON-RPC requires it."""
        self._send_data({"jsonrpc": "2.0", "id": request_id, "error": {"code": error.code, "message": error.message}})

    def unreadable(self, error: Exception) -> bool:
        """Answer the message whose reading raised `error`, if it is one this module answers."""
        if isinstance(error, UnreadableRequest):
            log.warning("request %r not read: %s", error.request_id, error.error)
            self.answer(error.request_id, error.error)
        elif isinstance(error, (json.JSONDecodeError, UnicodeDecodeError)):
            log.warning("a message that is not JSON: %s", error)
            self.answer(None, JsonRpcParseError())
        else:
            return False
        return True


class Answered(logging.Filter):
    """Keeps pygls's tracebacks for the messages answered here out of the log: each has a
    warning of its own, and bad input from a client is no failure of the server. So is a
    request a handler declined on purpose (a JSON-RPC error of its own, such as "still
    analysing"): the client has the error, and nothing failed."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Unable to deserialize message"):
            return False  # pygls says it again, with the whole chain, if the message goes unanswered
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcException) and error.code != JsonRpcInternalError.CODE:
            return False
        return not isinstance(error, (UnreadableRequest, json.JSONDecodeError, UnicodeDecodeError))


def quieten_pygls() -> None:
    for name in ("pygls.protocol.json_rpc", "pygls.server"):  # where pygls reports a message it could not read
        logging.getLogger(name).addFilter(Answered())
