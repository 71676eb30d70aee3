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
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from http import HTTPStatus
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.connector import BaseConnector, Connection
from multidict import CIMultiDict

from ..cassettes.models import Request, Response
from ._forwarding import forwarding, is_forwarding
from .base import Handler, OnRecorded, Uninstall

__all__ = ["install"]

#: Headers that describe the bytes on the wire; promptvcr frames the body itself.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})
_NO_BODY_STATUSES = frozenset({204, 304})

_tasks: set[asyncio.Task[None]] = set()  # recording pumps, kept alive until they finish


def _head(status: int, headers: Iterable[tuple[str, str]], framing: tuple[str, str] | None) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {status} {reason}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _WIRE_HEADERS]
    if framing is not None:
        lines.append(f"{framing[0]}: {framing[1]}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _has_body(method: str, status: int) -> bool:
    return method.upper() != "HEAD" and status not in _NO_BODY_STATUSES and status >= 200


def _stored_bytes(method: str, response: Response) -> Iterator[bytes]:
    """A stored response as the bytes a server would send, one HTTP chunk per stored chunk."""
    headers = list(response.headers.items())
    if not _has_body(method, response.status):
        yield _head(response.status, headers, None)
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


class _Protocol(ResponseHandler):
    """aiohttp's response parser, fed by promptvcr once aiohttp has configured it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, stored: Iterator[bytes] | None, live: Any) -> None:
        super().__init__(loop)
        self._stored = stored
        self._live = live

    def set_response_params(self, **params: Any) -> None:
        super().set_response_params(**params)
        if self._stored is not None:
            for data in self._stored:
                self.data_received(data)
        elif self._live is not None:
            task = self._loop.create_task(self._live.pump(self))
            _tasks.add(task)
            task.add_done_callback(_tasks.discard)

    def feed(self, data: bytes) -> None:
        """Hand bytes to the parser unless the application has already let go of it."""
        if self.transport is not None and not self.transport.is_closing():
            self.data_received(data)


class _Connection(Connection):
    """Never returned to the connector's pool: there is no socket behind it."""

    def release(self) -> None:
        self.close()

    def close(self) -> None:
        self._notify_release()
        protocol, self._protocol = self._protocol, None
        if protocol is not None:
            protocol.close()


class _Live:
    """A real response being recorded: its decoded body goes to the application chunk by
    chunk as it arrives, and to the cassette once complete. A response the application
    drops early is still read to its end, so that the cassette holds the whole answer."""

    def __init__(
        self, session: aiohttp.ClientSession, real: aiohttp.ClientResponse, on_recorded: OnRecorded
    ) -> None:
        self._session = session
        self._real = real
        self._on_recorded = on_recorded

    async def pump(self, protocol: _Protocol) -> None:
        real, chunks = self._real, []
        headers = [(k, v) for k, v in real.headers.items() if k.lower() not in _WIRE_HEADERS]
        try:
            if not _has_body(real.method, real.status):
                protocol.feed(_head(real.status, headers, None))
            else:
                protocol.feed(_head(real.status, headers, ("Transfer-Encoding", "chunked")))
                async for data in real.content.iter_any():
                    chunks.append(data)
                    protocol.feed(_chunk(data))
            # Recorded before the application can see the end of the body: once it has, it
            # may close the event loop, and this task with it.
            self._on_recorded(
                Response(status=real.status, headers={k.lower(): v for k, v in headers}, chunks=chunks)
            )
            if _has_body(real.method, real.status):
                protocol.feed(b"0\r\n\r\n")
        except (TimeoutError, aiohttp.ClientError, OSError) as error:
            if protocol.transport is not None:
                protocol.connection_lost(error)  # the application sees the payload cut short
        finally:
            real.release()
            await self._session.close()


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
    connector: BaseConnector, req: aiohttp.ClientRequest, content: bytes, timeout: Any
) -> tuple[aiohttp.ClientSession, aiohttp.ClientResponse]:
    """Send the request for real through a private session on the application's connector.

    Its headers are the ones the application's session computed (no defaults are added
    again); only the body framing is left to aiohttp, as the body is now plain bytes.
    """
    session = aiohttp.ClientSession(
        connector=connector, connector_owner=False, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
    )
    headers = [
        (k, v) for k, v in req.headers.items() if k.lower() not in ("content-length", "transfer-encoding")
    ]
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
    except BaseException:
        await session.close()
        raise
    return session, real


def install(handler: Handler) -> Uninstall:
    original = BaseConnector.connect

    async def connect(
        connector: BaseConnector, req: aiohttp.ClientRequest, *args: Any, **kwargs: Any
    ) -> Connection:
        if is_forwarding():
            return await original(connector, req, *args, **kwargs)
        content = await _body(req)
        request = Request(method=req.method, url=str(req.url), headers=_headers(req), content=content)
        decision = handler.handle(request)
        loop = asyncio.get_running_loop()
        if isinstance(decision, Response):
            protocol = _Protocol(loop, _stored_bytes(req.method, decision), None)
        elif decision is None:
            return await original(connector, req, *args, **kwargs)
        else:
            timeout = kwargs.get("timeout", args[1] if len(args) > 1 else None)
            session, real = await _send_real(connector, req, content, timeout)
            protocol = _Protocol(loop, None, _Live(session, real, decision))
        protocol.connection_made(_Transport())
        return _Connection(connector, req.connection_key, protocol, loop)

    BaseConnector.connect = connect  # type: ignore[method-assign, assignment]

    def uninstall() -> None:
        BaseConnector.connect = original  # type: ignore[method-assign]

    return uninstall
