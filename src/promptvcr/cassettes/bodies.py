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
from typing import Any

from .eventstream import decode_frames, encode_frame, is_event_stream
from .sse import decode_events, encode_event

__all__ = ["BODY_KEYS", "decode_body", "encode_body", "json_bytes"]

BODY_KEYS = ("json", "events", "frames", "text", "base64")
_BINARY_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _looks_like_json(content: bytes, content_type: str) -> bool:
    if "json" in content_type:
        return True
    return content.lstrip()[:1] in (b"{", b"[")


def _as_json(content: bytes) -> tuple[bool, Any]:
    try:
        value = json.loads(content)
        json_bytes(value)  # lone surrogates parse but cannot be written as UTF-8 text
    except (ValueError, UnicodeError, RecursionError):
        return False, None
    return True, value


def _as_text(content: bytes) -> str | None:
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if _BINARY_CONTROL.search(text) else text


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
        return [base64.b64decode(stored["base64"], validate=True)] if stored["base64"] else []
    return []
