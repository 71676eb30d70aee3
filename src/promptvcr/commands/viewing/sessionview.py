"""A session as a person reads it: websocket messages (realtime APIs) and MCP JSON-RPC.

A realtime session is hundreds of messages, most of them text deltas and base64 audio; an
MCP session is JSON-RPC envelopes around a few calls. ``promptvcr show`` prints them as
turns, in order, with their direction (``→`` the client sent it, ``←`` the server):

- each message by its event type (``type``, or a Gemini message's one key), runs of the
  same delta joined into one line of text, audio and binary summarised by size and type;
- the usage a ``response.done`` (or ``usageMetadata``) reports;
- JSON-RPC (MCP over stdio, websockets or HTTP) as calls and results: ``tools/call
  add {"a": 2, "b": 3}``, ``tools/call result: 5``, never the envelope;
- how the session ended: a close (code, reason), a dropped connection, a process's exit.

The reading (directions, event types, joined deltas, payloads, usage) is
:mod:`.sessionreading`'s, shared with the HTML report; this module only words it.
"""

from __future__ import annotations

import json
from typing import Any

from ...cassettes.bodyfiles import described
from ...cassettes.models import Request, Response
from ...cassettes.wsframes import WebSocketSession
from ...readouts.sessionreading import (
    Message,
    answer_documents,
    event_type,
    parsed_json,
    payload,
    read_session,
    summarised,
    usage,
)
from ...readouts.transcript import Turn

__all__ = ["exchange_turns", "jsonrpc_turn", "session_turns"]

_SHOWN = 200


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text):,} characters)"


def _json(value: Any) -> str:
    return _short(json.dumps(summarised(value), ensure_ascii=False, separators=(", ", ": ")))


# JSON-RPC (MCP) --------------------------------------------------------------------------------


def _call(message: dict[str, Any]) -> str:
    method, params = str(message["method"]), message.get("params")
    params = {k: v for k, v in params.items() if k != "_meta"} if isinstance(params, dict) else params
    if method == "tools/call" and isinstance(params, dict):
        return f"{method} {params.get('name')} {_json(params.get('arguments') or {})}"
    if method == "notifications/progress" and isinstance(params, dict):
        total = f"/{params['total']}" if params.get("total") is not None else ""
        return f"{method} {params.get('progress')}{total} {params.get('message') or ''}".rstrip()
    if method == "initialize" and isinstance(params, dict):
        return (
            f"{method} (client {_named(params.get('clientInfo'))}, protocol {params.get('protocolVersion')})"
        )
    if isinstance(params, dict) and isinstance(params.get("uri"), str):
        return f"{method} {params['uri']}"
    return f"{method} {_json(params)}" if params else method


def _named(info: Any) -> str:
    """``name version`` of an MCP ``clientInfo``/``serverInfo``."""
    info = info if isinstance(info, dict) else {}
    return " ".join(str(info[key]) for key in ("name", "version") if info.get(key)) or "?"


def _content(items: Any) -> str:
    """MCP content (a tool's result, a resource's contents, a prompt's messages) as text."""
    parts = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("content"), dict):  # a prompt message
            item = item["content"]
        parts.append(item["text"] if isinstance(item.get("text"), str) else _json(item))  # images: by size
    return " | ".join(parts)


def _result(method: str | None, result: Any) -> str:
    head = f"{method} result" if method else "result"
    if not isinstance(result, dict):
        return f"{head}: {_json(result)}"
    if method == "initialize":
        return f"{head}: server {_named(result.get('serverInfo'))}, protocol {result.get('protocolVersion')}"
    for key, show in (("tools", "name"), ("prompts", "name"), ("resources", "uri")):
        if isinstance(result.get(key), list):
            return f"{head}: {', '.join(str(i.get(show)) for i in result[key] if isinstance(i, dict))}"
    for key in ("content", "contents", "messages"):
        if isinstance(result.get(key), list):
            error = " (error)" if result.get("isError") else ""
            return f"{head}{error}: {_content(result[key])}"
    return f"{head}: {_json(result)}" if result else head


