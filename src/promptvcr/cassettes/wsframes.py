"""A websocket session as a cassette holds it: the frames in both directions, in order, timed.

A websocket interaction is its handshake (the request, keyed like any other, and the ``101``
response) plus :class:`WebSocketSession`, the messages each side sent. Each is stored as one
mapping, its sender in ``from`` and its arrival in ``at`` (seconds after the handshake):

``json``     a text message holding JSON, parsed (``style`` when it was not written compactly,
             see :mod:`.jsonstyle`); with ``binary: true`` a binary message holding JSON text;
             ``digests`` names the sha256 of each base64 payload (audio) in it, for review
``text``     any other text message
``base64``   any other binary message (audio), with its ``digest`` (``sha256:...``) for review;
             with ``opcode: text`` a text message that is not UTF-8 (a protocol violation the
             live client failed the connection for: replayed as it came, it fails it again)
``close``    the closing handshake: ``{code, reason}`` (``code: null``: a close frame
             without a status, which the other side reads as 1005)
``eof``      ``true``: the sender closed the TCP connection without a close frame (the other
             side reads 1006); a session cut this way replays cut there
``raw``      a frame the receiving client refused as illegal (a reserved opcode, an RSV bit no
             extension negotiated), base64 of its bytes as they were on the wire, as far as the
             client read them, with ``refused`` (why): replayed as it came, the client fails the
             connection for it again, as it did live

A recorded session replays the same bytes: :meth:`Frame.data` is what was on the wire.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .jsonstyle import dump_json, json_style, valid_style
from .timing import Timing

if TYPE_CHECKING:
    from .models import Response

__all__ = [
    "STORED_AS",
    "Frame",
    "WebSocketSession",
    "frame_json",
    "session_from_data",
    "session_to_data",
    "with_session",
]

Sender = Literal["client", "server"]
Kind = Literal["text", "binary", "close", "eof", "raw"]
SENDERS: tuple[Sender, ...] = ("client", "server")
#: A JSON string this long that is base64 is a binary payload (audio): its digest is stored too.
_AUDIO = 512
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


@dataclass(frozen=True, slots=True)
class Frame:
    """One message: ``data`` is its payload (a close frame's: the reason; a ``raw`` frame's: its
    bytes on the wire), ``code`` a close code, ``note`` why a ``raw`` frame was refused."""

    sender: Sender
    kind: Kind
    data: bytes
    at: float = 0.0
    code: int | None = None
    note: str = ""


@dataclass(slots=True)
class WebSocketSession:
    """The frames of one websocket connection after its handshake, in the order they were seen.

    ``transport="stdio"``: the lines an MCP client and the server process it started wrote
    to each other (stored under ``stdio``, see :mod:`promptvcr.interceptors.stdiosession`):
    the same frames, a ``close`` being the end of a side's stream (its ``code``, for the
    server, the process's exit status)."""

    frames: list[Frame] = field(default_factory=list)
    transport: Literal["websocket", "stdio"] = "websocket"

    @property
    def offsets(self) -> tuple[float, ...]:
        return tuple(frame.at for frame in self.frames)


def frame_json(frame: Frame) -> Any:
    """The parsed JSON document a text or binary frame holds, else ``None``."""
    if frame.kind in ("close", "eof") or frame.data.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(frame.data)
    except ValueError:
        return None


