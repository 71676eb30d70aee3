"""What replaying a stored response to an httpx-family client builds: the library's own
``Response``, its headers made as its header lines (issue 22).

Shared by httpx2 and httpx (see :mod:`._httpx_family`); the library's private names come
from :mod:`._compat`.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ..cassettes.models import Response
from ..cassettes.spool import body_size
from ._compat import headers_with_lines
from ._httpx_family import MAX_LINES, Line, failures, stream_classes
from .pacing import PacedBody

__all__ = ["replay_response"]


def replay_response(module: ModuleType, response: Response, request: Any = None) -> Any:
    """An httpx-family response that serves a stored one.

    A response with a ``playback`` is paced and broken as it says; its transport must
    first have called ``wait_for_headers`` (see :mod:`.playback`).
    """
    headers = response.wire_headers
    if type(headers) is not module.Headers:
        headers = _wire_headers(module, response)
    if response.playback is None:
        stream = stream_classes(module)[0](response.chunks)
    else:
        paced = PacedBody(response.chunks, response.playback, failures(module, request))
        stream = stream_classes(module)[2](paced)
    extensions = {"http_version": b"HTTP/1.1"}
    return module.Response(response.status, headers=headers, stream=stream, extensions=extensions)


def _wire_headers(module: ModuleType, response: Response) -> Any:
    """The response's headers as the library's own ``Headers``, with the content-length of its
    body unless it is a stream.

    A response given a ``Headers`` copies its lines in one list copy instead of encoding and
    lower-casing every header again. Kept headers are never changed (each response copies
    them), so they are shared (issue 22):

    - by what they are made from (:func:`_shared`): a cassette keeps few headers
      (``content-type`` alone, mostly), so the responses of a cassette read at random, most
      of them served once, find theirs made for another;
    - on the stored response itself from its second serve on, found then without a lookup (a
      response served again is likely served many times; keeping them on one served once
      would only cost the memory the next requests need warm).
    """
    chunks = response.chunks
    size = body_size(chunks)  # a body file's from its reference, not read
    if len(response.headers) > _FEW:  # more than a cassette keeps by default: made each time
        headers = _made(module, response, size)
    else:
        headers = _shared(module, response, size)
    response.wire_headers = _SERVED_ONCE if response.wire_headers is None else headers
    return headers


#: Stored headers of at most this many are shared between responses (:func:`_shared`). A
#: longer set holds request ids (kept by default since issue 41, see
#: ``credentials.headers.RESPONSE_HEADERS``), which no other response has.
_FEW = 4
#: Headers made, by (library, the stored headers' items, the body's size in bytes).
_MADE: dict[tuple[ModuleType, tuple[tuple[str, str], ...], int], Any] = {}
#: The sets of stored headers (items) served so far.
_SEEN: set[tuple[tuple[str, str], ...]] = set()


def _shared(module: ModuleType, response: Response, size: int) -> Any:
    """The headers made for an earlier response with the same stored headers and body size,
    else made now (:func:`_made`) and kept when its stored headers were served before. A set
    seen for the first time may hold a value that differs in every response (a ``location``):
    keeping a ``Headers`` for each of those, which no response asks for again, cost 0.5 us more
    per response in garbage collections than keeping only sets served before (measured)."""
    items = tuple(response.headers.items())
    key = (module, items, size)
    headers = _MADE.get(key)
    if headers is not None:
        return headers
    headers = _made(module, response, size)
    if items in _SEEN:
        if len(_MADE) > MAX_LINES:
            _MADE.clear()
        _MADE[key] = headers
    else:
        if len(_SEEN) > MAX_LINES:
            _SEEN.clear()
        _SEEN.add(items)
    return headers


def _made(module: ModuleType, response: Response, size: int) -> Any:
    """The library's ``Headers`` for ``response``, made as its header lines at a third of the
    library's cost, each line kept for the next response (a provider sends most headers the
    same every time)."""
    # A stored content-length is a HEAD answer's (the length of the body it did not send).
    length = None if response.is_event_stream or "content-length" in response.headers else str(size)
    headers = None
    try:  # the library's own layout, as it would build it from text: ASCII only ...
        lines = _ascii_lines(response.headers)
    except UnicodeEncodeError:  # ... so another value goes as the UTF-8 it decodes back
        pass
    else:
        if length is not None:
            lines.append((b"content-length", b"content-length", length.encode()))
        headers = headers_with_lines(module, lines)
    if headers is None:
        pairs = [*response.headers.items(), *([] if length is None else [("content-length", length)])]
        headers = module.Headers([_utf8(name, value) for name, value in pairs])
    return headers


#: What a stored response served once holds in place of its headers (see :func:`_wire_headers`).
_SERVED_ONCE = object()


#: Each header (name, value) as the library's header lines hold it, ASCII bytes.
_ENCODED: dict[tuple[str, str], Line] = {}


def _ascii_lines(headers: dict[str, str]) -> list[Line]:
    """What ``Headers(headers)`` holds: (name, lower-cased name, value), encoded as ASCII."""
    lines = []
    for pair in headers.items():
        line = _ENCODED.get(pair)
        if line is None:
            name, value = pair
            raw = name.encode("ascii")
            line = (raw, raw.lower(), value.encode("ascii"))
            if len(_ENCODED) > MAX_LINES:
                _ENCODED.clear()
            _ENCODED[pair] = line
        lines.append(line)
    return lines


def _utf8(name: str, value: str) -> tuple[str, str] | tuple[bytes, bytes]:
    return (name, value) if name.isascii() and value.isascii() else (name.encode(), value.encode())
