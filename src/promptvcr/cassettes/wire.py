"""What HTTP/1.1 puts on the wire around a body: the tables every part of promptvcr shares.

promptvcr stores and hands on decoded bodies, so the headers that describe the encoded
bytes on the wire are dropped when a response is recorded or imported, and written anew
(or left to the HTTP library) when one is served.
"""

from __future__ import annotations

from http import HTTPStatus

__all__ = ["CONNECTION_HEADERS", "FRAMING_HEADERS", "WIRE_HEADERS", "reason_phrase"]

#: How the body is framed on the connection: its length, or chunks.
FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding"})

#: Headers that describe the bytes on the wire, not the decoded body promptvcr stores and
#: hands on: its compression and its framing.
WIRE_HEADERS = FRAMING_HEADERS | {"content-encoding"}

#: :data:`WIRE_HEADERS` and ``connection``, for an interceptor that writes the HTTP/1.1
#: bytes of the response itself (aiohttp's): the connection they travel on is its own too.
CONNECTION_HEADERS = WIRE_HEADERS | {"connection"}

_REASONS = {status.value: status.phrase for status in HTTPStatus}


def reason_phrase(status: int, unknown: str = "") -> str:
    """The standard reason phrase of ``status`` (``"Not Found"``), or ``unknown``."""
    return _REASONS.get(status, unknown)
