"""Server-sent events as a list of readable events, and back to the bytes a client parses.

A stream is stored one event per item so that a reviewer reads a streamed answer the way
the model produced it, and so that replay can hand the client one event per chunk. JSON
objects and arrays in ``data`` are stored parsed; anything else stays text.

Replay gives the exact bytes received, one event per chunk (bytes between events go with
the event after them). An event written the usual way (``name: value`` lines ending in
``\\n``, a blank line after it, compact JSON) stores nothing more; otherwise it holds a
``style`` mapping with what differs: ``eol`` (``"\\r\\n"`` or ``"\\r"``), ``field_space:
false`` (``data:x``), ``comment_space: false`` (``:408: ...``), ``end`` (what follows the
last line instead of a blank line: ``""`` for an event the server never terminated, which a
client drops) and the JSON style of its data (see :mod:`.jsonstyle`). An event no style
reproduces holds its ``raw`` text, used only while it still parses to the stored event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from .jsonstyle import JsonStyle, dump_json, json_style, same_json, valid_style

__all__ = ["Event", "decode_events", "encode_event", "event_ends", "parse_event_pieces", "parse_events"]

Event = dict[str, Any]

COMMENT = "comment"
#: Keys of a stored event that are not SSE fields: how to write it back exactly.
STYLE, RAW = "style", "raw"
_LAYOUT_KEYS = frozenset({"eol", "field_space", "comment_space", "end"})
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _parse_data(text: str) -> Any:
    """JSON containers are parsed for readability; scalars stay text so they round-trip exactly."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(text)
            if _SURROGATE_ESCAPE.search(text):  # half of a pair parses, but no cassette can hold it
                json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (ValueError, UnicodeError):
            return text
        return value
    return text


def _parse_block(block: str) -> Event | None:
    event: Event = {}
    data_lines: list[str] = []
    comments: list[str] = []
    for line in block.split("\n"):
        if not line:
            continue
        if line.startswith(":"):
            comments.append(line[1:].removeprefix(" "))
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            if "data" not in event:
                event["data"] = None  # keep the field's position among the others
            data_lines.append(value)
        else:
            event[name] = value
    if comments:
        event = {COMMENT: "\n".join(comments), **event}
    if data_lines:
        event["data"] = _parse_data("\n".join(data_lines))
    return event or None


def parse_events(text: str) -> list[Event]:
    """Split an SSE body into events, each a mapping of field name to value, in field order."""
    events = []
    # The specification allows CRLF, LF and CR line ends; Gemini sends CRLF, OpenAI LF.
    for block in text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n"):
        event = _parse_block(block)
        if event is not None:
            events.append(event)
    return events


def parse_event_pieces(pieces: Iterable[str], wanted: str) -> Iterator[Event]:
    """The events of an SSE body that comes as text in pieces (a large one, read a slice at a
    time: see :mod:`.spool`) whose text holds ``wanted``, as :func:`parse_events` finds them in
    the whole text; only the event being read is held."""
    pending = rest = ""
    for piece in pieces:
        piece = pending + piece
        pending = "\r" if piece.endswith("\r") else ""  # maybe the first half of a "\r\n"
        text = rest + piece[: len(piece) - len(pending)].replace("\r\n", "\n").replace("\r", "\n")
        *blocks, rest = text.split("\n\n")
        yield from _wanted(blocks, wanted)
    yield from _wanted((rest + pending.replace("\r", "\n")).split("\n\n"), wanted)


def _wanted(blocks: Iterable[str], wanted: str) -> Iterator[Event]:
    for block in blocks:
        if wanted in block and (event := _parse_block(block)) is not None:
            yield event


def encode_event(event: Event) -> bytes:
    """One event as the bytes a server sends (with the blank line that completes it, unless
    its ``style`` says otherwise); its ``raw`` text while that still parses to the event.

    ``TypeError`` when ``event`` is not a mapping (a hand-edited cassette), ``ValueError``
    for a malformed style, both reported by the loader as an invalid body.
    """
    if not isinstance(event, dict):
        raise TypeError(f"an event is a {type(event).__name__}, expected a mapping")
    if STYLE not in event and RAW not in event:
        return _write(event, {}).encode("utf-8")
    fields = {k: v for k, v in event.items() if k not in (STYLE, RAW)}
    raw = event.get(RAW)
    if raw is not None:
        if not isinstance(raw, str):
            raise TypeError(f"an event's raw is a {type(raw).__name__}, expected its text")
        if _same_events(parse_events(raw), [fields]):
            return raw.encode("utf-8")
    return _write(fields, _valid_event_style(event.get(STYLE))).encode("utf-8")


def _same_events(a: list[Event], b: list[Event]) -> bool:
    return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))


