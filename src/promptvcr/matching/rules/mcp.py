"""MCP over HTTP: the session ids a server invents, which the client sends back.

Streamable HTTP carries the session in the ``Mcp-Session-Id`` header, never part of a key
(headers are not). The older SSE transport puts it in the URL each message is posted to,
``/messages/?session_id=<id>``, from the ``endpoint`` event of the GET stream: a replayed
stream gives the recorded id back, but a session recorded again, or appended to a cassette
(``record`` mode), gets a new one. The message is what the request means, not the session.

JSON-RPC request ids (``0``, ``1``, ... per session in the ``mcp`` SDK) are not part of the
key either (:func:`jsonrpc_ids`): they number the calls, so one call inserted before the
others would shift every later id and make every later call miss. A replayed answer is
given the live request's id (see :mod:`promptvcr.matching.jsonrpc`; over the SSE transport,
on the GET stream: :mod:`promptvcr.cassettes.sessions`); requests with the same method and
params replay in recorded order, as any identical requests do.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..parts import KeyParts

__all__ = ["JSONRPC_ID", "jsonrpc_ids", "mcp_session_ids", "without_jsonrpc_id"]

#: What a JSON-RPC request's ``id`` (and the progress token it names) becomes in a key.
JSONRPC_ID = "<jsonrpc-id>"

_SESSION_PARAMS = frozenset({"session_id", "sessionid"})


def mcp_session_ids(parts: KeyParts) -> KeyParts:
    """Drops the ``session_id`` query parameter of a JSON-RPC message.

    Real case: the ``mcp`` SDK's SSE transport posts ``tools/call`` to
    ``/messages/?session_id=7dcaf4d4b0c24452a014615dc5e01148``, a new id per connection.
    """
    if not parts.query or not any(name.lower() in _SESSION_PARAMS for name, _ in parts.query):
        return parts
    body = parts.body
    if not (isinstance(body, dict) and "jsonrpc" in body) and not isinstance(body, list):
        return parts
    return replace(parts, query=tuple(pair for pair in parts.query if pair[0].lower() not in _SESSION_PARAMS))


def without_jsonrpc_id(message: Any) -> Any:
    """A JSON-RPC request or notification (a batch: each) with its ``id`` and progress token
    as :data:`JSONRPC_ID`; anything else as it is (the same object)."""
    if isinstance(message, list):
        items = [without_jsonrpc_id(item) for item in message]
        return items if any(a is not b for a, b in zip(items, message, strict=True)) else message
    if not isinstance(message, dict) or "method" not in message or "jsonrpc" not in message:
        return message
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = isinstance(meta, dict) and "progressToken" in meta
    if "id" not in message and not token:
        return message
    out = {**message, "id": JSONRPC_ID} if "id" in message else dict(message)
    if token:
        out["params"] = {**params, "_meta": {**meta, "progressToken": JSONRPC_ID}}  # type: ignore[dict-item]
    return out


def jsonrpc_ids(parts: KeyParts) -> KeyParts:
    """A JSON-RPC request's ``id`` and ``params._meta.progressToken`` replaced by
    ``<jsonrpc-id>`` (each message of a batch); a notification (no id) stays one.

    Real case: an MCP client that lists its tools once more before calling one sends
    ``tools/call`` as id 3 instead of 2, and every later call shifts by one.

    The older SSE transport too (a ``session_id`` in the URL): each POST there gets only
    ``202`` and its answer arrives on the GET stream, which the replay releases once the
    request it was recorded for has been answered, with the live id
    (:mod:`promptvcr.cassettes.sessions`).
    """
    body = parts.body  # a top-level key says it: no search through the bytes
    first = body[0] if isinstance(body, list) and body else body
    if not isinstance(first, dict) or "jsonrpc" not in first:
        return parts
    new = without_jsonrpc_id(body)
    return parts if new is body else replace(parts, body=new)
