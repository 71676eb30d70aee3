"""Conversations that are not one chat request: realtime websocket sessions and MCP calls.

A realtime session (OpenAI realtime, Gemini Live) is hundreds of frames: audio chunks,
text deltas, bookkeeping events. A person wants the transcript: what the client said
(items it created, audio transcribed), what the model said (deltas joined), the tools it
called, and the other events only named. An MCP exchange is JSON-RPC: a ``tools/call``
reads as a tool call with its arguments, its result as the tool's answer. The session is
read by :mod:`promptvcr.readouts.sessionreading` (as ``promptvcr show`` reads it); this
module tells what it read as a conversation.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..cassettes.bodyfiles import described
from ..cassettes.models import Request, Response
from ..cassettes.wsframes import WebSocketSession, frame_json
from ..readouts.sessionreading import answer_documents, parsed_json, read_session
from ..readouts.transcript import Turn

__all__ = ["jsonrpc_answer", "jsonrpc_request", "session_model", "session_turns"]


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _content_text(content: Any) -> str:
    """The text of a realtime item's content parts (``input_text``, ``text``, ``transcript``)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    texts = (p.get("text") or p.get("transcript") for p in parts if isinstance(p, dict))
    return " ".join(text for text in texts if isinstance(text, str))


def _client_turns(event: dict[str, Any]) -> list[Turn]:
    """What the client said in one event; ``[]`` for bookkeeping (session.update, audio)."""
    item = event.get("item")
    if event.get("type") == "conversation.item.create" and isinstance(item, dict):
        if item.get("type") == "function_call_output":
            return [Turn("tool result", f"[{item.get('call_id', '')}] {_json(item.get('output'))}")]
        return [Turn(str(item.get("role", "user")), _content_text(item.get("content")))]
    content = event.get("clientContent") or event.get("client_content")
    if isinstance(content, dict):  # Gemini Live
        turns = content.get("turns") or []
        return [
            Turn("user" if t.get("role", "user") == "user" else "assistant", _content_text(t.get("parts")))
            for t in turns
            if isinstance(t, dict)
        ]
    realtime = event.get("realtimeInput")
    if isinstance(realtime, dict) and isinstance(realtime.get("text"), str):
        return [Turn("user", realtime["text"])]
    return []


def _server_turns(event: dict[str, Any]) -> list[Turn]:
    """What the model said in one event: a text or transcript delta, a tool call, an error."""
    kind = str(event.get("type", ""))
    if kind.endswith(".delta") and ("text" in kind or "transcript" in kind):
        role = "user" if "input_audio_transcription" in kind else "assistant"
        return [Turn(role, str(event.get("delta", "")))]
    if kind == "conversation.item.input_audio_transcription.completed":
        return [Turn("user", f"(spoken) {event.get('transcript', '')}")]
    if kind == "response.function_call_arguments.done":
        return [
            Turn("tool call", f"{event.get('name')}({event.get('arguments', '')}) [{event.get('call_id')}]")
        ]
    if kind == "error":
        return [Turn("error", _json(event.get("error", event)))]
    content = event.get("serverContent")
    if isinstance(content, dict) and isinstance(content.get("modelTurn"), dict):  # Gemini Live
        return [Turn("assistant", _content_text(content["modelTurn"].get("parts")))]
    calls = event.get("toolCall")
    if isinstance(calls, dict):
        found = calls.get("functionCalls") or []
        return [
            Turn("tool call", f"{c.get('name')}({_json(c.get('args'))})")
            for c in found
            if isinstance(c, dict)
        ]
    return []


def _added(turns: list[Turn], turn: Turn) -> None:
    """Append ``turn``, joining it to the last one when both are the same speaker's deltas or events."""
    if turns and turns[-1].role == turn.role and turn.role in ("assistant", "user", "events"):
        glue = ", " if turn.role == "events" else ""
        turns[-1] = Turn(turn.role, turns[-1].text + glue + turn.text)
    elif turn.text or turn.role != "assistant":
        turns.append(turn)


def _text_delta(kind: str) -> bool:
    return kind.endswith(".delta") and ("text" in kind or "transcript" in kind)


def session_turns(session: WebSocketSession) -> list[Turn]:
    """A websocket session as a transcript: turns in the order they happened, events named."""
    turns: list[Turn] = []
    for message in read_session(session):
        frame = message.frame
        if frame.kind == "close":
            _added(turns, Turn("events", f"{frame.sender} closed ({frame.code})"))
            continue
        if not isinstance(message.document, dict):
            _added(turns, Turn("events", f"{frame.sender} {frame.kind} frame ({len(frame.data):,} bytes)"))
            continue
        if message.delta is not None and frame.sender == "server" and _text_delta(message.event_type):
            role = "user" if "input_audio_transcription" in message.event_type else "assistant"
            _added(turns, Turn(role, message.delta))  # the run's deltas, joined
            continue
        for event in message.documents:
            said = _client_turns(event) if frame.sender == "client" else _server_turns(event)
            for turn in said:
                _added(turns, turn)
            if not said:
                name = event.get("type") or next(iter(event), "event")
                _added(turns, Turn("events", f"{frame.sender}: {name}"))
    return turns


def session_model(request: Request, response: Response) -> str:
    """A websocket session's model: the handshake's ``model`` parameter (OpenAI realtime), else
    the one the first client frame sets up (Gemini Live); ``""`` when neither names one."""
    model = parse_qs(urlsplit(request.url).query).get("model")
    if model:
        return model[0]
    session = response.websocket
    client = [f for f in session.frames if f.sender == "client"][:1] if session is not None else []
    setup = frame_json(client[0]) if client else None
    setup = setup.get("setup") if isinstance(setup, dict) else None
    named = setup.get("model") if isinstance(setup, dict) else None
    return named.rpartition("/")[2] if isinstance(named, str) else ""


def _messages(content: bytes) -> list[dict[str, Any]]:
    value = parsed_json(content)
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and item.get("jsonrpc")]


def jsonrpc_request(request: Request) -> list[Turn] | None:
    """An MCP (JSON-RPC) request as turns; ``None`` when the body is not JSON-RPC."""
    if b'"jsonrpc"' not in request.content:
        return None
    messages = _messages(request.content)
    if not messages:
        return None
    turns = []
    for message in messages:
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and isinstance(params, dict):
            turns.append(Turn("tool call", f"MCP {params.get('name')}({_json(params.get('arguments', {}))})"))
        else:
            shown = f" {_json(params)}" if params else ""
            turns.append(Turn("mcp", f"{message.get('method', 'answer')}{shown}"))
    return turns


def _result_turn(message: dict[str, Any]) -> Turn:
    if "error" in message:
        return Turn("error", _json(message["error"]))
    result = message.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, list):  # tools/call: the tool's answer as parts
        text = " ".join(_json(p.get("text", p)) for p in content if isinstance(p, dict))
        return Turn("tool result", text)
    return Turn("mcp", _json(result))


def jsonrpc_answer(response: Response) -> list[Turn] | None:
    """An MCP answer (JSON, or JSON-RPC messages as SSE events); ``None`` when it holds none."""
    if described(response.chunks) is not None or b'"jsonrpc"' not in response.content:
        return None
    messages: list[dict[str, Any]]
    if response.is_event_stream:
        messages = [data for data in answer_documents(response) if isinstance(data, dict)]
    else:
        messages = _messages(response.content)
    turns = [_result_turn(m) for m in messages if m.get("jsonrpc") and ("result" in m or "error" in m)]
    notes = [Turn("mcp", str(m.get("method"))) for m in messages if "method" in m]
    return [*turns, *notes] or None
