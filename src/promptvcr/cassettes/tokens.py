"""Tokens in a recorded answer, read from the provider's own ``usage`` fields.

The summary reports what a replaying suite did not spend. Each provider reports usage in
its own shape, and streams report it cumulatively in several events, so the largest value
seen for each count is the answer's total:

* OpenAI chat: ``usage.prompt_tokens`` / ``completion_tokens`` (streams: the last chunk,
  when ``stream_options.include_usage`` asked for it);
* OpenAI responses: ``usage.input_tokens`` / ``output_tokens`` (streams: ``response.usage``);
* Anthropic: ``usage.input_tokens`` (+ cache reads and writes) / ``output_tokens``
  (streams: ``message_start.message.usage`` then ``message_delta.usage``);
* Gemini: ``usageMetadata.promptTokenCount`` / ``candidatesTokenCount`` (+ ``thoughtsTokenCount``);
* Bedrock Converse: ``usage.inputTokens`` / ``outputTokens`` (``converse-stream``: the
  ``metadata`` frame); ``invoke-with-response-stream``: the provider's own events, as base64
  JSON in each ``chunk`` frame (Anthropic's, read as above);
* Cohere v2: ``usage.tokens.input_tokens`` / ``output_tokens``.

A stream too large to hold (spooled while recorded: :mod:`.spool`) is read a slice at a time
(an event stream; only its events that mention ``usage`` are parsed) or a frame at a time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .bodyfiles import BodyFile
from .eventstream import Frame, chunk_event, decode_frames, is_event_stream
from .largebody import LARGE_BODY_BYTES, ChunkedText
from .models import Response
from .spool import ChunksOnDisk
from .sse import parse_event_pieces, parse_events
from .wsframes import Frame as SessionFrame
from .wsframes import WebSocketSession, frame_json

__all__ = ["CacheTokens", "Tokens", "cache_tokens_of", "frame_tokens", "tokens_of"]

_INPUT = ("prompt_tokens", "input_tokens", "promptTokenCount", "inputTokens")
_INPUT_EXTRA = ("cache_creation_input_tokens", "cache_read_input_tokens")
_OUTPUT = ("completion_tokens", "output_tokens", "candidatesTokenCount", "outputTokens")
_OUTPUT_EXTRA = ("thoughtsTokenCount",)


@dataclass(frozen=True, slots=True)
class Tokens:
    input: int = 0
    output: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.input + other.input, self.output + other.output)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(usage: dict[str, Any], names: tuple[str, ...]) -> int:
    return sum(usage[name] for name in names if _is_count(usage.get(name)))


def _first(usage: dict[str, Any], names: tuple[str, ...]) -> int:
    for name in names:
        if _is_count(usage.get(name)):
            return int(usage[name])
    return 0


def _usages(value: Any) -> list[dict[str, Any]]:
    """The usage mappings in one JSON body or event: top level, or in the message/response it wraps."""
    if not isinstance(value, dict):
        return []
    found = [u for u in (value.get("usage"), value.get("usageMetadata")) if isinstance(u, dict)]
    found.extend(u["tokens"] for u in list(found) if isinstance(u.get("tokens"), dict))  # Cohere v2
    for wrapper in ("message", "response"):
        inner = value.get(wrapper)
        if isinstance(inner, dict) and isinstance(inner.get("usage"), dict):
            found.append(inner["usage"])
    return found


def _frame_body(frame: dict[str, Any]) -> Any:
    """A frame's JSON payload; for a ``chunk`` frame, the provider event it carries, where
    that provider's own usage sits."""
    event = chunk_event(frame)
    return frame.get("json") if event is None else event


def _may_be_json(chunks: Any) -> bool:
    """Whether a body may be a JSON document (its first non-blank byte opens an object or an
    array), seen on its first chunks only: with a budget set, every answer recorded live is
    counted as it is handed over (:func:`promptvcr.policies.budget.spend`), and joining then
    decoding a large text body to find out held it three times (a 100 MB stream peaked at 300 MB)."""
    for chunk in chunks:
        if found := _FIRST_BYTE.search(chunk):
            first = found.group()
            return first in (b"{", b"[") or not (0x20 < first[0] < 0x7F)  # or another encoding (a BOM)
    return False


_FIRST_BYTE = re.compile(rb"[^ \t\r\n]")


