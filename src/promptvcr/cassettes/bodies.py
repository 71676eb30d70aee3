"""Bodies as a reviewer wants to read them, and back to the bytes a client receives.

A body is stored under exactly one of these keys, chosen when it is written:

``json``    JSON, parsed, so a diff shows the field that changed instead of an escaped string
``events``  a ``text/event-stream`` response, one item per event (see :mod:`.sse`)
``frames``  an AWS event-stream body, one decoded frame per item (see :mod:`.eventstream`)
``text``    UTF-8 text that is not JSON (long text becomes a YAML block scalar)
``base64``  anything else: images, audio, binary frames

An empty body stores nothing. Responses are re-encoded compactly on replay: their meaning,
not their whitespace, is what the recording keeps.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from .eventstream import decode_frames, encode_frame, is_event_stream
from .largebody import BINARY_CONTROL, LARGE_BODY_BYTES, ChunkedBody, chunked_body
from .sse import decode_events, encode_event

__all__ = ["BODY_KEYS", "decode_body", "encode_body", "encode_chunks", "json_bytes", "stored_chunk_count"]

BODY_KEYS = ("json", "events", "frames", "text", "base64")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _looks_like_json(content: bytes, content_type: str) -> bool:
    if "json" in content_type:
        return True
    return content.lstrip()[:1] in (b"{", b"[")


def _as_json(content: bytes) -> tuple[bool, Any]:
    try:
        value = json.loads(content)
        if _SURROGATE_ESCAPE.search(content):  # half of a pair parses, but cannot be written as UTF-8
            json_bytes(value)
    except (ValueError, UnicodeError, RecursionError):
        return False, None
    return True, value


def _as_text(content: bytes) -> str | None:
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if BINARY_CONTROL.search(text) else text


def encode_body(content: bytes, content_type: str, *, streamed_events: bool = False) -> dict[str, Any]:
    """The stored form of a body: a one-key mapping, or an empty one for no body."""
    if not content:
        return {}
    if streamed_events:
        try:
            return {"events": decode_events(content)}
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(content).decode("ascii")}
    if is_event_stream(content_type) and (frames := decode_frames(content)) is not None:
        return {"frames": frames}
    if _looks_like_json(content, content_type):
        ok, value = _as_json(content)
        if ok:
            return {"json": value}
    text = _as_text(content)
    if text is not None:
        return {"text": text}
    return {"base64": base64.b64encode(content).decode("ascii")}


def encode_chunks(
    chunks: Sequence[bytes], content_type: str, *, streamed_events: bool = False
) -> dict[str, Any]:
    """:func:`encode_body` for a body still in its received chunks: a large body that is
    not JSON or events is stored from the chunks themselves (see :mod:`.largebody`)."""
    size = sum(len(chunk) for chunk in chunks)
    if size > LARGE_BODY_BYTES and not streamed_events and not is_event_stream(content_type):
        head = b"".join(chunks[:4])[:256]
        if not _looks_like_json(head, content_type):
            return chunked_body(chunks)
    return encode_body(b"".join(chunks), content_type, streamed_events=streamed_events)


def stored_chunk_count(stored: dict[str, Any]) -> int:
    """How many chunks :func:`decode_body` replays for ``stored``, without building them."""
    for key in ("events", "frames"):
        if key in stored:
            return len(stored[key] or ())
    if "json" in stored:
        return 1
    return 1 if stored.get("text") or stored.get("base64") else 0


def decode_body(stored: dict[str, Any]) -> list[bytes]:
    """The chunks to replay for a stored body: one per event for streams, else one (or none)."""
    if "events" in stored:
        return [encode_event(event) for event in stored["events"] or ()]
    if "frames" in stored:
        return [encode_frame(frame) for frame in stored["frames"] or ()]
    if "json" in stored:
        return [json_bytes(stored["json"])]
    if "text" in stored:
        return [str(stored["text"]).encode("utf-8")] if stored["text"] else []
    if "base64" in stored:
        value = stored["base64"]
        if isinstance(value, ChunkedBody):
            value = str(value)
        return [base64.b64decode(value, validate=True)] if value else []
    return []
