"""A client's request to the server, as the request the SDK would have sent upstream.

The URL is the upstream's (``<upstream URL>/<path>?<query>``) and ``host`` names the
upstream, so the key and the recorded request are those of an in-process recording.
Headers that only concern the hop between the client and the server are dropped.
"""

from __future__ import annotations

from aiohttp import web

from ..cassettes.models import Request

__all__ = ["HOP_HEADERS", "to_request", "upstream_headers"]

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


async def to_request(incoming: web.Request, upstream: str, rest: str) -> Request:
    """``incoming`` (read whole) addressed to ``upstream`` (a URL) at ``rest`` (its path)."""
    url = f"{upstream}/{rest}" if rest else upstream
    if incoming.query_string:
        url = f"{url}?{incoming.query_string}"
    host = upstream.split("://", 1)[1].split("/", 1)[0]
    headers: dict[str, str] = {}
    for name, value in incoming.headers.items():
        lower = name.lower()
        if lower not in HOP_HEADERS and not lower.startswith("x-promptvcr-"):
            headers[lower] = value if lower not in headers else f"{headers[lower]}, {value}"
    headers["host"] = host
    content = await incoming.read() if incoming.can_read_body else b""
    return Request(method=incoming.method, url=url, headers=headers, content=content)


def upstream_headers(request: Request) -> dict[str, str]:
    """The headers to send upstream: the request's, less those the client library writes."""
    return {name: value for name, value in request.headers.items() if name not in _SENDER_HEADERS}
