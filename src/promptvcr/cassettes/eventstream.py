"""AWS event-stream frames (``application/vnd.amazon.eventstream``) as readable data, and back.

Bedrock's ``converse-stream`` and ``invoke-with-response-stream`` answer with binary frames,
each carrying its own CRC32 checksums. Stored as base64 they would be unreviewable, so each
frame is stored decoded: its headers as a mapping and its payload as parsed JSON. Replay
re-encodes the frames with fresh checksums, and the result is the recorded bytes exactly:
a payload is only stored as ``json`` when writing it back compactly gives the same bytes,
else as ``text`` or ``base64``; header value types other than strings and booleans are
stored with their type. A body that is not a clean sequence of frames is not decoded here
at all (the caller stores it as ``base64``), so nothing is ever lost or altered.

Frame layout (big-endian)::

    total length u32 | headers length u32 | CRC32 of those 8 bytes
    headers: name length u8, name, value type u8, value  (repeated)
    payload
    CRC32 of everything before it
"""

from __future__ import annotations

import base64
import json
import struct
import uuid
import zlib
from typing import Any

__all__ = ["CONTENT_TYPE", "Frame", "chunk_event", "decode_frames", "encode_frame", "is_event_stream"]

CONTENT_TYPE = "application/vnd.amazon.eventstream"

Frame = dict[str, Any]

_PRELUDE = struct.Struct(">II")
_CRC = struct.Struct(">I")
_MIN_FRAME = _PRELUDE.size + 2 * _CRC.size

# Value types with a fixed-size integer encoding: stored as ``{name: value}``.
_INTEGERS = {
    2: ("int8", ">b"),
    3: ("int16", ">h"),
    4: ("int32", ">i"),
    5: ("int64", ">q"),
    8: ("timestamp", ">q"),
}
_INTEGER_TYPES = {name: (code, fmt) for code, (name, fmt) in _INTEGERS.items()}
_BYTES, _STRING, _UUID = 6, 7, 9


class _NotFrames(ValueError):
    """The bytes are not a clean sequence of event-stream frames."""


def is_event_stream(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == CONTENT_TYPE


# Decoding -----------------------------------------------------------------------------------


def _header_value(data: bytes, at: int, kind: int) -> tuple[Any, int]:
    if kind in (0, 1):
        return kind == 0, at
    if kind in _INTEGERS:
        name, fmt = _INTEGERS[kind]
        size = struct.calcsize(fmt)
        (number,) = struct.unpack_from(fmt, data, at)
        return {name: number}, at + size
    if kind == _UUID:
        return {"uuid": str(uuid.UUID(bytes=bytes(data[at : at + 16])))}, at + 16
    if kind in (_BYTES, _STRING):
        (length,) = struct.unpack_from(">H", data, at)
        raw = bytes(data[at + 2 : at + 2 + length])
        if len(raw) != length:
            raise _NotFrames("header value runs past the headers")
        if kind == _STRING:
            return raw.decode("utf-8"), at + 2 + length
        return {"bytes": base64.b64encode(raw).decode("ascii")}, at + 2 + length
    raise _NotFrames(f"unknown header value type {kind}")


def _headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(data):
            length = data[at]
            name = bytes(data[at + 1 : at + 1 + length]).decode("utf-8")
            at += 1 + length
            value, at = _header_value(data, at + 1, data[at])
            if name in headers:
                raise _NotFrames(f"header {name!r} appears twice")
            headers[name] = value
    except (IndexError, struct.error, UnicodeDecodeError) as error:
        raise _NotFrames(f"malformed headers: {error}") from None
    return headers


def _payload(payload: bytes) -> dict[str, Any]:
    """The most readable stored form of a payload that writes back to the same bytes."""
    if not payload:
        return {}
    try:
        value = json.loads(payload)
        if _json_bytes(value) == payload:
            return {"json": value}
    except (ValueError, UnicodeError, RecursionError):
        pass
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(payload).decode("ascii")}
    if any(ord(c) < 32 and c not in "\t\n" for c in text) or "\r" in text:
        return {"base64": base64.b64encode(payload).decode("ascii")}
    return {"text": text}


