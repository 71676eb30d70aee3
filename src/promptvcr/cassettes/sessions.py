"""Answers that belong to a session rather than to one request: how a cassette serves them.

A websocket session (see :mod:`.wsframes`) is served by its interceptor frame by frame.
A JSON-RPC event stream opened by a ``GET`` (MCP: the GET stream of streamable HTTP, the
stream of the older SSE transport, whose answers arrive there while each POST only gets
``202``) is served here:

- an answer (an event whose JSON-RPC message holds a ``result`` or an ``error``), and the
  progress notifications of a call, are held until the request they were recorded for has
  been answered by the cassette, as the server could not have sent them earlier. Keys ignore
  JSON-RPC ids, so that request may have been sent with another id (a call inserted before
  it shifts every later id): the event then carries the live id (and progress token). A
  request the cassette answered more times than it was recorded (a read asked again,
  ``allow_playback_repeats``) gets its answer again, as a live server would send it;
- events keep their recorded order: the client reads what it read live and acts as it did
  (the ``mcp`` client lists its tools as many times as it did live). After
  :data:`STALL` seconds with nothing sent while an event further on is due, the events
  waiting for a request that did not come this time (a call dropped) stop holding the others
  back, as over stdio;
- the SSE transport names its session in the URL every message is posted to (the
  ``endpoint`` event: ``/messages/?session_id=...``): only the requests posted there count
  for its stream, so two sessions in one cassette never release each other's answers;
- a stream that the client closed while recording (a long-lived stream is never read to its
  end) stays open after its last event until the client closes it again, rather than raising
  :class:`~.playback.StreamNotRecorded`.

Everything else is served as :func:`~.playback.paced` says.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .playback import Playback, paced
from .sse import decode_events, encode_event

if TYPE_CHECKING:
    from .models import Play, Response

__all__ = ["STALL", "served"]

_MARKER = b'"jsonrpc"'

#: Seconds a replayed session sends nothing, while something further on is due, before what
#: holds it back (a request recorded but not made this time) stops holding anything: far
#: longer than a client takes to answer what it just read, far shorter than a test's patience.
#: The same for a stdio session (:meth:`promptvcr.interceptors.stdiosession.LinePlayer.stalled`).
STALL = 1.0
_SESSION = re.compile(r"[?&]session_id=([^&\s\"]+)", re.IGNORECASE)


def _data(event: dict[str, Any]) -> Any:
    return event.get("data")


def _refers_to(chunk: bytes) -> str | None:
    """The request an SSE event's JSON-RPC message answers (``id:<id>``) or reports progress
    on (``token:<token>``), each value as JSON text; ``None`` for any other event."""
    if _MARKER not in chunk:
        return None
    try:
        messages = [_data(event) for event in decode_events(chunk)]
    except UnicodeDecodeError:
        return None
    message = messages[0] if len(messages) == 1 else None
    if not isinstance(message, dict):
        return None
    if "method" not in message:
        return "id:" + json.dumps(message["id"]) if "id" in message else None
    params = message.get("params")
    if message["method"] == "notifications/progress" and isinstance(params, dict):
        return "token:" + json.dumps(params.get("progressToken"))
    return None


def _refs(message: Any) -> dict[str, Any]:
    """How a client request is referred to (see :func:`_refers_to`) -> the value referring to it."""
    if not (isinstance(message, dict) and "method" in message and "id" in message):
        return {}
    refs = {"id:" + json.dumps(message["id"]): message["id"]}
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and "progressToken" in meta:
        refs["token:" + json.dumps(meta["progressToken"])] = meta["progressToken"]
    return refs


def _messages(content: bytes) -> list[Any]:
    try:
        message = json.loads(content)
    except (ValueError, RecursionError):
        return []
    return message if isinstance(message, list) else [message]


#: The live value of a progress token the live request did not send: its events are dropped.
_NOT_ASKED = object()


def _referring_to(chunk: bytes, ref: str, value: Any) -> bytes:
    """The event ``chunk``, referring to ``ref``, with its answer's id (or its progress token)
    set to ``value``: the recorded bytes when it is the recorded one."""
    if value is _NOT_ASKED:
        return b""
    if ref.partition(":")[2] == json.dumps(value):
        return chunk
    events = decode_events(chunk)
    for event in events:
        message = _data(event)
        if not isinstance(message, dict):
            continue
        if "method" not in message:
            event["data"] = {**message, "id": value}
        elif isinstance(params := message.get("params"), dict):
            event["data"] = {**message, "params": {**params, "progressToken": value}}
    return b"".join(encode_event(event) for event in events)


class _Stream:
    """One replayed JSON-RPC event stream: which of its events are due, as the requests a
    cassette answered so far (its ``played`` list) say.

    Events go in recorded order. One that refers to a request (:func:`_refers_to`) waits for
    the request it was recorded for; any other waits for every event before it. When the
    stream has sent nothing for :data:`STALL` seconds while an event further on is due, the
    ones holding it back stop holding anything (their request may still come, and then gets
    them). Each recorded request's reference maps to the live values of the requests that
    played it, in order: a request answered again gets the events sent for it again."""

    def __init__(self, chunks: Sequence[bytes], played: Sequence[Play], session: str | None) -> None:
        self._chunks = chunks
        self._refs = [_refers_to(chunk) for chunk in chunks]
        self._played = played
        self._seen = 0
        self._session = session
        self._live: dict[str, list[Any]] = {}
        self._sent: dict[str, list[bytes]] = {}
        self._caught_up: dict[str, int] = {}  # how many live values got every event sent
        self._done = [False] * len(chunks)
        self._loose: set[int] = set()
        self._first = 0  # the first event not sent
        self._last = time.monotonic()  # when the stream last sent (or a request came)

    @property
    def holds_answers(self) -> bool:
        return any(ref is not None for ref in self._refs)

    def _scan(self) -> None:
        while self._seen < len(self._played):
            play = self._played[self._seen]
            self._seen += 1
            live = play.request
            if _MARKER not in live.content or play.outcome != "replayed":
                continue
            if self._session is not None and self._session not in _SESSION.findall(live.url):
                continue  # another session's message
            self._last = time.monotonic()
            recorded = live if play.recorded is None else play.recorded
            for was, now in zip(_messages(recorded.content), _messages(live.content), strict=False):
                tokens = [v for ref, v in _refs(now).items() if ref.startswith("token:")]
                for ref in _refs(was):
                    value = (
                        (tokens[0] if tokens else _NOT_ASKED) if ref.startswith("token:") else now.get("id")
                    )
                    self._live.setdefault(ref, []).append(value)

    def _again(self) -> bytes:
        """The events sent already that requests answered since are owed."""
        out = b""
        for ref, events in self._sent.items():
            values, done = self._live[ref], self._caught_up[ref]
            if done < len(values):
                out += b"".join(_referring_to(e, ref, value) for value in values[done:] for e in events)
                self._caught_up[ref] = len(values)
        return out

    def _send(self, index: int) -> bytes:
        self._done[index] = True
        ref = self._refs[index]
        if ref is None:
            return self._chunks[index]
        values = self._live[ref]
        self._sent.setdefault(ref, []).append(self._chunks[index])
        self._caught_up[ref] = len(values)
        return b"".join(_referring_to(self._chunks[index], ref, value) for value in values)

    def _due(self, upto: int) -> bytes:
        """Every event due now, in recorded order, sent: up to ``upto`` (the one the body is at:
        those after it come at their own pace), or further when that one no longer holds back."""
        out = b""
        for index in range(self._first, len(self._chunks)):
            if index > upto and upto not in self._loose:
                break
            if self._done[index]:
                continue
            ref = self._refs[index]
            if ref is None or self._live.get(ref):
                out += self._send(index)
            elif index not in self._loose:
                break
        while self._first < len(self._chunks) and self._done[self._first]:
            self._first += 1
        return out

    def _stalled(self) -> None:
        """Nothing sent for :data:`STALL` seconds: the events that wait for a request that has
        not come, before the first one due, no longer hold anything back."""
        if time.monotonic() - self._last < STALL:
            return
        waiting = []
        for index in range(self._first, len(self._chunks)):
            ref = self._refs[index]
            if self._done[index] or (ref is not None and not self._live.get(ref)):
                waiting.append(index)
            elif ref is not None:  # due: the client is waiting for it
                self._loose.update(waiting)
                return

    def gate(self, index: int) -> tuple[bytes, bool]:
        """The gate of event ``index`` (``len(chunks)``: after the last, while held open): what
        to send now, and whether event ``index`` went with it."""
        self._scan()
        out = self._again() + self._due(index)
        if not out:
            self._stalled()
            out = self._due(index)
        if out:
            self._last = time.monotonic()
        return out, index < len(self._done) and self._done[index]


def _session(chunks: Sequence[bytes]) -> str | None:
    """The session id the SSE transport's ``endpoint`` event names, else ``None``."""
    for chunk in chunks:
        if b"endpoint" in chunk and _MARKER not in chunk:
            found = _SESSION.findall(chunk.decode("utf-8", "replace"))
            if found:
                return str(found[0])
    return None


def served(response: Response, factor: float | None, played: Sequence[Play], method: str) -> Response:
    """``response`` as a cassette serves it, ``played`` being the requests sent through it so far
    (the last one, sent with ``method``, is the one ``response`` answers)."""
    if response.websocket is not None or not response.is_event_stream or method != "GET":
        return paced(response, factor)  # a POST's own stream answers the request just sent
    if not any(_MARKER in chunk for chunk in response.chunks):
        return paced(response, factor)
    stream = _Stream(response.chunks, played, _session(response.chunks))
    gates = None
    if stream.holds_answers:
        gates = tuple(functools.partial(stream.gate, index) for index in range(len(response.chunks) + 1))
    base = paced(response, factor)
    playback = dataclasses.replace(
        base.playback or Playback(), gates=gates, hold_open=response.end == "closed"
    )
    return dataclasses.replace(base, playback=playback)
