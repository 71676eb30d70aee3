"""What every renderer shares: the answer in context (:class:`Turn`), deterministic ids and
times, the split of text into stream deltas, and the :class:`Response` a rendering becomes.

Ids and timestamps depend only on the script and the reply's position in it, so a scripted
answer is the same on every run: a test may assert on them, and a snapshot stays stable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..cassettes.bodies import json_bytes
from ..cassettes.models import Response
from ..cassettes.sse import Event, encode_event
from ..cassettes.timing import Timing
from .replies import Reply, Usage

__all__ = ["BASE_TIME", "Turn", "argument_pieces", "json_response", "sse_response", "text_pieces"]

#: The creation time of the first reply of every script (2023-11-14); each next reply one second later.
BASE_TIME = 1_700_000_000
_WORDS = re.compile(r"\s*\S+")
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^{}\[\],:"]+')


@dataclass(frozen=True, slots=True)
class Turn:
    """One reply about to be rendered: what it says, for which model, and where in its script."""

    reply: Reply
    model: str
    stream: bool
    position: int
    seed: str
    usage: Usage
    body: Mapping[str, Any]  # the request's JSON body (empty when it has none)

    @property
    def created(self) -> int:
        return BASE_TIME + self.position

    def make_id(self, prefix: str, item: int = 0, length: int = 24) -> str:
        """``prefix`` and hex digits that depend on the script, the reply and ``item`` only."""
        digest = hashlib.sha256(f"{self.seed}:{self.position}:{prefix}:{item}".encode()).hexdigest()
        return prefix + digest[:length]

    @property
    def finish(self) -> str:
        return self.reply.finish_reason


def text_pieces(text: str) -> list[str]:
    """``text`` as stream deltas, a word each with the space before it (as models stream)."""
    pieces = _WORDS.findall(text)
    rest = text[sum(len(p) for p in pieces) :]
    if rest:
        pieces = [*pieces[:-1], pieces[-1] + rest] if pieces else [rest]
    return pieces


def argument_pieces(arguments: str) -> list[str]:
    """A tool call's JSON arguments as stream deltas: strings, punctuation and the rest apart."""
    return _JSON_TOKENS.findall(arguments) or [arguments]


def _timing(reply: Reply, chunks: int) -> Timing | None:
    if not reply.delay and not reply.gap:
        return None
    return Timing(reply.delay, tuple(reply.gap * (n + 1) for n in range(chunks)))


def json_response(turn: Turn, body: Any, content_type: str = "application/json") -> Response:
    return Response(200, {"content-type": content_type}, [json_bytes(body)], timing=_timing(turn.reply, 1))


def sse_response(turn: Turn, events: Sequence[Event]) -> Response:
    chunks = [encode_event(event) for event in events]
    headers = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
    return Response(200, headers, chunks, timing=_timing(turn.reply, len(chunks)))
