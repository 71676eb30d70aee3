"""Bodies as a reviewer wants to read them, and back to the bytes a client receives.

A body is stored under exactly one of these keys, chosen when it is written:

``json``    JSON, parsed, so a diff shows the field that changed instead of an escaped string
``events``  a ``text/event-stream`` response, one item per event (see :mod:`.sse`)
``frames``  an AWS event-stream body, one decoded frame per item (see :mod:`.eventstream`)
``text``    UTF-8 text that is not JSON (long text becomes a YAML block scalar)
``base64``  anything else: images, audio, binary frames
``file``    a large body that is not JSON, kept beside the cassette (see :mod:`.bodyfiles`):
            written from a :class:`~.largebody.ChunkedBody`, read by the cassette's reader

An empty body stores nothing. Replay gives the exact bytes received: a ``json`` body that
was not compact has its ``style`` beside it (see :mod:`.jsonstyle`), and one that no common
style reproduces (duplicate keys, irregular spacing) its ``raw`` text, which is used only
while it still parses to the stored document: a value a reviewer edited replays edited. A
body that is not labelled JSON and that no style reproduces is stored as ``text``. Events
carry the same two keys, one event at a time (see :mod:`.sse`). Cassettes without them
replay compact JSON, as before.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .bodyfiles import reference_of, slice_count
from .eventstream import decode_frames, encode_frame, is_event_stream
from .jsonstyle import dump_json, json_style, same_json, valid_style
from .largebody import BINARY_CONTROL, LARGE_BODY_BYTES, ChunkedBody, ChunkedText, chunked_body
from .largejson import skeleton
from .spool import body_size
from .sse import RAW, decode_events, encode_event

__all__ = [
    "BODY_KEYS",
    "STRINGS",
    "decode_body",
    "drop_stale_raw",
    "encode_body",
    "encode_chunks",
    "encode_request_body",
    "json_bytes",
    "stored_chunk_count",
]

BODY_KEYS = ("json", "events", "frames", "text", "base64", "file")
#: Beside the ``json`` of a large request, until the cassette writer takes them out: its long
#: strings by stand-in (:func:`encode_request_body`). Never written as such.
STRINGS = "strings"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _looks_like_json(content: bytes, content_type: str) -> bool:
    if "json" in content_type:
        return True
    return content.lstrip()[:1] in (b"{", b"[")


def _json_form(
    content: bytes, value: Any, content_type: str, text: str | None = None
) -> dict[str, Any] | None:
    """``json`` with the ``style`` or ``raw`` text that replays ``content`` exactly; ``None``
    for a body not labelled JSON that no style reproduces (it is then kept as text).
    ``text`` is ``content`` decoded, when the caller has it already."""
    if text is None:
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:  # UTF-16 or -32 JSON: json.loads reads it, replay writes UTF-8
            return {"json": value}
    style = json_style(text, value)
    if style is None:
        return {"json": value, "raw": text} if "json" in content_type else None
    return {"json": value, "style": style} if style else {"json": value}


#: The scanner ``json.loads`` ends in (C where CPython has it), called directly (see
#: :func:`_parsed`): a decoder with the default options, as ``json.loads`` uses.
_scan_once: Callable[[str, int], tuple[Any, int]] = json.decoder.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _parsed(text: str) -> Any:
    """``json.loads(text)``: a document that starts and ends with a bracket and that the
    scanner reads to its last character is read by the scanner alone, without the two
    whitespace matches and the calls ``json.loads`` wraps it in (a third of its time on a
    chat answer, twice per recorded request); anything else, errors included, by ``json.loads``."""
    if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
        try:
            value, end = _scan_once(text, 0)
        except (StopIteration, ValueError):
            end = -1
        if end == len(text):
            return value
    return json.loads(text)


def _as_json(content: bytes, text: str | None = None) -> tuple[bool, Any]:
    """The parsed ``content`` (``text``: the same, decoded by :func:`_utf8_document`)."""
    try:
        value = json.loads(content) if text is None else _parsed(text)
        # Half of a surrogate pair parses, but cannot be written as UTF-8.
        if b"\\u" in content and _SURROGATE_ESCAPE.search(content):
            json_bytes(value)
    except (ValueError, UnicodeError, RecursionError):
        return False, None
    return True, value


def _utf8_document(content: bytes) -> str | None:
    """``content`` decoded when it is UTF-8 text that starts a JSON object or array: what
    ``json.loads`` of the bytes would decode it to (it guesses UTF-8 from such a start), so
    the text can be parsed and compared with its style without decoding it twice."""
    if content[:1] not in (b"{", b"[") or content[1:2] == b"\x00":
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


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
    if (text := _utf8_document(content)) is not None:  # the common case: a JSON document in UTF-8
        ok, value = _as_json(content, text)
        if ok and (stored := _json_form(content, value, content_type, text)) is not None:
            return stored
    elif _looks_like_json(content, content_type):
        ok, value = _as_json(content)
        if ok and (stored := _json_form(content, value, content_type)) is not None:
            return stored
    text = _as_text(content)
    if text is not None:
        return {"text": text}
    return {"base64": base64.b64encode(content).decode("ascii")}


def encode_chunks(
    chunks: Sequence[bytes], content_type: str, *, streamed_events: bool = False
) -> dict[str, Any]:
    """:func:`encode_body` for a body still in its received chunks: a large body that is
    not JSON (events included) is stored from the chunks themselves (see :mod:`.largebody`)."""
    if body_size(chunks) > LARGE_BODY_BYTES:
        head = b"".join(chunks[:4])[:256]
        if not _looks_like_json(head, content_type):
            return chunked_body(chunks)
    content = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    return encode_body(content, content_type, streamed_events=streamed_events)


def encode_request_body(
    content: bytes, strings: Mapping[str, Sequence[bytes]] | None, content_type: str
) -> dict[str, Any]:
    """:func:`encode_body` for a request's body. A JSON document over :data:`LARGE_BODY_BYTES`
    is stored with a stand-in for each long string (see :mod:`.largejson`), and the strings
    under :data:`STRINGS`, each a :class:`~.largebody.ChunkedText` that the credential searches
    read a slice at a time and the cassette writer puts in a body file. ``strings``: the
    request holds the document with stand-ins already (``promptvcr serve``), and these."""
    stored: dict[str, Any] | None = None
    if strings is None and len(content) > LARGE_BODY_BYTES and _looks_like_json(content[:256], content_type):
        made = skeleton([content])
        if made is not None and made[1] and "json" in (document := encode_body(made[0], content_type)):
            stored, strings = document, made[1]  # the document outside the strings is JSON too
    if stored is None:
        stored = encode_chunks([content], content_type)  # a large body that is not JSON: a body file
    if strings and "json" in stored:
        stored[STRINGS] = {name: ChunkedText(chunks) for name, chunks in strings.items()}
    return stored


def stored_chunk_count(stored: dict[str, Any]) -> int:
    """How many chunks :func:`decode_body` replays for ``stored``, without building them: a
    large body (to be written as a body file) or a body file, one per slice of it."""
    if "file" in stored:
        return slice_count(reference_of(stored["file"]).size)
    for value in stored.values():
        if isinstance(value, ChunkedBody):
            return slice_count(body_size(value.chunks))
    for key in ("events", "frames"):
        if key in stored:
            return len(stored[key] or ())
    if "json" in stored:
        return 1
    return 1 if stored.get("text") or stored.get("base64") else 0


def decode_body(stored: dict[str, Any]) -> list[bytes]:
    """The chunks to replay for a stored body: one per event for streams, else one (or none).
    A body ``file`` is read by the cassette's reader, which knows where the cassette is."""
    if "file" in stored:
        raise ValueError("a body file is read with the cassette that refers to it")
    if "events" in stored:
        return [encode_event(event) for event in stored["events"] or ()]
    if "frames" in stored:
        return [encode_frame(frame) for frame in stored["frames"] or ()]
    if "json" in stored:
        return [_json_body(stored)]
    if "text" in stored:
        return [str(stored["text"]).encode("utf-8")] if stored["text"] else []
    if "base64" in stored:
        value = stored["base64"]
        if isinstance(value, ChunkedBody):
            value = str(value)
        return [base64.b64decode(value, validate=True)] if value else []
    return []


