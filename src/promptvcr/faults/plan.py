"""Deciding, per request, which declared fault fires, and the response that carries it.

The cassette asks :meth:`FaultPlan.pick` about every request. A fault that replaces the
answer (an HTTP error, a timeout before the headers) is served without touching the
cassette, so the recorded answer is still there for the retry that follows. A fault that
breaks a recorded answer (a cut stream, a malformed event, a read timeout mid-stream) is
applied to a copy of it, as a :class:`~promptvcr.cassettes.playback.Playback` or changed
chunks; the interceptors carry it out (see :mod:`promptvcr.interceptors.pacing`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..cassettes.bodies import json_bytes
from ..cassettes.models import Interaction, Play, Request, Response
from ..cassettes.playback import Breakage, Playback, paced
from ..credentials.printing import safe_request
from .provider_errors import error_body, error_headers
from .spec import Fault

__all__ = ["FaultFired", "FaultPlan", "answer_for", "break_answer"]


@dataclass(frozen=True, slots=True)
class FaultFired:
    """A fault that fired: on which request, the how-many-th match it was, and when
    (``time.monotonic()``), so a test can check the gaps a client's backoff left."""

    fault: Fault
    request: Request
    match: int
    at: float


class FaultPlan:
    """The declared faults of one cassette use, and how many requests each has matched;
    a fault that fires is noted in the cassette's ``played`` and ``faults_fired`` lists.

    Not thread-safe on its own: the cassette calls it under its lock.
    """

    def __init__(
        self, faults: Sequence[Fault], played: list[Play] | None = None, log: list[FaultFired] | None = None
    ) -> None:
        self.faults = tuple(faults)
        self._matched = [0] * len(self.faults)
        self._played = [] if played is None else played
        self._log = [] if log is None else log

    def pick(self, request: Request) -> FaultFired | None:
        """The first declared fault due on this request; every matching fault counts it."""
        chosen: FaultFired | None = None
        for position, fault in enumerate(self.faults):
            if not fault.matches(request):
                continue
            self._matched[position] += 1
            match = self._matched[position]
            if chosen is None and fault.nth <= match < fault.nth + fault.times:
                chosen = FaultFired(fault, safe_request(request), match, time.monotonic())
        return chosen

    def decide(self, request: Request) -> tuple[FaultFired | None, Response | None]:
        """The fault due on ``request`` (:meth:`pick`), and its answer when it replaces the
        recorded one (:meth:`fire`); a fault that breaks the recorded answer waits for it."""
        fired = self.pick(request)
        if fired is not None and not fired.fault.breaks_recorded_answer:
            return fired, self.fire(fired)
        return fired, None

    def fire(self, fired: FaultFired) -> Response:
        """Serve a fault that replaces the answer (an HTTP error, a timeout), noted."""
        self._log.append(fired)
        response = answer_for(fired.fault, fired.request)
        playback = response.playback
        shown = None if playback is not None and playback.breaks_before_headers else response
        self._played.append(Play(fired.request, "fault", shown))
        return response

    def break_recorded(
        self, fired: FaultFired, interaction: Interaction | None, factor: float | None
    ) -> Response | None:
        """The recorded answer broken by ``fired`` (noted like :meth:`fire`); ``None`` when
        there is none to break, and the request then goes the ordinary way."""
        broken = None if interaction is None else break_answer(fired.fault, interaction.response, factor)
        if broken is not None:
            self._log.append(fired)
            self._played.append(Play(fired.request, "fault", broken))
        return broken


def answer_for(fault: Fault, request: Request) -> Response:
    """The response of a fault that replaces the answer: an HTTP error, or a timeout."""
    if fault.kind == "http_error":
        status = fault.status or 500
        body = fault.body if fault.body is not None else error_body(request, status, fault.retry_after)
        headers = error_headers(request, status, fault.retry_after)
        headers.update((name.lower(), value) for name, value in fault.headers.items())
        return Response(status, headers, [body if isinstance(body, bytes) else json_bytes(body)])
    breakage: Breakage = "connect_timeout" if fault.kind == "connect_timeout" else "read_timeout"
    # The status is never seen: the interceptor raises before it hands over any response.
    return Response(504, playback=Playback(breakage=breakage))


def _malformed(chunk: bytes) -> bytes:
    """The chunk with the payload of its last ``data:`` line cut in half: invalid JSON."""
    lines = chunk.split(b"\n")
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(b"data:"):
            payload = lines[index][5:]
            lines[index] = b"data:" + payload[: max(1, len(payload) // 2)]
            return b"\n".join(lines)
    if chunk.lstrip()[:1] in (b"{", b"["):  # a whole JSON body
        return chunk[: len(chunk) // 2]
    return b'data: {"malformed\n\n'


def break_answer(fault: Fault, recorded: Response, factor: float | None) -> Response | None:
    """A copy of a recorded answer broken as ``fault`` says, or ``None`` when it cannot be
    (a malformed event past the end of the stream)."""
    if fault.kind == "malformed_event":
        index = fault.event or 0
        if index >= len(recorded.chunks):
            return None
        chunks = list(recorded.chunks)
        chunks[index] = _malformed(chunks[index])
        return paced(dataclasses.replace(recorded, chunks=chunks), factor)
    after = min(fault.after_events or 0, len(recorded.chunks))
    breakage: Breakage = "disconnect" if fault.kind == "cut_stream" else "read_timeout"
    return paced(recorded, factor, Playback(breakage=breakage, break_after=after))
