"""Conversions shared by httpx2 and httpx, which have the same API under two names.

Each function takes the library module as its first argument, so the two interceptors
stay thin and no conversion logic is written twice. What a replay builds is in
:mod:`._httpx_replay`, what a recording reads in :mod:`._httpx_record`.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import Any, NamedTuple

from ..cassettes.models import LazyRequest, Request
from ..cassettes.playback import Breakage
from ._compat import HEADERS_ENCODING, HEADERS_LINES, URL_PARTS, content_decoder, set_content_decoder
from ._httpx_record import ASCII_SAFE, SharedDecoder, received_headers
from .pacing import Fail, PacedBody, describe
from .recording import Recording

__all__ = ["failures", "record_response", "stream_classes", "to_request"]


Line = tuple[bytes, bytes, bytes]
#: One copy of each header line (raw name, lower-case name, value) that kept requests share.
_LINES: dict[Line, Line] = {}
MAX_LINES = 4096


class _Kept(NamedTuple):
    """The header lines kept for the last request, in two parts: ``prefix``, all lines but the
    last, and ``endings``, a kept list (and its content-type) per last line seen after that
    prefix. httpx puts the content-length last, so the requests of one client differ there
    alone: one compare of the prefix finds the kept list, shared by every such request. Kept
    lists are never changed (the reader only decodes them)."""

    prefix: list[Line]
    endings: dict[Line, tuple[list[Line], str]]
    last: Line | None
    lines: list[Line]
    content_type: str


_last = _Kept([], {}, None, [], "")
#: Each URL's text by its parts (:data:`._compat.URL_PARTS`): one endpoint is called again and
#: again, and finding its text costs less than making it; kept requests share the one copy.
_URLS: dict[Any, str] = {}


def _url_text(url: Any) -> str:
    """``str(url)``, found by the URL's parts when the library keeps them in a tuple."""
    parts = getattr(url, URL_PARTS, None)
    try:
        return _URLS[parts] if isinstance(parts, tuple) else str(url)
    except KeyError:
        if len(_URLS) > MAX_LINES:
            _URLS.clear()
        text = _URLS[parts] = str(url)
        return text
    except TypeError:  # parts that cannot be looked up
        return str(url)


def to_request(request: Any) -> Request:
    """promptvcr's request from an httpx-family request whose body was already read.

    Its headers are decoded only if something reads them: a replayed request whose key is
    already known needs its content-type alone. A cassette keeps every request it served
    (``played``), so what it keeps is the library's header lines, each line shared with
    the earlier requests that sent the same one: keeping each request's own ~40 small
    objects alive costs the next requests their warm memory (issue 22).
    """
    headers = request.headers
    lines = getattr(headers, HEADERS_LINES, None)
    url = _url_text(request.url)
    if type(lines) is not list:  # not the httpx layout: keep the headers themselves
        return LazyRequest.of(request.method, url, headers, request.content, headers.get("content-type", ""))
    global _last
    kept = _last
    n = len(lines) - 1
    if n < 0:
        kept = _last = _Kept([], {}, None, [], "")
    elif lines[n] != kept.last or lines != kept.lines:  # not the very lines of the last request
        if n != len(kept.prefix) or lines[:n] != kept.prefix:  # a new set of lines
            if len(_LINES) > MAX_LINES:
                _LINES.clear()
            kept = _Kept(list(map(_LINES.setdefault, lines[:n], lines[:n])), {}, None, [], "")
        last = _LINES.setdefault(lines[n], lines[n])
        ending = kept.endings.get(last)
        if ending is None:
            if len(kept.endings) > MAX_LINES:
                kept.endings.clear()
            ending = kept.endings[last] = ([*kept.prefix, last], headers.get("content-type", ""))
        kept = _last = _Kept(kept.prefix, kept.endings, last, *ending)  # one assignment: for threads
    shared, content_type = kept.lines, kept.content_type
    return LazyRequest.of(
        request.method,
        url,
        shared,
        request.content,
        content_type,
        _reader(headers.__class__, getattr(headers, HEADERS_ENCODING, None)),
    )


