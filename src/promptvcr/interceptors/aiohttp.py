"""aiohttp client sessions (litellm, and the aiohttp-backed SDK transports underneath httpx2).

The patch sits on the connector: ``BaseConnector.connect(req, ...)`` is called once per
request on the wire (redirects and aiohttp's own retries included), after the session
has applied cookies, auth and middlewares, for every session whenever it was created.
Instead of a socket it returns a connection whose protocol is aiohttp's own
``ResponseHandler``, fed with HTTP/1.1 bytes that promptvcr writes: the stored response,
or, when recording, the real response as it arrives. aiohttp then parses a genuine HTTP
response, so ``read``, ``json``, ``content.readline``, ``iter_chunked``, ``iter_any``,
``iter_chunks``, timeouts and ``raise_for_status`` all behave exactly as against a server.
vcrpy's patch replaces ``ClientSession._request`` and builds the response object by hand,
which is why streaming reads and redirects there differ from aiohttp's.

The real request of a recording is sent by a private session on the same connector (same
pool, TLS and resolver settings), its body already read, with redirects left to the
application's session.

A stored response with a ``playback`` (recorded timing, an injected fault; see
:mod:`.playback`) is written to the parser by a task, each part when it is due, so the
session's own ``sock_read`` timer runs as against a server. Breakages are what aiohttp
raises for the real thing: ``ConnectionTimeoutError`` from the connect, aiohttp's
``SocketTimeoutError`` set on the protocol and body, and for a cut stream the fake
connection ends without the rest of the body, so aiohttp raises ``ClientPayloadError``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import aiohttp
from aiohttp import BaseConnector
from multidict import CIMultiDict

from ..cassettes.models import Request, Response
from ..cassettes.playback import Breakage, Playback, StreamNotRecorded
from ..cassettes.spool import ChunksOnDisk
from ..cassettes.wire import CONNECTION_HEADERS, FRAMING_HEADERS, reason_phrase
from ._compat import (
    AIOHTTP_CONNECT_SEAM,
    AIOHTTP_RESPONSE_PAYLOAD,
    aiohttp_connect_timeout,
    aiohttp_response_handler,
    aiohttp_socketless_connection,
)
from ._forwarding import forwarding, is_forwarding
from .decision import Handler, Record, Recorder, Replay, Uninstall
from .pacing import PacedBody, describe, wait_for_headers_async
from .recording import Recording

__all__ = ["install"]

_NO_BODY_STATUSES = frozenset({204, 304})

#: Seconds of silence before an injected read timeout in mid-body, for a session without
#: a sock_read timeout: time for the application to read the chunks delivered before it.
_SILENCE = 0.05

_tasks: set[asyncio.Task[None]] = set()  # recording pumps, kept alive until they finish


def _head(status: int, headers: Iterable[tuple[str, str]], framing: tuple[str, str] | None) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason_phrase(status, 'Unknown')}"]
    # promptvcr frames the body itself, on a connection of its own
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in CONNECTION_HEADERS]
    if framing is not None:
        lines.append(f"{framing[0]}: {framing[1]}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")


def _unsent_length(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """The framing of an answer without a body: a HEAD answer's content-length (the length of
    the body it did not send), which SDKs and download code read; none when it had none."""
    length = headers.get("content-length")
    return None if length is None else ("Content-Length", length)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _has_body(method: str, status: int) -> bool:
    return method.upper() != "HEAD" and status not in _NO_BODY_STATUSES and status >= 200


def _fail(kind: Breakage) -> BaseException:
    """aiohttp's own exceptions for injected breakages (see :mod:`.playback`)."""
    if kind == "connect_timeout":
        return aiohttp.ConnectionTimeoutError(describe(kind))
    if kind == "read_timeout":
        return aiohttp.SocketTimeoutError(describe(kind))  # what its sock_read timer raises
    return aiohttp.ClientPayloadError(describe(kind))


def _stored_bytes(method: str, response: Response) -> Iterator[bytes]:
    """A stored response as the bytes a server would send, one HTTP chunk per stored chunk."""
    headers = list(response.headers.items())
    if not _has_body(method, response.status):
        yield _head(response.status, headers, _unsent_length(response.headers))
        return
    if len(response.chunks) <= 1:
        body = response.content
        yield _head(response.status, headers, ("Content-Length", str(len(body)))) + body
        return
    yield _head(response.status, headers, ("Transfer-Encoding", "chunked"))
    for chunk in response.chunks:
        if chunk:
            yield _chunk(chunk)
    yield b"0\r\n\r\n"


