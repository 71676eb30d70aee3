"""A client's request to the server, as the request the SDK would have sent upstream.

The URL is the upstream's (``<upstream URL>/<path>?<query>``; ``ws``/``wss`` for a websocket
handshake, as the SDK's own URL) and ``host`` names the upstream, so the key and the recorded
request are those of an in-process recording. Headers that only concern the hop between the
client and the server are dropped; ``x-promptvcr-upstream`` says which upstream it went to
(see :mod:`.served`). The body is kept as received: a gzip body stays gzip, with its
``content-encoding``, for the upstream and the key alike.

A body over :data:`~promptvcr.cassettes.largebody.LARGE_BODY_BYTES` goes to a spool as it
arrives, as an answer that large does (issue 54: a 300 MB request held 2 GB). A JSON one is
then keyed and recorded as its document with a stand-in for each long string
(:mod:`promptvcr.cassettes.largejson`), read from the spool a slice at a time; the upstream
gets the spool's bytes. Any other large body is read back whole, as before.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

from aiohttp import web

from ..cassettes.bodyfiles import SLICE
from ..cassettes.largebody import LARGE_BODY_BYTES
from ..cassettes.largejson import skeleton
from ..cassettes.models import Request
from ..cassettes.spool import SpooledChunks, byte_slices
from ..matching.parts import is_json_body
from .served import UPSTREAM_HEADER

__all__ = [
    "HOP_HEADERS",
    "is_websocket",
    "read_body",
    "sent_body",
    "to_request",
    "upstream_headers",
    "with_large_body",
]

#: Headers of the hop, not of the request: never keyed, recorded or sent upstream as given.
HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "expect",
    }
)
#: Left to the HTTP client that sends the request upstream.
_SENDER_HEADERS = frozenset({"host", "content-length"})


def is_websocket(incoming: web.Request) -> bool:
    return incoming.method == "GET" and incoming.headers.get("upgrade", "").lower() == "websocket"


async def read_body(incoming: web.Request, timeout: float) -> bytes | SpooledChunks:
    """The whole body, as received: in memory, or past :data:`LARGE_BODY_BYTES` in a spool;
    ``TimeoutError`` when it takes longer than ``timeout`` s."""
    if not incoming.can_read_body:
        return b""
    return await asyncio.wait_for(_received(incoming), timeout)


async def _received(incoming: web.Request) -> bytes | SpooledChunks:
    held: list[bytes] = []
    size = 0
    spool: SpooledChunks | None = None
    async for chunk in incoming.content.iter_chunked(SLICE):
        if spool is not None:
            spool.append(chunk)
            continue
        held.append(chunk)
        size += len(chunk)
        if size > LARGE_BODY_BYTES:  # from now on on disk, a slice a chunk
            spool, held = SpooledChunks(held), []
    return b"".join(held) if spool is None else spool


async def with_large_body(request: Request, spool: SpooledChunks) -> Request:
    """``request`` holding a large body ``spool`` the way it is keyed: a JSON document with its
    long strings by stand-in, or else the whole body. Read in a thread (a few seconds for
    hundreds of megabytes): the server answers the others meanwhile."""

    def keyed() -> Request:
        made = skeleton(spool)
        if made is not None and made[1]:
            document = dataclasses.replace(request, content=made[0], strings=made[1])
            if is_json_body(document):
                return document
        return dataclasses.replace(request, content=b"".join(spool))

    return await asyncio.to_thread(keyed)


async def sent_body(spool: SpooledChunks) -> AsyncIterator[bytes | memoryview]:
    """A spooled body as sent upstream, a slice at a time."""
    for piece in byte_slices(spool, SLICE):
        yield piece


def to_request(
    incoming: web.Request,
    upstream: str,
    upstream_name: str,
    rest: str,
    content: bytes,
    *,
    websocket: bool = False,
) -> Request:
    """``incoming`` with body ``content``, addressed to upstream ``upstream_name`` (``upstream``, a URL)
    at ``rest`` (its path)."""
    url = f"{upstream}/{rest}" if rest else upstream
    if websocket:
        url = "ws" + url[4:] if url.startswith("http") else url
    if incoming.query_string:
        url = f"{url}?{incoming.query_string}"
    host = upstream.split("://", 1)[1].split("/", 1)[0]
    headers: dict[str, str] = {}
    for name, value in incoming.headers.items():
        lower = name.lower()
        if lower not in HOP_HEADERS and not lower.startswith("x-promptvcr-"):
            headers[lower] = value if lower not in headers else f"{headers[lower]}, {value}"
    headers["host"] = host
    headers[UPSTREAM_HEADER] = f"{upstream_name}={upstream}"
    return Request(method=incoming.method, url=url, headers=headers, content=content)


def upstream_headers(request: Request) -> dict[str, str]:
    """The headers to send upstream: the request's, less those the client library writes."""
    return {
        name: value
        for name, value in request.headers.items()
        if name not in _SENDER_HEADERS and not name.startswith("x-promptvcr-")
    }
