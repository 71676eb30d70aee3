"""Serving a stored response to a client: whole, or chunk by chunk, paced and broken as asked.

A response of one chunk goes out with its length; a stream (several chunks, one per event)
goes out chunked, each stored chunk written and flushed on its own, so the client reads the
events one at a time as it did live. When the cassette set a ``playback`` (recorded timing,
an injected fault), :mod:`promptvcr.interceptors.pacing` paces it; its breakages become what
a client sees of a real failing server: silence until the client's own timeout fires for a
timeout, and a connection closed without the end of the body for a disconnect. The silence
of a timeout ends: after ``silence`` seconds (``--fault-silence``, 10 by default) the
connection is closed, so a client whose own timeout is longer (node's openai waits 10
minutes) gets an error in seconds instead of hanging.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from ..cassettes.models import Response
from ..cassettes.playback import Breakage
from ..cassettes.wire import CONNECTION_HEADERS
from ..interceptors.pacing import PacedBody, wait_for_headers_async

__all__ = ["SILENCE", "play_out"]

#: How long an injected timeout keeps a connection silent, in seconds, unless told otherwise.
SILENCE = 10.0


class _Broken(Exception):
    def __init__(self, kind: Breakage) -> None:
        super().__init__(kind)
        self.kind = kind


def _fail(kind: Breakage) -> BaseException:
    return _Broken(kind)


def _headers(response: Response) -> list[tuple[str, str]]:
    return [(k, v) for k, v in response.headers.items() if k.lower() not in CONNECTION_HEADERS]


async def _silence(incoming: web.Request, seconds: float) -> None:
    """Say nothing until the client gives up (its timeout) or ``seconds`` pass, then hang up."""
    transport = incoming.transport
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    while loop.time() < until and transport is not None and not transport.is_closing():
        await asyncio.sleep(min(0.05, max(until - loop.time(), 0.0)))
    if transport is not None:
        transport.close()


async def play_out(incoming: web.Request, response: Response, silence: float = SILENCE) -> web.StreamResponse:
    playback = response.playback
    if playback is None and len(response.chunks) <= 1:
        whole = web.Response(status=response.status, body=response.content)
        for name, value in _headers(response):
            whole.headers.add(name, value)
        return whole
    if playback is not None:
        try:
            await wait_for_headers_async(playback, _fail)
        except _Broken:
            await _silence(incoming, silence)
            raise web.HTTPGatewayTimeout(text="promptvcr fault: injected timeout") from None
    out = web.StreamResponse(status=response.status)
    for name, value in _headers(response):
        out.headers.add(name, value)
    out.enable_chunked_encoding()
    await out.prepare(incoming)
    chunks = response.chunks if playback is None else PacedBody(response.chunks, playback, _fail)
    try:
        if isinstance(chunks, PacedBody):
            async for chunk in chunks:
                if chunk:
                    await out.write(chunk)
        else:
            for chunk in chunks:
                if chunk:
                    await out.write(chunk)
    except _Broken as broken:
        if broken.kind == "read_timeout":
            await _silence(incoming, silence)
        if incoming.transport is not None:
            incoming.transport.close()  # no terminating chunk: the client sees a cut stream
        return out
    await out.write_eof()
    return out