class _Transport(asyncio.Transport):
    """Where aiohttp writes the request (already read by promptvcr, so dropped)."""

    def __init__(self) -> None:
        super().__init__()
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        pass

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        pass

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class _Protocol(aiohttp_response_handler()):  # type: ignore[misc]
    """aiohttp's response parser, fed by promptvcr once aiohttp has configured it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stored: Iterator[bytes] | None, live: Any) -> None:
        super().__init__(loop)
        self._pump_loop = loop
        self._pump: asyncio.Task[None] | None = None
        self._stored = stored
        self._live = live
        self._drained = asyncio.Event()  # cleared while aiohttp's payload reader is full
        self._drained.set()

    def pause_reading(self, *args: Any, **kwargs: Any) -> None:
        super().pause_reading(*args, **kwargs)
        self._drained.clear()

    def resume_reading(self, *args: Any, **kwargs: Any) -> None:
        super().resume_reading(*args, **kwargs)
        self._drained.set()

    def set_response_params(self, **params: Any) -> None:
        super().set_response_params(**params)
        if self._stored is not None:
            for data in self._stored:
                self.data_received(data)
        elif self._live is not None:
            self._pump = task = self._pump_loop.create_task(self._live.pump(self))
            _tasks.add(task)
            task.add_done_callback(_tasks.discard)
            if isinstance(self._live, _Live):
                task.add_done_callback(self._live.done)

    def close(self) -> None:
        """The application let go of the response: a recording it did not read to the end
        stops at once (see :meth:`.Recording.reads_rest`)."""
        super().close()
        if isinstance(self._live, _Live) and self._pump is not None:
            self._live.released(self._pump)

    def feed(self, data: bytes) -> bool:
        """Hand bytes to the parser unless the application has already let go of it (False)."""
        if self.transport is not None and not self.transport.is_closing():
            self.data_received(data)
            return True
        return False

    def hang_up(self) -> None:
        """End the connection here, as a server that goes away does: an incomplete body
        makes aiohttp raise its own payload error."""
        if self.transport is not None:
            self.connection_lost(None)

    def time_out(self, error: BaseException) -> None:
        """Fail the response and its body as aiohttp's own ``sock_read`` timer does."""
        if self.transport is None or self.exception() is not None:
            return
        self.set_exception(error)
        payload = getattr(self, AIOHTTP_RESPONSE_PAYLOAD, None)
        if payload is not None:
            payload.set_exception(error)


class _Live:
    """A real response being recorded: its decoded body goes to the application chunk by
    chunk as it arrives, and to its :class:`Recording`."""

    def __init__(
        self, session: aiohttp.ClientSession, real: aiohttp.ClientResponse, recording: Recording
    ) -> None:
        self._session = session
        self._real = real
        self._recording = recording

    def released(self, pump: asyncio.Task[None]) -> None:
        if not self._recording.ended and not self._recording.reads_rest():
            pump.cancel()  # closed early: recorded as far as it arrived

    def done(self, pump: asyncio.Task[None]) -> None:
        """The pump is over: cancelled with its loop (``asyncio.run`` cancels what is left when
        the application's coroutine returns) before the body ended, it records what arrived."""
        self._recording.close_early()

    async def pump(self, protocol: _Protocol) -> None:
        real, recording = self._real, self._recording
        headers = [(k, v) for k, v in real.headers.items() if k.lower() not in CONNECTION_HEADERS]
        try:
            if not _has_body(real.method, real.status):
                protocol.feed(_head(real.status, headers, _unsent_length(real.headers)))
            else:
                protocol.feed(_head(real.status, headers, ("Transfer-Encoding", "chunked")))
                async for data in real.content.iter_any():
                    recording.add(data)
                    if not protocol.feed(_chunk(data)) and not recording.reads_rest():
                        return  # the application let go of the response
            recording.complete()
            # Recorded before the application can see the end of the body: once it has, it
            # may close the event loop, and this task with it.
            recording.hand_over()
            if _has_body(real.method, real.status):
                protocol.feed(b"0\r\n\r\n")
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            recording.fail(error)
            if protocol.transport is not None:
                protocol.connection_lost(error)  # the application sees the payload cut short
        finally:
            real.release()
            await self._session.close()