def _valid_event_style(style: Any) -> JsonStyle:
    if style is None:
        return {}
    if not isinstance(style, dict):
        raise ValueError(f"an event's style is a {type(style).__name__}, expected a mapping")
    layout = {k: v for k, v in style.items() if k in _LAYOUT_KEYS}
    if layout.get("eol", "\n") not in ("\n", "\r\n", "\r"):
        raise ValueError(f"an event's style eol {layout['eol']!r} is not a line end")
    if not isinstance(layout.get("end", ""), str) or layout.get("end", "").strip("\r\n"):
        raise ValueError(f"an event's style end {layout['end']!r} is not line ends")
    if any(not isinstance(layout.get(k, True), bool) for k in ("field_space", "comment_space")):
        raise ValueError("an event's style field_space and comment_space are true or false")
    valid_style({k: v for k, v in style.items() if k not in _LAYOUT_KEYS})
    return style


def _write(event: Event, style: JsonStyle) -> str:
    eol = style.get("eol", "\n")
    colon = ": " if style.get("field_space", True) else ":"
    comment = ": " if style.get("comment_space", True) else ":"
    lines: list[str] = []
    for name, value in event.items():
        if name == COMMENT:
            lines.extend(f"{comment}{line}" if line else ":" for line in str(value).split("\n"))
        elif name == "data":
            if isinstance(value, (dict, list)):
                text = dump_json(value, {k: v for k, v in style.items() if k not in _LAYOUT_KEYS})
            else:
                text = "" if value is None else str(value)
            lines.extend(f"data{colon}{line}" for line in text.split("\n"))
        else:
            lines.append(f"{name}{colon}{value}")
    return str(eol).join(lines) + str(style.get("end", eol + eol))


def _data_text(block: str, eol: str, colon: str) -> str:
    """The data of one event as written, its lines joined as :func:`_parse_block` joins them."""
    lines = []
    for line in block.split(eol):
        if line.startswith("data" + colon) or line == "data":
            lines.append(line[4 + len(colon) :])
    return "\n".join(lines)


def _event_style(event: Event, text: str) -> JsonStyle | None:
    """The style that writes ``event`` as exactly ``text``, or ``None``."""
    match = _TEXT_LINE_END.search(text)
    eol = match.group() if match else "\n"
    for field_space in (True, False):
        for comment_space in (True, False):
            style: JsonStyle = {}
            if eol != "\n":
                style["eol"] = eol
            if not field_space:
                style["field_space"] = False
            if not comment_space:
                style["comment_space"] = False
            data = event.get("data")
            if isinstance(data, (dict, list)):
                found = json_style(_data_text(text, eol, ": " if field_space else ":"), data)
                if found is None:
                    continue
                style.update(found)
            body = _write(event, {**style, "end": ""})
            end = text[len(body) :]
            if text.startswith(body) and not end.strip("\r\n") and (end or not text.endswith(("\n", "\r"))):
                if end != eol + eol:
                    style["end"] = end
                if _write(event, style) == text:
                    return style
    return None


_LINE_END = re.compile(rb"\r\n|\r|\n")
_TEXT_LINE_END = re.compile(r"\r\n|\r|\n")


def event_ends(content: bytes) -> list[int]:
    """Where in ``content`` each event of :func:`decode_events` is complete, as byte offsets.

    Recording timing needs it: an event is due on replay when its last byte had arrived.
    Blocks are split exactly as :func:`parse_events` splits them (two line ends in a row,
    paired left to right), and blocks that hold no event are skipped as it skips them.
    """
    ends: list[int] = []
    start, last_end, paired = 0, -1, True
    for line_end in _LINE_END.finditer(content):
        if not paired and line_end.start() == last_end:
            block = content[start : line_end.start()]
            if parse_events(block.decode("utf-8")):
                ends.append(line_end.end())
            start, paired = line_end.end(), True
        else:
            paired = False
        last_end = line_end.end()
    if parse_events(content[start:].decode("utf-8")):
        ends.append(len(content))
    return ends


def decode_events(content: bytes) -> list[Event]:
    """Events from a recorded body, each with the ``style`` or ``raw`` text that replays its
    bytes exactly; raises ``UnicodeDecodeError`` when it is not UTF-8 text."""
    events = parse_events(content.decode("utf-8"))
    ends = event_ends(content)
    if len(ends) != len(events):  # pragma: no cover - both split the same way
        return events
    start = 0
    for index, event in enumerate(events):
        end = len(content) if index == len(events) - 1 else ends[index]
        text = content[start:end].decode("utf-8")
        start = end
        if STYLE in event or RAW in event:
            continue  # a stream with fields of these names replays as it always did
        style = _event_style(event, text)
        if style is None:
            event[RAW] = text
        elif style:
            event[STYLE] = style
    return events
