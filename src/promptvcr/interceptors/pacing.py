"""Serving a response whose ``playback`` is set: recorded delays and injected breakages.

This is the one place that sleeps and breaks connections, for every interceptor. The
cassette decides everything (which fault fires, how chunks are paced, which chunk is
malformed) and puts it on the response as a :class:`~promptvcr.cassettes.playback.Playback`;
an interceptor only does three things, each a call into this module:

1. Before it hands the client the response headers::

       if response.playback is not None:
           wait_for_headers(response.playback, fail)            # sync transports
           await wait_for_headers_async(response.playback, fail)  # async transports

   It sleeps for the recorded time to headers, or raises ``fail(kind)`` for a fault
   that hits before any response (connect or read timeout).
2. It serves the body from a :class:`PacedBody`, created when the headers are handed
   over and iterated with ``for`` or ``async for``: it yields each chunk when it is due
   and raises ``fail(kind)`` where the stream breaks.
3. It supplies ``fail``: a function from a :data:`~promptvcr.cassettes.playback.Breakage`
   to the exception its library raises for it, e.g. for httpx2::

       {"connect_timeout": httpx2.ConnectTimeout, "read_timeout": httpx2.ReadTimeout,
        "disconnect": httpx2.RemoteProtocolError}[kind](message, request=request)

   (aiohttp: ``ServerTimeoutError`` / ``ClientPayloadError``; requests:
   ``ConnectTimeout`` / ``ReadTimeout`` / ``ChunkedEncodingError``.) Use :func:`describe`
   for the message, so every library says the same thing.

An interceptor that writes the wire bytes itself and lets its library parse them (the
aiohttp one) may carry out ``disconnect`` by ending its fake connection after
``break_after`` chunks, without the terminating chunk: the library then raises its own
error, as for a real disconnect. Either way the chunks to serve are ``response.chunks``
(a malformed event is already in them) and the breakage comes from ``response.playback``.

When ``response.playback`` is ``None`` (no timing requested, no fault fired) none of
this runs: the interceptor serves ``response.chunks`` as they are.

Recording timing is the other half, done for every interceptor by
:class:`~.recording.Recording`: its :class:`~promptvcr.cassettes.timing.TimingRecorder`
starts when the recording is created, just before the real request is sent, and notes
when the headers and each body chunk arrived.

Sleeps use the real clock: ``time.sleep`` in sync code, ``anyio.sleep`` in async code
(asyncio or trio; plain ``asyncio.sleep`` when anyio is not installed).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence

from ..cassettes.playback import Breakage, Gate, Playback, StreamNotRecorded

try:
    from anyio import sleep as _async_sleep
except ImportError:  # pragma: no cover - anyio comes with httpx and httpx2
    from asyncio import sleep as _async_sleep

__all__ = ["Fail", "PacedBody", "describe", "wait_for_headers", "wait_for_headers_async"]

#: How often a held chunk checks whether it is due (see :mod:`promptvcr.cassettes.sessions`),
#: how long a stream held open sleeps between checks that it was closed, and between asking
#: its last gate (answers owed again after the last event) while held open.
_GATE_POLL, _HOLD, _HELD_POLL = 0.002, 0.5, 0.02

#: An interceptor's mapping from a breakage to its library's exception.
Fail = Callable[[Breakage], BaseException]

_DESCRIPTIONS: dict[Breakage, str] = {
    "connect_timeout": "promptvcr fault: connect timeout (injected; the server was not reached)",
    "read_timeout": "promptvcr fault: read timeout (injected; the server stopped sending)",
    "disconnect": "promptvcr fault: peer closed connection without sending complete message body (injected)",
}


def describe(kind: Breakage) -> str:
    """The message of the exception raised for ``kind``: says that promptvcr injected it."""
    return _DESCRIPTIONS[kind]


def wait_for_headers(playback: Playback, fail: Fail) -> None:
    if playback.breaks_before_headers:
        raise fail(playback.breakage)  # type: ignore[arg-type]
    if playback.headers_delay > 0:
        time.sleep(playback.headers_delay)


async def wait_for_headers_async(playback: Playback, fail: Fail) -> None:
    if playback.breaks_before_headers:
        raise fail(playback.breakage)  # type: ignore[arg-type]
    if playback.headers_delay > 0:
        await _async_sleep(playback.headers_delay)


class PacedBody:
    """A response body served as the playback says: each chunk when due, then the breakage.

    Create it when the headers are handed over, not when the body is first read: times
    count from its creation, so chunks that fell due while the application was busy are
    served at once, as a socket buffer would have held them. Iterate it with ``for``
    (sleeps with ``time.sleep``) or ``async for`` (sleeps with ``anyio.sleep``).
    """

    __slots__ = ("_chunks", "_fail", "_playback", "_started")

    def __init__(self, chunks: Sequence[bytes], playback: Playback, fail: Fail) -> None:
        self._chunks = chunks
        self._playback = playback
        self._fail = fail
        self._started = time.monotonic()

    def _plan(self) -> tuple[tuple[float, ...] | None, int | None]:
        playback = self._playback
        times = playback.chunk_times
        if times is not None and len(times) < len(self._chunks):
            times = None  # a timing that does not cover every chunk is no timing
        return times, playback.break_after if playback.breakage is not None else None

    def _error(self) -> BaseException:
        playback = self._playback
        if playback.breakage == "unrecorded":
            return StreamNotRecorded(playback.reason)
        return self._fail(playback.breakage)  # type: ignore[arg-type]

    def _gate(self, index: int) -> Gate | None:
        gates = self._playback.gates
        return gates[index] if gates is not None and index < len(gates) else None

    def __iter__(self) -> Iterator[bytes]:
        times, stop = self._plan()
        for index, chunk in enumerate(self._chunks):
            if index == stop:
                break
            if times is not None and (delay := self._started + times[index] - time.monotonic()) > 0:
                time.sleep(delay)
            if (gate := self._gate(index)) is None:
                yield chunk
                continue
            while True:  # held: what the gate says to send, until the chunk went
                sent, went = gate()
                if sent:
                    yield sent
                if went:
                    break
                time.sleep(_GATE_POLL)
        held = self._gate(len(self._chunks))
        while stop is not None and self._playback.hold_open:
            if held is not None and (sent := held()[0]):
                yield sent
            time.sleep(_HOLD if held is None else _HELD_POLL)  # open until the client closes it
        if stop is not None:
            raise self._error()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        times, stop = self._plan()
        for index, chunk in enumerate(self._chunks):
            if index == stop:
                break
            if times is not None and (delay := self._started + times[index] - time.monotonic()) > 0:
                await _async_sleep(delay)
            if (gate := self._gate(index)) is None:
                yield chunk
                continue
            while True:
                sent, went = gate()
                if sent:
                    yield sent
                if went:
                    break
                await _async_sleep(_GATE_POLL)
        held = self._gate(len(self._chunks))
        while stop is not None and self._playback.hold_open:
            if held is not None and (sent := held()[0]):
                yield sent
            await _async_sleep(_HOLD if held is None else _HELD_POLL)
        if stop is not None:
            raise self._error()