class _Paced:
    """A stored response served as its ``playback`` says: the head after the recorded
    time to headers, each chunk when due, then the injected breakage, if any."""

    def __init__(self, method: str, response: Response) -> None:
        self._method = method
        self._response = response

    async def pump(self, protocol: _Protocol) -> None:
        response, playback = self._response, self._response.playback
        assert playback is not None
        headers = list(response.headers.items())
        try:
            await wait_for_headers_async(playback, _fail)
            if not _has_body(self._method, response.status):
                protocol.feed(_head(response.status, headers, _unsent_length(response.headers)))
                return
            single = len(response.chunks) <= 1 and playback.breakage != "unrecorded"
            framing = (
                ("Content-Length", str(len(response.content))) if single else ("Transfer-Encoding", "chunked")
            )
            protocol.feed(_head(response.status, headers, framing))
            async for chunk in PacedBody(response.chunks, playback, _fail):
                await protocol._drained.wait()  # fed as the application reads (a body file: 1 MiB slices)
                if not protocol.is_connected():
                    return  # the application let go of the response: no more sleeping for it
                if chunk:
                    protocol.feed(chunk if single else _chunk(chunk))
            if not single:
                protocol.feed(b"0\r\n\r\n")
        except aiohttp.SocketTimeoutError as error:
            if playback.break_after is not None:
                # Silence first, as before a real read timeout: the application reads what
                # was delivered (a failed body drops its buffer), and the session's own
                # sock_read timer, when it has one, fires when it would against a server.
                await asyncio.sleep(protocol.read_timeout or _SILENCE)
            protocol.time_out(error)
        except StreamNotRecorded as error:
            protocol.time_out(error)  # the application's next read raises it
        except aiohttp.ClientPayloadError:
            # A hang-up reaches the loop as its own callback, after the data before it:
            # let the application's reader take that data first, as it does from a socket.
            for _ in range(3):
                await asyncio.sleep(0)
            protocol.hang_up()


async def _body(req: aiohttp.ClientRequest) -> bytes:
    body = req.body
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    data: bytes = await body.as_bytes()  # aiohttp >= 3.12 caches it, so the payload can still be sent
    return data


def _headers(req: aiohttp.ClientRequest) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in req.headers.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


async def _send_real(
    connector: BaseConnector, req: aiohttp.ClientRequest, content: bytes, timeout: Any, recorder: Recorder
) -> tuple[aiohttp.ClientSession, aiohttp.ClientResponse, Recording]:
    """Send the request for real through a private session on the application's connector.

    Its headers are the ones the application's session computed (no defaults are added
    again); only the body framing is left to aiohttp, as the body is now plain bytes.
    """
    session = aiohttp.ClientSession(
        connector=connector, connector_owner=False, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
    )
    headers = [(k, v) for k, v in req.headers.items() if k.lower() not in FRAMING_HEADERS]
    recording = Recording(recorder)
    try:
        with forwarding():
            real = await session.request(
                req.method,
                req.url,
                headers=CIMultiDict(headers),
                data=content or None,
                allow_redirects=False,
                proxy=req.proxy,
                proxy_auth=req.proxy_auth,
                proxy_headers=req.proxy_headers,
                ssl=req.ssl,
                server_hostname=req.server_hostname,
                timeout=timeout if isinstance(timeout, aiohttp.ClientTimeout) else session.timeout,
                skip_auto_headers=("User-Agent", "Content-Type", "Accept", "Accept-Encoding"),
            )
            recording.headers_arrived(real.status, real.headers.items(), CONNECTION_HEADERS)
    except BaseException:
        await session.close()
        raise
    return session, real, recording


def install(handler: Handler) -> Uninstall:
    original = getattr(BaseConnector, AIOHTTP_CONNECT_SEAM)

    async def connect(connector: BaseConnector, req: aiohttp.ClientRequest, *args: Any, **kwargs: Any) -> Any:
        if is_forwarding():
            return await original(connector, req, *args, **kwargs)
        content = await _body(req)
        request = Request(method=req.method, url=str(req.url), headers=_headers(req), content=content)
        decision = handler.handle(request)
        loop = asyncio.get_running_loop()
        if isinstance(decision, Replay):
            stored = decision.response
            if stored.playback is None and isinstance(stored.chunks, ChunksOnDisk):  # never fed whole
                stored = dataclasses.replace(stored, playback=Playback())
            playback = stored.playback
            if playback is None:
                protocol = _Protocol(loop, _stored_bytes(req.method, stored), None)
            elif playback.breaks_before_headers and playback.breakage == "connect_timeout":
                raise _fail("connect_timeout")
            else:
                protocol = _Protocol(loop, None, _Paced(req.method, stored))
        elif isinstance(decision, Record):
            timeout = aiohttp_connect_timeout(args, kwargs)
            session, real, recording = await _send_real(connector, req, content, timeout, decision.recorder)
            recording.started()  # reported at exit if the body never completes
            protocol = _Protocol(loop, None, _Live(session, real, recording))
        else:
            return await original(connector, req, *args, **kwargs)
        protocol.connection_made(_Transport())
        return aiohttp_socketless_connection(connector, req, protocol, loop)

    setattr(BaseConnector, AIOHTTP_CONNECT_SEAM, connect)

    def uninstall() -> None:
        setattr(BaseConnector, AIOHTTP_CONNECT_SEAM, original)

    return uninstall