def _frame_to_data(frame: Frame, redact_json: Callable[[Any], Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"from": frame.sender, "at": round(frame.at, 3)}
    if frame.kind == "close":
        data["close"] = {"code": frame.code, "reason": frame.data.decode("utf-8", "replace")}
        return data
    if frame.kind == "eof":
        data["eof"] = True
        return data
    if frame.kind == "raw":
        data["raw"] = base64.b64encode(frame.data).decode("ascii")
        data["refused"] = frame.note
        return data
    document = frame_json(frame)
    text = frame.data.decode("utf-8", "replace") if document is not None else ""
    style = json_style(text, document) if document is not None else None
    if document is not None and style is not None:
        data["json"] = redact_json(document)
        if style:
            data["style"] = style
        if digests := dict(_audio_digests(document, "")):
            data["digests"] = digests
        if frame.kind == "binary":
            data["binary"] = True
    elif frame.kind == "text" and (decoded := _utf8(frame.data)) is not None:
        data["text"] = decoded
    else:
        data["base64"] = base64.b64encode(frame.data).decode("ascii")
        data["digest"] = "sha256:" + hashlib.sha256(frame.data).hexdigest()
        if frame.kind == "text":
            data["opcode"] = "text"
    return data


def _utf8(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _audio_digests(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """``(path, sha256 of the decoded bytes)`` of each long base64 string (audio) in a document:
    a reviewer sees which payload changed without reading it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _audio_digests(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _audio_digests(item, f"{path}[{index}]")
    elif isinstance(value, str) and len(value) >= _AUDIO and _BASE64.fullmatch(value):
        try:
            payload = base64.b64decode(value, validate=True)
        except ValueError:
            return
        yield path, "sha256:" + hashlib.sha256(payload).hexdigest()


def session_to_data(session: WebSocketSession, redact_json: Callable[[Any], Any]) -> dict[str, Any]:
    """The stored form: ``{frames: [...]}`` (under :data:`STORED_AS` of its transport), each JSON
    message passed through ``redact_json``.

    The file writer hands in the credential rules (what reaches disk is its decision, see
    :mod:`promptvcr.files.fileformat`): a value module knows how a frame is written, not what
    a credential is."""
    return {"frames": [_frame_to_data(frame, redact_json) for frame in session.frames]}


#: The response key a session is stored under, by its transport.
STORED_AS = {"websocket": "websocket", "stdio": "stdio"}


def _frame_from_data(data: Any, index: int, transport: str) -> Frame:
    where = f"{transport}.frames[{index}]"
    if not isinstance(data, dict) or data.get("from") not in SENDERS:
        raise ValueError(f"{where} needs from: client or server")
    sender: Sender = data["from"]
    at = data.get("at", 0)
    if isinstance(at, bool) or not isinstance(at, (int, float)) or at < 0:
        raise ValueError(f"{where}.at is {at!r}, expected seconds (0 or more)")
    if "close" in data:
        close = data["close"] if isinstance(data["close"], dict) else {}
        code = close.get("code")
        if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
            raise ValueError(f"{where}.close.code is {code!r}, expected a close code")
        return Frame(sender, "close", str(close.get("reason", "")).encode(), float(at), code)
    if "json" in data:
        text = dump_json(data["json"], valid_style(data.get("style", {})))
        return Frame(sender, "binary" if data.get("binary") else "text", text.encode(), float(at))
    if isinstance(data.get("text"), str):
        return Frame(sender, "text", data["text"].encode(), float(at))
    if isinstance(data.get("base64"), str):
        kind: Kind = "text" if data.get("opcode") == "text" else "binary"
        return Frame(sender, kind, base64.b64decode(data["base64"], validate=True), float(at))
    if data.get("eof") is True:
        return Frame(sender, "eof", b"", float(at))
    if isinstance(data.get("raw"), str):
        refused = data.get("refused", "")
        raw = base64.b64decode(data["raw"], validate=True)
        return Frame(sender, "raw", raw, float(at), note=str(refused))
    raise ValueError(f"{where} holds none of json, text, base64, close, eof, raw")


def session_from_data(data: Any, transport: Literal["websocket", "stdio"] = "websocket") -> WebSocketSession:
    """A stored session, checked; ``ValueError`` says what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("frames"), list):
        raise ValueError(f"{transport} is not a mapping with a list of frames")
    frames = [_frame_from_data(frame, i, transport) for i, frame in enumerate(data["frames"])]
    return WebSocketSession(frames, transport)


def with_session(response: Response, session: WebSocketSession) -> Response:
    """``response`` (a handshake's) carrying ``session``: its chunks are the frames' payloads
    and its timing their times, so that pacing and faults (``cut_stream(after_events=k)``:
    the socket closes after frame k) count frames as they count a stream's events."""
    chunks = [frame.data for frame in session.frames]
    return dataclasses.replace(
        response, websocket=session, chunks=chunks, timing=Timing(0.0, session.offsets)
    )