@functools.cache
def _reader(headers_class: Any, encoding: str | None) -> Callable[[list[Any]], dict[str, str]]:
    """Decodes kept header lines exactly as the library's headers would (``items()``).

    Kept lines are shared by the requests that sent the same ones, and never changed: each
    list is decoded once, and each request reading it gets its own copy of that dict (writing
    a recorded cassette reads every request's headers: issue 22)."""
    decoded: dict[int, tuple[list[Any], dict[str, str]]] = {}

    def read(lines: list[Any]) -> dict[str, str]:
        known = decoded.get(id(lines))
        if known is not None and known[0] is lines:  # held there, so its id is its own
            return dict(known[1])
        headers = headers_class(encoding=encoding)
        setattr(headers, HEADERS_LINES, lines)
        items = decoded_items(headers, lines)
        if len(decoded) > MAX_LINES:
            decoded.clear()
        decoded[id(lines)] = (lines, items)
        return dict(items)

    return read


#: Each all-ASCII header line decoded (lower-case name, value): ASCII reads the same in each
#: encoding the library may pick, so the strings are shared by every request and response that
#: sends the line, and a line seen before costs one lookup (issue 22).
_ASCII_LINES: dict[tuple[bytes, bytes, bytes], tuple[str, str]] = {}


def decoded_items(headers: Any, lines: list[tuple[bytes, bytes, bytes]]) -> dict[str, str]:
    """``dict(headers.items())`` of the library's ``headers``, whose lines are ``lines``: names
    lower-cased, repeated names joined with ", ", all decoded as the library decodes them."""
    if getattr(headers, HEADERS_ENCODING, None) in ASCII_SAFE:
        decoded: dict[str, str] = {}
        known = _ASCII_LINES.get
        for line in lines:
            pair = known(line)
            if pair is None:
                try:
                    pair = (line[1].decode("ascii"), line[2].decode("ascii"))
                except UnicodeDecodeError:  # the library decides how the whole set reads
                    break
                if len(_ASCII_LINES) > MAX_LINES:
                    _ASCII_LINES.clear()
                _ASCII_LINES[line] = pair
            key, text = pair
            decoded[key] = f"{decoded[key]}, {text}" if key in decoded else text
        else:
            return decoded
    # Its ``items()`` looks the encoding up twice per line; here it is looked up once.
    encoding = headers.encoding
    items: dict[str, str] = {}
    for _, name, value in lines:
        key, text = name.decode(encoding), value.decode(encoding)
        items[key] = f"{items[key]}, {text}" if key in items else text
    return items


def failures(module: ModuleType, request: Any) -> Fail:
    """The library's own exceptions for injected breakages (see :mod:`.playback`)."""
    errors = {
        "connect_timeout": module.ConnectTimeout,
        "read_timeout": module.ReadTimeout,
        "disconnect": module.RemoteProtocolError,  # what httpx raises on an incomplete chunked read
    }

    def fail(kind: Breakage) -> BaseException:
        error: BaseException = errors[kind](describe(kind), request=request)
        return error

    return fail


