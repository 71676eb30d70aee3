"""What recording an httpx-family response reads of it, once per recorded request: its
header lines in one pass, and each chunk of its body, decoded, as it passes on to the library
(issue 22).

Shared by httpx2 and httpx (see :mod:`._httpx_family`); the library's private names come
from :mod:`._compat`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..cassettes.wire import WIRE_HEADERS
from ._compat import HEADERS_ENCODING
from .recording import Recording

__all__ = ["ASCII_SAFE", "SharedDecoder", "received_headers"]

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


class SharedDecoder:
    """The library's decoder of a response being recorded (``_compat.content_decoder``), put
    back on the response in its place (``_compat.set_content_decoder``): what it decodes for
    the application also goes to the :class:`~.recording.Recording`, so the body is decoded
    once, as without a cassette (a second decoder cost ~10 us per gzip answer, issue 22).

    Raw chunks the library was handed and did not decode (an application reading the raw
    bytes, the rest of a body read as it closes) are decoded here when the body ends
    (:meth:`finish`) or the response closes before (:meth:`catch_up`). What the decoder holds
    at the end of the body is flushed here too, before the recording is handed over, and kept
    for the library's own ``flush()``, which comes after it closes the response."""

    __slots__ = ("_fed", "_flushed", "_gives_bytes", "_inner", "_passed", "_passed_bytes", "_recording")

    def __init__(self, inner: Any, recording: Recording) -> None:
        self._inner = inner
        self._recording = recording
        self._passed: list[bytes] = []  # handed on, not all fed to decode() yet
        self._passed_bytes = 0
        self._fed = 0  # bytes fed to decode()
        self._flushed: list[bytes] | None = None
        self._gives_bytes = False

    def passed(self, raw: bytes) -> None:
        """``raw`` was handed on to the library."""
        if raw:
            self._passed.append(raw)
            self._passed_bytes += len(raw)

    def decode(self, data: bytes) -> Any:
        self._fed += len(data)
        if self._fed >= self._passed_bytes:
            self._passed.clear()
        try:
            decoded = self._inner.decode(data)
            pieces = _non_empty(decoded)
        except Exception as error:  # the library's DecodingError: the application gets it too
            self._recording.fail(error)
            raise
        self._keep(pieces)
        return decoded if isinstance(decoded, bytes) else pieces

    def flush(self) -> Any:
        """What the decoder held at the end of the body, once (flushed by :meth:`finish` first
        when the response closed meanwhile)."""
        if self._flushed is None:
            self._flush()
        pieces, self._flushed = self._flushed or [], []
        return b"".join(pieces) if self._gives_bytes else pieces

    def _flush(self) -> None:
        try:
            held = self._inner.flush()
            self._gives_bytes = isinstance(held, bytes)  # httpx; httpx2 gives pieces
            self._flushed = _non_empty(held)
        except Exception as error:
            self._flushed = []
            self._recording.fail(error)
            raise
        self._keep(self._flushed)

    def _keep(self, pieces: list[bytes]) -> None:
        if not self._recording.ended:
            for piece in pieces:
                self._recording.add(piece)

    def catch_up(self) -> None:
        """Decode the raw chunks the library was handed and did not decode, for the recording
        alone; a failure ends the recording and is not raised (the application read no
        decoded bytes of them)."""
        behind = self._passed_bytes - self._fed
        if behind > 0 and not self._recording.ended:
            with contextlib.suppress(Exception):
                self.decode(b"".join(self._passed)[-behind:])

    def finish(self) -> None:
        """The body ended: decode what the library did not, then flush."""
        self.catch_up()
        if self._flushed is None and not self._recording.ended:
            with contextlib.suppress(Exception):
                self._flush()


def _non_empty(decoded: Any) -> list[bytes]:
    """A decoder's answer, bytes (httpx) or several (httpx2), as its non-empty chunks."""
    if isinstance(decoded, bytes):
        return [decoded] if decoded else []
    return [chunk for chunk in decoded if chunk]