def decode_frames(content: bytes) -> list[Frame] | None:
    """The frames of an event-stream body, or ``None`` when it is not exactly a sequence of
    well-formed frames (checksums included), so that the caller keeps the raw bytes."""
    frames: list[Frame] = []
    at = 0
    try:
        while at < len(content):
            if len(content) - at < _MIN_FRAME:
                raise _NotFrames("trailing bytes shorter than a frame")
            total, headers_length = _PRELUDE.unpack_from(content, at)
            (prelude_crc,) = _CRC.unpack_from(content, at + _PRELUDE.size)
            if zlib.crc32(content[at : at + _PRELUDE.size]) != prelude_crc:
                raise _NotFrames("prelude checksum mismatch")
            if total < _MIN_FRAME + headers_length or at + total > len(content):
                raise _NotFrames("frame length out of range")
            (message_crc,) = _CRC.unpack_from(content, at + total - _CRC.size)
            if zlib.crc32(content[at : at + total - _CRC.size]) != message_crc:
                raise _NotFrames("message checksum mismatch")
            start = at + _PRELUDE.size + _CRC.size
            frame: Frame = {"headers": _headers(content[start : start + headers_length])}
            frame.update(_payload(content[start + headers_length : at + total - _CRC.size]))
            frames.append(frame)
            at += total
    except _NotFrames:
        return None
    return frames


# Encoding -----------------------------------------------------------------------------------


def chunk_event(frame: Frame) -> Any:
    """The provider's own stream event that an invoke-with-response-stream ``chunk`` frame
    carries as base64 JSON; ``None`` for another frame, or a chunk that does not decode."""
    payload = frame.get("json")
    if not (isinstance(payload, dict) and isinstance(payload.get("bytes"), str)):
        return None
    try:
        return json.loads(base64.b64decode(payload["bytes"], validate=True))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _encode_value(value: Any) -> bytes:
    if isinstance(value, bool):
        return bytes([0 if value else 1])
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return struct.pack(">BH", _STRING, len(raw)) + raw
    if isinstance(value, dict) and len(value) == 1:
        ((name, item),) = value.items()
        if name in _INTEGER_TYPES:
            code, fmt = _INTEGER_TYPES[name]
            try:
                return bytes([code]) + struct.pack(fmt, int(item))
            except struct.error as error:
                raise ValueError(f"header value {value!r}: {error}") from None
        if name == "bytes":
            raw = base64.b64decode(item, validate=True)
            return struct.pack(">BH", _BYTES, len(raw)) + raw
        if name == "uuid":
            return bytes([_UUID]) + uuid.UUID(str(item)).bytes
    raise ValueError(
        f"header value {value!r} is not a string, a boolean or one of "
        f"{{int8|int16|int32|int64|timestamp|bytes|uuid: value}}"
    )


def _encode_payload(frame: Frame) -> bytes:
    if "json" in frame:
        return _json_bytes(frame["json"])
    if "text" in frame:
        return str(frame["text"]).encode("utf-8")
    if "base64" in frame:
        return base64.b64decode(frame["base64"], validate=True)
    return b""


def encode_frame(frame: Frame) -> bytes:
    """One frame as the bytes a server sends, with its length fields and checksums."""
    if not isinstance(frame, dict):
        raise TypeError(f"a frame is a mapping with 'headers' and a payload, not {type(frame).__name__}")
    headers = frame.get("headers") or {}
    if not isinstance(headers, dict):
        raise TypeError(f"frame headers are a mapping, not {type(headers).__name__}")
    encoded_headers = b""
    for name, value in headers.items():
        raw_name = str(name).encode("utf-8")
        encoded_headers += bytes([len(raw_name)]) + raw_name + _encode_value(value)
    payload = _encode_payload(frame)
    total = _MIN_FRAME + len(encoded_headers) + len(payload)
    prelude = _PRELUDE.pack(total, len(encoded_headers))
    message = prelude + _CRC.pack(zlib.crc32(prelude)) + encoded_headers + payload
    return message + _CRC.pack(zlib.crc32(message))
