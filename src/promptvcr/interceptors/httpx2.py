"""httpx2, the client of openai>=3, anthropic>=2 and google-genai>=3.

respx does not know httpx2, so the client's transport seam is patched directly: every
request of every ``httpx2.Client``/``AsyncClient`` (whatever its transport, whenever it
was created) goes through a thin wrapper around the transport it would have used.
"""

from __future__ import annotations

import httpx2

from ._compat import CLIENT_TRANSPORT_SEAM
from ._forwarding import forwarding
from ._httpx_family import failures, record_response, to_request
from ._httpx_replay import replay_response
from .decision import Handler, Record, Replay, Uninstall
from .pacing import wait_for_headers, wait_for_headers_async
from .recording import Recording

__all__ = ["install"]


class _Transport(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, handler: Handler) -> None:
        self._inner = inner
        self._handler = handler

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.read()
        decision = self._handler.handle(to_request(request))
        if isinstance(decision, Replay):
            if decision.response.playback is not None:
                wait_for_headers(decision.response.playback, failures(httpx2, request))
            return replay_response(httpx2, decision.response, request)  # type: ignore[no-any-return]
        recording = Recording(decision.recorder) if isinstance(decision, Record) else None
        with forwarding():  # an aiohttp-backed transport must not intercept it again
            real = self._inner.handle_request(request)
        if recording is not None:
            return record_response(httpx2, real, recording)  # type: ignore[no-any-return]
        return real


class _AsyncTransport(httpx2.AsyncBaseTransport):
    def __init__(self, inner: httpx2.AsyncBaseTransport, handler: Handler) -> None:
        self._inner = inner
        self._handler = handler

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        decision = self._handler.handle(to_request(request))
        if isinstance(decision, Replay):
            if decision.response.playback is not None:
                await wait_for_headers_async(decision.response.playback, failures(httpx2, request))
            return replay_response(httpx2, decision.response, request)  # type: ignore[no-any-return]
        recording = Recording(decision.recorder) if isinstance(decision, Record) else None
        with forwarding():
            real = await self._inner.handle_async_request(request)
        if recording is not None:
            return record_response(httpx2, real, recording)  # type: ignore[no-any-return]
        return real


def install(handler: Handler) -> Uninstall:
    sync_original = getattr(httpx2.Client, CLIENT_TRANSPORT_SEAM)
    async_original = getattr(httpx2.AsyncClient, CLIENT_TRANSPORT_SEAM)

    def sync_seam(client: httpx2.Client, url: httpx2.URL) -> httpx2.BaseTransport:
        return _Transport(sync_original(client, url), handler)

    def async_seam(client: httpx2.AsyncClient, url: httpx2.URL) -> httpx2.AsyncBaseTransport:
        return _AsyncTransport(async_original(client, url), handler)

    setattr(httpx2.Client, CLIENT_TRANSPORT_SEAM, sync_seam)
    setattr(httpx2.AsyncClient, CLIENT_TRANSPORT_SEAM, async_seam)

    def uninstall() -> None:
        setattr(httpx2.Client, CLIENT_TRANSPORT_SEAM, sync_original)
        setattr(httpx2.AsyncClient, CLIENT_TRANSPORT_SEAM, async_original)

    return uninstall