@functools.cache
def stream_classes(module: ModuleType) -> tuple[type, type, type]:
    class ReplayStream(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc, name-defined]
        """Hands the client the recorded chunks, one SSE event per chunk."""

        def __init__(self, chunks: list[bytes]) -> None:
            self._chunks = chunks

        def __iter__(self) -> Iterator[bytes]:
            yield from self._chunks

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in self._chunks:
                yield chunk

    class RecordingStream(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc, name-defined]
        """The transport's stream, handed on to the library chunk by chunk as it arrives. A
        body without a content-encoding is recorded chunk by chunk here; an encoded one by
        the ``decoder`` the library decodes it with (:class:`._httpx_record.SharedDecoder`)."""

        def __init__(self, stream: Any, recording: Recording, decoder: SharedDecoder | None) -> None:
            self._stream = stream
            self._recording = recording
            self._decoder = decoder
            # One iterator over the transport's stream, resumed when a closed response reads its rest.
            self._sync: Iterator[bytes] | None = None
            self._async: AsyncIterator[bytes] | None = None

        def _take(self, raw: bytes) -> None:
            if self._decoder is not None:
                self._decoder.passed(raw)
            elif raw:  # the library leaves empty chunks out
                self._recording.add(raw)

        def _end(self) -> None:
            """The transport's stream has ended: an encoded body's last bytes are decoded (the
            library has decoded every chunk it was handed by now, or reads raw bytes)."""
            if self._decoder is not None:
                self._decoder.finish()
            self._recording.complete()

        def __iter__(self) -> Iterator[bytes]:
            if self._sync is None:
                self._sync = iter(self._stream)
            try:
                for raw in self._sync:
                    self._take(raw)
                    yield raw
            except Exception as error:
                self._recording.fail(error)
                raise
            self._end()

        async def __aiter__(self) -> AsyncIterator[bytes]:
            if self._async is None:
                self._async = self._stream.__aiter__()
            try:
                async for raw in self._async:
                    self._take(raw)
                    yield raw
            except Exception as error:
                self._recording.fail(error)
                raise
            self._end()

        def _read_rest(self) -> bool:
            """Closed before the end of the body: whether to read the rest (see
            :meth:`Recording.reads_rest`); an encoded body's raw chunks the library did not
            decode are decoded first, in case it is recorded as it is."""
            if self._decoder is not None:
                self._decoder.catch_up()
            return self._recording.reads_rest()

        def close(self) -> None:
            try:
                if self._read_rest():
                    for _ in self:
                        pass
            finally:
                self._stream.close()
            self._recording.hand_over()

        async def aclose(self) -> None:
            try:
                if self._read_rest():
                    async for _ in self:
                        pass
            finally:
                await self._stream.aclose()
            self._recording.hand_over()

    class PacedStream(module.SyncByteStream, module.AsyncByteStream):  # type: ignore[misc, name-defined]
        """Serves a response whose ``playback`` is set: delays and breakages (see :mod:`.playback`)."""

        def __init__(self, body: PacedBody) -> None:
            self._body = body

        def __iter__(self) -> Iterator[bytes]:
            yield from self._body

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._body:
                yield chunk

    return ReplayStream, RecordingStream, PacedStream


def record_response(module: ModuleType, real: Any, recording: Recording) -> Any:
    """``real``, the library's response, recorded as the application reads it: its stream is
    replaced by a :class:`RecordingStream` over it, and nothing else changes, so the
    application gets what it gets without a cassette (headers, encoded bytes and the library's
    decoding of them). A response the transport read already (built from bytes) is recorded
    at once.

    ``recording`` was created when the request was sent; its headers arrive now."""
    lines = getattr(real.headers, HEADERS_LINES, None)
    if type(lines) is list:  # the header lines as received, read in one pass
        kept = received_headers(real.headers, lines)
        if kept is not None:
            recording.headers_kept(real.status_code, kept[0], kept[1])
            encoded = kept[2]
        else:
            received = decoded_items(real.headers, lines)  # lower-case names, each once
            encoded = "content-encoding" in received
            recording.headers_decoded(real.status_code, received)
    else:
        encoded = "content-encoding" in real.headers
        recording.headers_arrived(real.status_code, real.headers.items())
    if real.is_stream_consumed:
        _record_read(real, recording)
        return real
    recording.started()
    decoder = None
    if encoded:
        decoder = SharedDecoder(content_decoder(real), recording)
        set_content_decoder(real, decoder)
    real.stream = stream_classes(module)[1](real.stream, recording, decoder)
    return real


def _record_read(real: Any, recording: Recording) -> None:
    """Record a response whose body the transport read already: its decoded content."""
    try:
        content = real.content
    except Exception as error:  # consumed but never read: the application cannot read it either
        recording.fail(error)
        return
    if content:
        recording.add(content)
    recording.complete()
    recording.hand_over()