def _spooled_frames(chunks: ChunksOnDisk) -> Iterator[Frame]:
    """The frames of a spooled event-stream body, read one at a time (each starts with its
    length); they end at the first bytes that are not a frame, or one too large to hold."""
    at, size = 0, chunks.size
    while at + 4 <= size:
        total = int.from_bytes(chunks.read(at, at + 4), "big")
        frames = decode_frames(chunks.read(at, at + total)) if 0 < total <= LARGE_BODY_BYTES else None
        if not frames:
            return
        yield from frames
        at += total


def _bodies(response: Response) -> Iterable[Any]:
    if is_event_stream(response.content_type):  # AWS event-stream frames (Bedrock streams)
        chunks = response.chunks
        if isinstance(chunks, ChunksOnDisk):  # one frame held at a time
            return (_frame_body(frame) for frame in _spooled_frames(chunks))
        return [_frame_body(frame) for frame in decode_frames(response.content) or ()]
    try:
        if response.is_event_stream and isinstance(response.chunks, ChunksOnDisk):  # read in slices
            events = parse_event_pieces(ChunkedText(response.chunks).pieces(), "usage")
            return [event.get("data") for event in events]
        if response.is_event_stream:
            return [event.get("data") for event in parse_events(response.content.decode("utf-8"))]
        if isinstance(response.chunks, BodyFile) or not _may_be_json(response.chunks):
            return []  # a text or binary body (a body file is never JSON): never joined nor parsed
        return [json.loads(response.content)]
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []


def tokens_of(response: Response) -> Tokens:
    """The tokens one answer consumed, as its provider reported them; zero when it did not."""
    if response.usage is not None:  # counted already (a small cassette's: see .smallcache)
        return Tokens(*response.usage)
    if response.websocket is not None:  # a session: each answer (``response.done``) counted once
        return _session_tokens(response.websocket)
    input_tokens = output_tokens = 0
    for body in _bodies(response):
        for usage in _usages(body):
            input_tokens = max(input_tokens, _first(usage, _INPUT) + _count(usage, _INPUT_EXTRA))
            output_tokens = max(output_tokens, _first(usage, _OUTPUT) + _count(usage, _OUTPUT_EXTRA))
    return Tokens(input_tokens, output_tokens)


#: Prompt tokens read from the provider's prompt cache: OpenAI chat (``prompt_tokens_details``) and
#: Responses (``input_tokens_details``) ``cached_tokens``, Anthropic, Gemini (``usageMetadata``).
_CACHE_READ = ("cache_read_input_tokens", "cachedContentTokenCount")
_CACHE_READ_DETAILS = ("prompt_tokens_details", "input_tokens_details")
#: Prompt tokens written to the cache (Anthropic bills them above the input price).
_CACHE_WRITE = ("cache_creation_input_tokens",)


@dataclass(frozen=True, slots=True)
class CacheTokens:
    """The prompt-cache counts of one answer; ``None`` where the provider reported none."""

    read: int | None = None
    written: int | None = None
    prompt: int = 0


def cache_tokens_of(response: Response) -> CacheTokens:
    """What the provider said its prompt cache did for one answer (the largest value a stream
    reported for each count), and the answer's prompt tokens in all."""
    read: int | None = None
    written: int | None = None
    for body in _bodies(response) if response.websocket is None else ():
        for usage in _usages(body):
            details = [usage.get(name) for name in _CACHE_READ_DETAILS]
            found = [
                d["cached_tokens"]
                for d in details
                if isinstance(d, dict) and _is_count(d.get("cached_tokens"))
            ]
            found += [usage[name] for name in _CACHE_READ if _is_count(usage.get(name))]
            if found:
                read = max(read or 0, *found)
            if any(_is_count(usage.get(name)) for name in _CACHE_WRITE):
                written = max(written or 0, _count(usage, _CACHE_WRITE))
    return CacheTokens(read, written, tokens_of(response).input)


def _session_tokens(session: WebSocketSession) -> Tokens:
    """The usage the server's messages of a session report, added up: each is one answer's."""
    total = Tokens()
    for frame in session.frames:
        total += frame_tokens(frame)
    return total


def frame_tokens(frame: SessionFrame) -> Tokens:
    """The usage one server message of a session reports (OpenAI Realtime: ``response.done``;
    Gemini Live: ``usageMetadata``): one answer's, counted as it arrives by a recording budget."""
    total = Tokens()
    if frame.sender == "server" and (document := frame_json(frame)) is not None:
        for usage in _usages(document):
            total += Tokens(
                _first(usage, _INPUT) + _count(usage, _INPUT_EXTRA),
                _first(usage, _OUTPUT) + _count(usage, _OUTPUT_EXTRA),
            )
    return total
