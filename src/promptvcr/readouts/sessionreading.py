"""A recorded session read into the messages a person follows: the one reading both views share.

A realtime websocket session (OpenAI realtime, Gemini Live) or an MCP session (stdio,
websockets) is stored as frames; ``promptvcr show`` (:mod:`.sessionview`) lists them and the
HTML report (:mod:`promptvcr.htmlreport.sessionturns`) tells them as a conversation. Both read
a session the same way, here, and only render differently:

- each frame's direction, its JSON document (``None``: not JSON) and its event type;
- a run of text deltas of one type, from one side, joined into one message (hundreds of
  frames become one line), the frames it joins kept for views that read each;
- JSON-RPC (MCP) documents never joined, and recognised here as such;
- audio and binary payloads named by their type and size, base64 ones inside JSON too;
- the usage a ``response.done`` (or Gemini's ``usageMetadata``) reports;
- MCP over HTTP: the JSON documents of a request or of an answer (a body, or an SSE stream).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from ..cassettes.bodyfiles import described
from ..cassettes.models import Response
from ..cassettes.sse import parse_events
from ..cassettes.wsframes import Frame, WebSocketSession, frame_json

__all__ = [
    "Message",
    "answer_documents",
    "event_type",
    "is_base64",
    "is_jsonrpc",
    "parsed_json",
    "payload",
    "read_session",
    "summarised",
    "usage",
]

_BASE64 = re.compile(r"[A-Za-z0-9+/]{64,}={0,2}")
#: Magic bytes of the audio and image payloads realtime sessions carry.
_MAGIC = ((b"RIFF", "wav"), (b"OggS", "ogg"), (b"ID3", "mp3"), (b"fLaC", "flac"), (b"\x89PNG", "png"))


@dataclass(frozen=True)
class Message:
    """One frame of a session, or a run of text deltas of one type from one side, joined."""

    frame: Frame
    """The (first) frame: its sender, its kind (``close``/``eof`` end a side), its raw data."""
    document: Any
    """The frame's JSON document; ``None`` for a frame that is not JSON and for an end."""
    documents: tuple[Any, ...]
    """Each joined frame's document, in order (one for a message that is not a delta run)."""
    delta: str | None = None
    """The joined text of a delta run; ``None`` for every other message."""

    @property
    def direction(self) -> str:
        """``→`` the client sent it, ``←`` the server."""
        return "→" if self.frame.sender == "client" else "←"

    @property
    def is_end(self) -> bool:
        return self.frame.kind in ("close", "eof")

    @property
    def event_type(self) -> str:
        return event_type(self.document)


def payload(data: bytes) -> str:
    """Binary data by its type (its magic bytes) and size: ``wav 48,044 bytes``."""
    kind = next((name for magic, name in _MAGIC if data.startswith(magic)), "binary")
    return f"{kind} {len(data):,} bytes"


def is_base64(text: str) -> bool:
    """Whether ``text`` is a base64 payload (audio, an image) rather than words."""
    return len(text) >= 64 and _BASE64.fullmatch(text) is not None


def summarised(value: Any) -> Any:
    """``value`` with each base64 payload (audio, images) replaced by its size and type."""
    if isinstance(value, dict):
        return {key: summarised(item) for key, item in value.items()}
    if isinstance(value, list):
        return [summarised(item) for item in value]
    if isinstance(value, str) and is_base64(value):
        try:
            return f"<{payload(base64.b64decode(value, validate=True))}>"
        except (binascii.Error, ValueError):
            return value
    return value


def is_jsonrpc(document: Any) -> bool:
    """A JSON-RPC message, or a batch holding one."""
    if isinstance(document, list):
        return any(is_jsonrpc(item) for item in document)
    return isinstance(document, dict) and "jsonrpc" in document


def event_type(document: Any) -> str:
    """A realtime event's type: its ``type``, else (Gemini) its one key; ``array`` for a list."""
    if isinstance(document, dict):
        return str(document["type"]) if isinstance(document.get("type"), str) else next(iter(document), "{}")
    return "array"


def _delta_text(document: Any) -> str | None:
    """The text a delta event carries: OpenAI ``*.delta`` events, Gemini model turn parts."""
    if not isinstance(document, dict) or is_jsonrpc(document):
        return None
    kind = document.get("type")
    if isinstance(kind, str) and kind.endswith(".delta") and isinstance(document.get("delta"), str):
        delta = document["delta"]
        return None if is_base64(delta) else delta
    turn = (
        (document.get("serverContent") or {}).get("modelTurn")
        if isinstance(document.get("serverContent"), dict)
        else None
    )
    if isinstance(turn, dict) and isinstance(turn.get("parts"), list):
        texts = [p["text"] for p in turn["parts"] if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def usage(document: Any) -> list[tuple[str, int]]:
    """The tokens a ``response.done`` (or ``usageMetadata``) reports, by short name."""
    response = document.get("response") if isinstance(document, dict) else None
    found = (response or {}).get("usage") if isinstance(response, dict) else None
    found = found or (document.get("usageMetadata") if isinstance(document, dict) else None)
    if not isinstance(found, dict):
        return []
    return [
        (k.removesuffix("_tokens").removesuffix("TokenCount"), v)
        for k, v in found.items()
        if isinstance(v, int)
    ]


def read_session(session: WebSocketSession) -> list[Message]:
    """``session``'s frames as messages, in order, each run of same-type deltas joined."""
    messages: list[Message] = []
    for frame in session.frames:
        document = None if frame.kind in ("close", "eof") else frame_json(frame)
        delta = _delta_text(document)
        last = messages[-1] if messages else None
        if (
            delta is not None
            and last is not None
            and last.delta is not None
            and last.frame.sender == frame.sender
            and last.event_type == event_type(document)
        ):
            messages[-1] = Message(last.frame, last.document, (*last.documents, document), last.delta + delta)
            continue
        messages.append(Message(frame, document, (document,), delta))
    return messages


def parsed_json(content: bytes) -> Any:
    """A body's JSON document; ``None`` when it is empty or not JSON."""
    try:
        return json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def answer_documents(response: Response) -> list[Any]:
    """The JSON documents of an answer: each SSE event's data, or the body's one document
    (none for a body file beside the cassette: never JSON, never read here)."""
    if described(response.chunks) is not None:
        return []
    if response.is_event_stream:
        return [event.get("data") for event in parse_events(response.content.decode("utf-8", "replace"))]
    return [parsed_json(response.content)]
