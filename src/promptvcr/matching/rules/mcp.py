"""MCP over HTTP: the session ids a server invents, which the client sends back.

Streamable HTTP carries the session in the ``Mcp-Session-Id`` header, never part of a key
(headers are not). The older SSE transport puts it in the URL each message is posted to,
``/messages/?session_id=<id>``, from the ``endpoint`` event of the GET stream: a replayed
stream gives the recorded id back, but a session recorded again, or appended to a cassette
(``record`` mode), gets a new one. The message is what the request means, not the session.

JSON-RPC request ids (``0``, ``1``, ... per session in the ``mcp`` SDK) stay in the key: a
replayed answer carries the id of the request it was recorded for, and the client matches
answers to its requests by that id.
"""

from __future__ import annotations

from dataclasses import replace

from ..parts import KeyParts

__all__ = ["mcp_session_ids"]

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
