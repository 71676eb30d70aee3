"""Sending a request upstream and streaming the answer to the client as it arrives.

Used for the ``Record`` decision (the complete response then goes to the recorder, through
the :class:`~promptvcr.interceptors.recording.Recording` every interceptor shares: status,
headers less the wire ones, decoded chunks, timing) and for ``PASS_THROUGH`` (nothing kept).
Each chunk is written to the client the moment it is read: nothing is buffered, so a
stream's first event reaches the client within a few milliseconds of the upstream's.

The request is sent inside :func:`~promptvcr.interceptors._forwarding.forwarding`, so the
in-process interceptors (installed while the server's cassettes are entered) let it through.
A client that goes away mid-stream does not cut the recording short: the rest is read, so
the cassette holds the whole answer. The recording is written, in a thread, before the
client gets the end of the answer. The server's stop cuts an answer still arriving (it
cancels the relay): what arrived is recorded as closed early (``end: closed``), written, and
listed in the cassette's ``cut_short`` so that the server exits non-zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiohttp
from aiohttp import web

from ..cassettes.models import Request
from ..cassettes.spool import SpooledChunks
from ..cassettes.wire import CONNECTION_HEADERS
from ..interceptors._forwarding import forwarding
from ..interceptors.decision import Recorder
from ..interceptors.recording import Recording
from .inbound import sent_body, upstream_headers
from .served import ServedCassette

__all__ = ["UPSTREAM_FAILED", "relay"]

log = logging.getLogger("promptvcr.server")

#: Status sent when the upstream cannot be reached.
UPSTREAM_FAILED = 502


async def relay(
    session: aiohttp.ClientSession,
    incoming: web.Request,
    request: Request,
    recorder: Recorder | None,
    cassette: ServedCassette,
    spooled: SpooledChunks | None = None,
) -> web.StreamResponse:
    """Send ``request`` upstream, stream its answer back; record it when ``recorder`` is given.
    ``spooled``: the body as received, when it was too large to hold (``request`` then holds
    it as it is keyed: see :mod:`.inbound`)."""
    recording = Recording(recorder) if recorder is not None else None
    sent_headers = upstream_headers(request)
    if spooled is not None:
        sent_headers["content-length"] = str(spooled.size)  # sent as received, not chunked
    try:
        with forwarding():
            upstream = await session.request(
                request.method,
                request.url,
                headers=sent_headers,
                data=sent_body(spooled) if spooled is not None else (request.content or None),
                allow_redirects=False,
            )
    except asyncio.CancelledError:  # stopped before the answer's headers: nothing to write
        if recording is not None:
            cassette.cut_short.append(request)
        raise
    try:
        headers = [(k, v) for k, v in upstream.headers.items() if k.lower() not in CONNECTION_HEADERS]
        if recording is not None:
            recording.headers_arrived(upstream.status, upstream.headers.items())
            recording.started()
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        for name, value in headers:
            response.headers.add(name, value)
        client_gone = False
        try:
            await response.prepare(incoming)
        except (ConnectionError, RuntimeError):
            client_gone = True
        try:
            async for chunk in upstream.content.iter_any():
                if recording is not None:
                    recording.add(chunk)
                if not client_gone:
                    try:
                        await response.write(chunk)
                    except (ConnectionError, RuntimeError):
                        client_gone = True  # keep reading: the cassette holds the whole answer
        except asyncio.CancelledError:  # the server is stopping
            if recording is not None and not recording.ended:
                recording.close_early()
                if recording.closed_early:
                    cassette.cut_short.append(request)
            raise
        except aiohttp.ClientError as error:
            if recording is not None:
                recording.fail()
            log.warning(
                "promptvcr serve: %s %s: the upstream broke off: %s", request.method, request.url, error
            )
            if incoming.transport is not None:
                incoming.transport.close()  # the client sees the same cut stream
            return response
        if recording is not None:
            recording.complete()
            # Written in a thread (a large recording takes seconds): the server answers the
            # others meanwhile, and a stop lets the write end (see .running).
            cassette.write_started()  # a stop waits for it (see .served), even this relay's cancelled
            await asyncio.to_thread(_handed_over, recording, cassette)
        if not client_gone:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await response.write_eof()
        return response
    finally:
        upstream.release()


def _handed_over(recording: Recording, cassette: ServedCassette) -> None:
    """``recording`` given to its cassette, which writes it; in a thread of its own."""
    try:
        recording.hand_over()
    finally:
        cassette.write_ended()