def jsonrpc_turn(direction: str, message: Any, methods: dict[str, str]) -> Turn | None:
    """One JSON-RPC message as a call or a result; ``methods`` (id -> method of each request
    seen so far) names what an answer answers. ``None``: not JSON-RPC."""
    if isinstance(message, list):
        turns = [jsonrpc_turn(direction, item, methods) for item in message]
        return Turn(direction, " ; ".join(t.text for t in turns if t)) if any(turns) else None
    if not isinstance(message, dict) or "jsonrpc" not in message:
        return None
    if isinstance(message.get("method"), str):
        if "id" in message:
            methods[json.dumps(message["id"])] = message["method"]
        return Turn(direction, _call(message))
    method = methods.get(json.dumps(message.get("id")))
    if isinstance(error := message.get("error"), dict):
        return Turn(direction, f"{method or ''} error {error.get('code')}: {error.get('message')}".strip())
    return Turn(direction, _result(method, message.get("result")))


# Realtime events -------------------------------------------------------------------------------


def _usage(document: Any) -> str:
    spent = [f"{name} {count}" for name, count in usage(document)]
    return f"; usage {', '.join(spent)}" if spent else ""


def _event_turn(direction: str, document: Any) -> Turn:
    kind = event_type(document)
    if not isinstance(document, dict):
        return Turn(direction, f"{kind}: {_json(document)}")
    body = {k: v for k, v in document.items() if k not in ("type", "event_id")}
    if kind == "response.done" and isinstance(body.get("response"), dict):
        return Turn(direction, f"{kind}: status {body['response'].get('status')}{_usage(document)}")
    return Turn(direction, f"{kind}: {_json(body)}{_usage(document) if kind != 'response.done' else ''}")


def _end(message: Message, stdio: bool) -> Turn:
    direction, frame = message.direction, message.frame
    if frame.kind == "eof":
        return Turn(direction, "connection dropped (no close frame)")
    if stdio:
        return Turn(direction, "closed stdin" if frame.sender == "client" else f"exited, status {frame.code}")
    reason = frame.data.decode("utf-8", "replace")
    return Turn(
        direction, f"close {frame.code if frame.code is not None else '(no status)'} {reason}".rstrip()
    )


def _message_turn(message: Message, methods: dict[str, str], stdio: bool) -> Turn:
    direction, frame, document = message.direction, message.frame, message.document
    if message.is_end:
        return _end(message, stdio)
    if document is None:
        text = frame.data.decode("utf-8", "replace") if frame.kind == "text" else None
        return Turn(direction, _short(text) if text is not None else payload(frame.data))
    if (turn := jsonrpc_turn(direction, document, methods)) is not None:
        return turn
    if message.delta is not None:
        count = len(message.documents)
        return Turn(direction, f"{message.event_type}{f' x{count}' if count > 1 else ''}: {message.delta}")
    return _event_turn(direction, document)


def session_turns(session: WebSocketSession) -> list[Turn]:
    """Every message of ``session``, in order, as turns (see the module's documentation)."""
    methods: dict[str, str] = {}
    stdio = session.transport == "stdio"
    return [_message_turn(message, methods, stdio) for message in read_session(session)]


def exchange_turns(request: Request, response: Response) -> list[Turn] | None:
    """MCP over HTTP: a POSTed message and its answer (a JSON body, or the events of a stream),
    or a GET stream's messages, as calls and results; ``None`` when neither is JSON-RPC."""
    if described(response.chunks) is not None:  # a body file: never an MCP message, never read
        return None
    if b'"jsonrpc"' not in request.content and b'"jsonrpc"' not in response.content:
        return None
    methods: dict[str, str] = {}
    sent = jsonrpc_turn("→", parsed_json(request.content), methods)
    answers = [
        turn
        for message in answer_documents(response)
        if (turn := jsonrpc_turn("←", message, methods)) is not None
    ]
    if sent is None and not answers:
        return None
    return [*([sent] if sent is not None else []), *answers]
