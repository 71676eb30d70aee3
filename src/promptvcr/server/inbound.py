"""A client's request to the server, as the request the SDK would have sent upstream.

The URL is the upstream's (``<upstream URL>/<path>?<query>``; ``ws``/``wss`` for a websocket
handshake, as the SDK's own URL) and ``host`` names the upstream, so the key and the recorded
request are those of an in-process recording. Headers that only concern the hop between the
client and the server are dropped; ``x-promptvcr-upstream`` says which upstream it went to
(see :mod:`.served`). The body is kept as received: a gzip body stays gzip, with its
``content-encoding``, for the upstream and the key alike.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from ..cassettes.models import Request
from .served import UPSTREAM_HEADER

__all__ = ["HOP_HEADERS", "is_websocket", "read_body", "to_request", "upstream_headers"]

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


async def read_body(incoming: web.Request, timeout: float) -> bytes:
    """The whole body, as received; ``TimeoutError`` when it takes longer than ``timeout`` s."""
    if not incoming.can_read_body:
        return b""
    return await asyncio.wait_for(incoming.read(), timeout)


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