def _json_body(stored: dict[str, Any]) -> bytes:
    """A ``json`` body's bytes: its ``raw`` text while it still parses to the stored document,
    else the document in its ``style`` (``ValueError`` for a malformed one)."""
    value = stored["json"]
    raw = stored.get("raw")
    if raw is not None:
        if not isinstance(raw, str):
            raise ValueError(f"raw is a {type(raw).__name__}, expected the body's text")
        ok, parsed = _as_json(raw.encode("utf-8"))
        if ok and same_json(parsed, value):
            return raw.encode("utf-8")
    return dump_json(value, valid_style(stored.get("style"))).encode("utf-8")


def drop_stale_raw(stored: dict[str, Any], key: str, original: Any) -> None:
    """Forget the ``raw`` text of a body (or of each event) whose parsed value ``stored[key]``
    no longer is ``original``, the value it was recorded with: redaction removed a credential
    from it, which the raw text still holds."""
    if key == "json" and "raw" in stored and not same_json(stored[key], original):
        del stored["raw"]
    elif key == "events":
        for before, after in zip(original or (), stored[key] or (), strict=False):
            if isinstance(after, dict) and RAW in after:
                fields = {k: v for k, v in after.items() if k != RAW}
                if not same_json(fields, {k: v for k, v in before.items() if k != RAW}):
                    del after[RAW]
