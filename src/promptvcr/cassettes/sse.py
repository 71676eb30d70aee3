"""Server-sent events as a list of readable events, and back to the bytes a client parses.

A stream is stored one event per item so that a reviewer reads a streamed answer the way
the model produced it, and so that replay can hand the client one event per chunk. JSON
objects and arrays in ``data`` are stored parsed; anything else stays text. Re-encoding
follows the SSE specification's meaning, not the original bytes: data lines are joined
with newlines, line endings become ``\\n``, and JSON is written compactly.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["Event", "decode_events", "encode_event", "event_ends", "parse_events"]

Event = dict[str, Any]

COMMENT = "comment"
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


def encode_event(event: Event) -> bytes:
    """One event as the bytes a server sends, ending with the blank line that completes it.

    ``TypeError`` when ``event`` is not a mapping (a hand-edited cassette), which the
    loader reports as an invalid body.
    """
    if not isinstance(event, dict):
        raise TypeError(f"an event is a {type(event).__name__}, expected a mapping")
    lines: list[str] = []
    for name, value in event.items():
        if name == COMMENT:
            lines.extend(f": {line}" if line else ":" for line in str(value).split("\n"))
        elif name == "data":
            if isinstance(value, (dict, list)):
                text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            else:
                text = "" if value is None else str(value)
            lines.extend(f"data: {line}" for line in text.split("\n"))
        else:
            lines.append(f"{name}: {value}")
    return ("\n".join(lines) + "\n\n").encode("utf-8")


_LINE_END = re.compile(rb"\r\n|\r|\n")


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
    """Events from a recorded body; raises ``UnicodeDecodeError`` when it is not UTF-8 text."""
    return parse_events(content.decode("utf-8"))
