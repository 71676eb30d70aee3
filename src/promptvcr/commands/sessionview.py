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
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from ..cassettes.models import Request, Response
from ..cassettes.sse import parse_events
from ..cassettes.wsframes import Frame, WebSocketSession, frame_json
from .transcript import Turn

__all__ = ["exchange_turns", "jsonrpc_turn", "session_turns"]

_SHOWN = 200
_BASE64 = re.compile(r"[A-Za-z0-9+/]{64,}={0,2}")
#: Magic bytes of the audio and image payloads realtime sessions carry.
_MAGIC = ((b"RIFF", "wav"), (b"OggS", "ogg"), (b"ID3", "mp3"), (b"fLaC", "flac"), (b"\x89PNG", "png"))


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text):,} characters)"


def _payload(data: bytes) -> str:
    kind = next((name for magic, name in _MAGIC if data.startswith(magic)), "binary")
    return f"{kind} {len(data):,} bytes"


def _summarised(value: Any) -> Any:
    """``value`` with each base64 payload (audio, images) replaced by its size and type."""
    if isinstance(value, dict):
        return {key: _summarised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_summarised(item) for item in value]
    if isinstance(value, str) and len(value) >= 64 and _BASE64.fullmatch(value):
        try:
            return f"<{_payload(base64.b64decode(value, validate=True))}>"
        except (binascii.Error, ValueError):
            return value
    return value


def _json(value: Any) -> str:
    return _short(json.dumps(_summarised(value), ensure_ascii=False, separators=(", ", ": ")))


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


def _event_type(document: Any) -> str:
    if isinstance(document, dict):
        return str(document["type"]) if isinstance(document.get("type"), str) else next(iter(document), "{}")
    return "array"


def _delta_text(document: Any) -> str | None:
    """The text a delta event carries: OpenAI ``*.delta`` events, Gemini model turn parts."""
    if not isinstance(document, dict):
        return None
    kind = document.get("type")
    if isinstance(kind, str) and kind.endswith(".delta") and isinstance(document.get("delta"), str):
        delta = document["delta"]
        return None if _BASE64.fullmatch(delta) and len(delta) >= 64 else delta
    turn = (
        (document.get("serverContent") or {}).get("modelTurn")
        if isinstance(document.get("serverContent"), dict)
        else None
    )
    if isinstance(turn, dict) and isinstance(turn.get("parts"), list):
        texts = [p["text"] for p in turn["parts"] if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def _usage(document: Any) -> str:
    response = document.get("response") if isinstance(document, dict) else None
    usage = (response or {}).get("usage") if isinstance(response, dict) else None
    usage = usage or (document.get("usageMetadata") if isinstance(document, dict) else None)
    if not isinstance(usage, dict):
        return ""
    spent = [
        f"{k.removesuffix('_tokens').removesuffix('TokenCount')} {v}"
        for k, v in usage.items()
        if isinstance(v, int)
    ]
    return f"; usage {', '.join(spent)}" if spent else ""


def _event_turn(direction: str, document: Any) -> Turn:
    kind = _event_type(document)
    if not isinstance(document, dict):
        return Turn(direction, f"{kind}: {_json(document)}")
    body = {k: v for k, v in document.items() if k not in ("type", "event_id")}
    if kind == "response.done" and isinstance(body.get("response"), dict):
        return Turn(direction, f"{kind}: status {body['response'].get('status')}{_usage(document)}")
    return Turn(direction, f"{kind}: {_json(body)}{_usage(document) if kind != 'response.done' else ''}")


def _end(direction: str, frame: Frame, stdio: bool) -> Turn:
    if frame.kind == "eof":
        return Turn(direction, "connection dropped (no close frame)")
    if stdio:
        return Turn(direction, "closed stdin" if frame.sender == "client" else f"exited, status {frame.code}")
    reason = frame.data.decode("utf-8", "replace")
    return Turn(
        direction, f"close {frame.code if frame.code is not None else '(no status)'} {reason}".rstrip()
    )


def session_turns(session: WebSocketSession) -> list[Turn]:
    """Every message of ``session``, in order, as turns (see the module's documentation)."""
    turns: list[Turn] = []
    methods: dict[str, str] = {}
    joined: tuple[str, str] | None = None  # (direction, type) of the delta run the last turn holds
    count = 0
    for frame in session.frames:
        direction = "→" if frame.sender == "client" else "←"
        if frame.kind in ("close", "eof"):
            turns.append(_end(direction, frame, session.transport == "stdio"))
            joined = None
            continue
        document = frame_json(frame)
        if document is None:
            text = frame.data.decode("utf-8", "replace") if frame.kind == "text" else None
            turns.append(Turn(direction, _short(text) if text is not None else _payload(frame.data)))
            joined = None
            continue
        if (turn := jsonrpc_turn(direction, document, methods)) is not None:
            turns.append(turn)
            joined = None
            continue
        kind, delta = _event_type(document), _delta_text(document)
        if delta is not None and joined == (direction, kind):
            count += 1
            turns[-1] = Turn(direction, f"{kind} x{count}: {turns[-1].text.split(': ', 1)[1]}{delta}")
            continue
        if delta is not None:
            joined, count = (direction, kind), 1
            turns.append(Turn(direction, f"{kind}: {delta}"))
            continue
        joined = None
        turns.append(_event_turn(direction, document))
    return turns


def _parsed(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def exchange_turns(request: Request, response: Response) -> list[Turn] | None:
    """MCP over HTTP: a POSTed message and its answer (a JSON body, or the events of a stream),
    or a GET stream's messages, as calls and results; ``None`` when neither is JSON-RPC."""
    if b'"jsonrpc"' not in request.content and b'"jsonrpc"' not in response.content:
        return None
    methods: dict[str, str] = {}
    sent = jsonrpc_turn("→", _parsed(request.content), methods)
    if response.is_event_stream:
        messages = [event.get("data") for event in parse_events(response.content.decode("utf-8", "replace"))]
    else:
        messages = [_parsed(response.content)]
    answers = [turn for message in messages if (turn := jsonrpc_turn("←", message, methods)) is not None]
    if sent is None and not answers:
        return None
    return [*([sent] if sent is not None else []), *answers]
