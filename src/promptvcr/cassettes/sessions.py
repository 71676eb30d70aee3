"""Answers that belong to a session rather than to one request: how a cassette serves them.

A websocket session (see :mod:`.wsframes`) is served by its interceptor frame by frame.
A JSON-RPC event stream opened by a ``GET`` (MCP: the GET stream of streamable HTTP, the
stream of the older SSE transport, whose answers arrive there while each POST only gets
``202``) is served here:

- an answer (an event whose JSON-RPC message holds a ``result`` or an ``error``) is held
  until the request with its ``id`` has been sent through the cassette, as the server could
  not have answered earlier; notifications and other events follow in recorded order;
- a stream that the client closed while recording (a long-lived stream is never read to its
  end) stays open after its last event until the client closes it again, rather than raising
  :class:`~.playback.StreamNotRecorded`.

Everything else is served as :func:`~.playback.paced` says.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .playback import Playback, paced

if TYPE_CHECKING:
    from .models import Play, Response

__all__ = ["served"]

_MARKER = b'"jsonrpc"'


def _answer_id(chunk: bytes) -> Any:
    """The ``id`` of the JSON-RPC answer an SSE event holds, else ``None``."""
    lines = chunk.decode("utf-8", "replace").splitlines()
    data = "\n".join(line[5:].removeprefix(" ") for line in lines if line.startswith("data:"))
    try:
        message = json.loads(data)
    except ValueError:
        return None
    if isinstance(message, dict) and ("result" in message or "error" in message):
        return message.get("id")
    return None


class _SentIds:
    """The JSON-RPC ids of the requests sent through a cassette so far (its ``played`` list)."""

    def __init__(self, played: Sequence[Play]) -> None:
        self._played = played
        self._seen = 0
        self._ids: set[str] = set()

    def _scan(self) -> None:
        while self._seen < len(self._played):
            content = self._played[self._seen].request.content
            self._seen += 1
            if _MARKER not in content:
                continue
            try:
                message = json.loads(content)
            except ValueError:
                continue
            for item in message if isinstance(message, list) else [message]:
                if isinstance(item, dict) and "method" in item and "id" in item:
                    self._ids.add(json.dumps(item["id"]))

    def sent(self, answer_id: Any) -> bool:
        self._scan()
        return json.dumps(answer_id) in self._ids


def served(response: Response, factor: float | None, played: Sequence[Play]) -> Response:
    """``response`` as a cassette serves it, ``played`` being the requests sent through it so far."""
    if response.websocket is not None or not response.is_event_stream:
        return paced(response, factor)
    if not any(_MARKER in chunk for chunk in response.chunks):
        return paced(response, factor)
    sent = _SentIds(played)
    gates: list[Callable[[], bool] | None] = []
    for chunk in response.chunks:
        answer_id = _answer_id(chunk)
        gates.append(None if answer_id is None else functools.partial(sent.sent, answer_id))
    base = paced(response, factor)
    playback = dataclasses.replace(
        base.playback or Playback(), gates=tuple(gates), hold_open=response.end == "closed"
    )
    return dataclasses.replace(base, playback=playback)
