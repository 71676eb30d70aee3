"""What recording an httpx-family response reads of it, once per recorded request: its
header lines in one pass, and its body from the transport's stream (issue 22).

Shared by httpx2 and httpx (see :mod:`._httpx_family`); the library's private names come
from :mod:`._compat`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from typing import Any

from ..cassettes.wire import WIRE_HEADERS
from ._compat import HEADERS_ENCODING

__all__ = ["ASCII_SAFE", "adecoded", "decoded", "received_headers"]

#: The encodings the library picks by itself (or is told to): ASCII lines read the same in each.
ASCII_SAFE = frozenset({None, "ascii", "utf-8", "iso-8859-1"})


def received_headers(
    headers: Any, lines: list[tuple[bytes, bytes, bytes]]
) -> tuple[dict[str, str], str | None, bool] | None:
    """What a recording keeps of a response's header ``lines`` (the library's ``headers``):
    the headers but the wire ones (names lower-cased, a repeated name's values joined with
    ", "), the content-length as the library's ``items()`` reads it, and whether a
    content-encoding was sent; in one pass over lines all ASCII, as most are. ``None`` for
    any other line or encoding: the library then decodes them (``_httpx_family.decoded_items``).

    Unlike a request's lines, a response's are not looked up in the shared table of decoded
    lines: its date, request ids and cookies differ in every response, and would only push
    the lines requests share out of it."""
    if getattr(headers, HEADERS_ENCODING, None) not in ASCII_SAFE:
        return None
    kept: dict[str, str] = {}
    length: str | None = None
    encoded = False
    wire = WIRE_HEADERS
    for _, lower, value in lines:
        try:
            name, text = lower.decode("ascii"), value.decode("ascii")
        except UnicodeDecodeError:
            return None
        if name in wire:
            if name == "content-length":
                length = text if length is None else f"{length}, {text}"
            elif name == "content-encoding":
                encoded = True
            continue
        kept[name] = f"{kept[name]}, {text}" if name in kept else text
    return kept, length, encoded


def _decoded_pieces(raw: bytes, decoder: Any) -> Iterable[bytes]:
    """One raw chunk as ``iter_bytes`` gives it: decoded by the library's ``decoder`` (``None``:
    no content-encoding), empty pieces left out."""
    if not raw:
        return ()
    return (raw,) if decoder is None else _non_empty(decoder.decode(raw))


def _flushed(decoder: Any) -> Iterable[bytes]:
    """What the library's ``decoder`` still holds once the body has ended."""
    return () if decoder is None else _non_empty(decoder.flush())


def _non_empty(decoded: Any) -> list[bytes]:
    """A decoder's answer, bytes (httpx) or several (httpx2), as its non-empty chunks."""
    if isinstance(decoded, bytes):
        return [decoded] if decoded else []
    return [chunk for chunk in decoded if chunk]


def decoded(real: Any, decoder: Any) -> Iterator[bytes]:
    """``real.iter_bytes()`` read from the transport's stream itself: the same chunks (the
    library's ``decoder`` for its content-encoding, ``None`` for none; empty chunks left out),
    without the ``iter_bytes`` and ``iter_raw`` generators, their chunkers and their two
    exception-mapping contexts, which do nothing for a response no request is set on yet (the
    client maps errors in the response it returns). About 5 us per recorded request (issue 22)."""
    real.is_stream_consumed = True
    try:
        for raw in real.stream:
            yield from _decoded_pieces(raw, decoder)
        yield from _flushed(decoder)
    finally:
        real.close()


async def adecoded(real: Any, decoder: Any) -> AsyncIterator[bytes]:
    """:func:`decoded` for an async stream, as ``aiter_bytes`` reads it."""
    real.is_stream_consumed = True
    stream = real.stream.__aiter__()
    try:
        async for raw in stream:
            for chunk in _decoded_pieces(raw, decoder):
                yield chunk
        for chunk in _flushed(decoder):
            yield chunk
    finally:
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()
        await real.aclose()
