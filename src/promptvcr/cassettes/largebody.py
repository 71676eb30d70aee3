"""Bodies too large to hold twice: stored from the received chunks, piece by piece.

A recorded response is kept as the chunks the client received, in memory or, past
:data:`LARGE_BODY_BYTES`, in a temporary file (:mod:`.spool`). The ordinary stored form
joins them, decodes them and keeps the text, so saving a 100 MB download held it three or
four times over. A body above :data:`LARGE_BODY_BYTES` that is not JSON (a file, a long
plain-text answer, audio, an event stream) is kept as a :class:`ChunkedBody` over the same
chunks instead, and the cassette writers turn it into text one slice at a time. It is
written as a quoted string (``text`` or ``base64``), so a cassette holding one reads back
like any other and replays the same bytes; only writing is different. An event stream that
large loses its one-event-per-item layout (and replays as one chunk): nobody reviews
thousands of events in a diff.

JSON bodies keep the ordinary path at any size: they are parsed so that credentials in
their fields can be removed and diffs read, and that needs the whole document.
"""

from __future__ import annotations

import base64
import codecs
import re
from collections.abc import Iterator, Sequence

from .spool import body_size, byte_slices

__all__ = [
    "BINARY_CONTROL",
    "LARGE_BODY_BYTES",
    "ChunkedBase64",
    "ChunkedBody",
    "ChunkedText",
    "chunked_body",
]

#: Above this a body being recorded moves to a temporary file (:mod:`.spool`) and a non-JSON
#: body is stored from its chunks. One threshold for both, so that a body spooled is never
#: joined to be stored. Nobody reviews a diff that size, so losing the ``|`` block layout (or
#: a stream's events) there costs nothing; a few megabytes held per recording in flight cost
#: nothing either, while most answers (far smaller) never touch the disk.
LARGE_BODY_BYTES = 4 * 1024 * 1024
#: How much is decoded or encoded at a time while writing.
_SLICE = 1024 * 1024
#: Characters that make "text" binary: a body holding them is stored as base64.
BINARY_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ChunkedBody:
    """The stored string of a large body, produced by :meth:`pieces` without joining."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = chunks

    def pieces(self) -> Iterator[str]:
        raise NotImplementedError

    def __str__(self) -> str:
        """The whole string: for the rare reader that needs it (it holds the body again)."""
        return "".join(self.pieces())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkedBody):
            return type(self) is type(other) and str(self) == str(other)
        return isinstance(other, str) and str(self) == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({body_size(self.chunks):,} bytes)"


class ChunkedText(ChunkedBody):
    """UTF-8 text, decoded a slice at a time (a character split between chunks is kept whole)."""

    __slots__ = ()

    def pieces(self) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")()
        for view in byte_slices(self.chunks, _SLICE):
            if piece := decoder.decode(view):
                yield piece
        if tail := decoder.decode(b"", final=True):
            yield tail


class ChunkedBase64(ChunkedBody):
    """Base64 of the bytes, encoded in slices cut at multiples of three bytes so they join."""

    __slots__ = ()

    def pieces(self) -> Iterator[str]:
        carry = b""
        for view in byte_slices(self.chunks, _SLICE):
            data = carry + view
            cut = len(data) - len(data) % 3
            if cut:
                yield base64.b64encode(data[:cut]).decode("ascii")
            carry = data[cut:]
        if carry:
            yield base64.b64encode(carry).decode("ascii")


#: Every byte but those of :data:`BINARY_CONTROL` (all ASCII, so in UTF-8 never part of
#: another character): deleting them leaves only the control bytes, found in C.
_NOT_CONTROL = bytes(b for b in range(256) if not BINARY_CONTROL.match(chr(b)))


def _is_text(chunks: Sequence[bytes]) -> bool:
    """Whether the body is UTF-8 without binary control characters, read a slice at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for view in byte_slices(chunks, _SLICE):
            piece = bytes(view)
            if piece.translate(None, _NOT_CONTROL):
                return False
            decoder.decode(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def chunked_body(chunks: Sequence[bytes]) -> dict[str, ChunkedBody]:
    """The stored form of a large non-JSON body: ``text`` when it is UTF-8 text, else ``base64``."""
    return {"text": ChunkedText(chunks)} if _is_text(chunks) else {"base64": ChunkedBase64(chunks)}
