"""Base64 inside a longer text or a binary body: each run worth decoding, aligned and decoded.

A string that is base64 as a whole was decoded since issue 41. A key also hides in base64
that is only part of something: a ``data:application/json;base64,...`` URL, a blob in a
markdown answer, ``Authorization: Basic ...`` quoted in an error, a JWT's segment, a string
field of a protobuf message or of any binary frame, a payload a stream sends in pieces.

A *run* is a stretch of at least :data:`MIN_RUN` characters of either base64 alphabet. Its
edges are not always the payload's: a path (``/v1/share/``), a JSON escape (``\\n``) or a
protobuf length byte (80 is ``P``) runs into it, so the starts that drop up to three
characters are tried, and one stray character at its end is dropped. Lines of base64 wrapped
at one width (``base64``'s 76 characters, PEM's 64) are one run. A run is decoded for a
search only when its payload means something: text, a compressed payload, or binary that is
not a picture or a sound and holds runs of its own (a frame in a frame). Hashes, ids and
images decode to noise and are left alone; most runs cost a decode of a few dozen characters.

Runs are found with byte operations written in C (a translation to two letters, then
``find``), not with a regex over every position: the record path checks every answer's text
this way (1 MB of prose in about a millisecond).
"""

from __future__ import annotations

import binascii
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .compressed import decompressed

__all__ = [
    "MIN_RUN",
    "Decoded",
    "decode_run",
    "is_binary",
    "is_media",
    "is_text",
    "meaningful",
    "payloads",
    "runs",
]

#: Shortest run decoded: the base64 of the shortest key shape (an AWS access key id, 20
#: characters) is 28 characters; a few are lost to an uncertain start.
MIN_RUN = 24

_STANDARD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TABLE = bytearray(b" " * 256)
for _byte in _STANDARD + b"+/-_":
    _TABLE[_byte] = ord("a")
_TABLE[ord("=")] = ord("=")
_CLASSES = bytes(_TABLE)
_LONG = b"a" * MIN_RUN
_TO_STANDARD = bytes.maketrans(b"-_", b"+/")
_PADDING = (b"", b"=", b"==", b"===")
#: The first byte of a compressed payload (:func:`.compressed.decompressed`: gzip, zlib, zstd).
_COMPRESSED_FIRST = (b"\x1f", b"\x78", b"\x28")
#: The rest of a run in the translated bytes: its characters, then at most two ``=``.
_REST = re.compile(rb"a*={0,2}")

#: Longest run whose other starts are tried: stray characters sit before a field or a path
#: segment; a longer run is a whole string or body (a sound, a picture), aligned at its start.
_SHIFTED = 64 * 1024

#: Text: printable ASCII and the three spacing controls; more than a fifth of anything else
#: in the first bytes of a payload makes it binary (or UTF-8 text of another script, below).
_PRINTABLE = bytes(range(32, 127)) + b"\t\n\r"
_HEAD = 256

#: Formats whose bytes are compressed media: they hold no text, and searching them for runs
#: would cost a pass over every picture an answer holds.
_MEDIA = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"ID3", b"OggS", b"fLaC", b"\x1aE\xdf\xa3")


def runs(data: bytes) -> Iterator[bytes]:
    """Each run in ``data`` (see the module), with its ``=`` padding; a run mixing both
    alphabets (``/v1/files/<url-safe id>``) as its pieces of one alphabet too."""
    classes = data.translate(_CLASSES)
    position = 0
    while (start := classes.find(_LONG, position)) >= 0:
        end = _REST.match(classes, start + MIN_RUN).end()  # type: ignore[union-attr]
        run = data[start:end]
        if data[end : end + 1] in (b"\n", b"\r") and (end - start) % 4 == 0 and data[end - 1] != 61:
            lines, end = _wrapped(data, classes, start, end)
            run = b"".join(lines)
            if len(lines) > 1:  # each line too: the next may be a word of the text after the block
                yield from (line for line in lines if len(line) >= MIN_RUN)
        yield run
        if (b"+" in run or b"/" in run) and (b"-" in run or b"_" in run):
            yield from _pieces(run)
        position = end


def _wrapped(data: bytes, classes: bytes, start: int, end: int) -> tuple[list[bytes], int]:
    """The lines of base64 wrapped at a fixed width (``base64`` writes 76 characters a line, PEM
    64) from the run ``data[start:end]`` on, and where they end: a key cut by a line break is
    whole only once they are joined."""
    width, lines = end - start, [data[start:end]]
    while (eol := 2 if data[end : end + 2] == b"\r\n" else int(data[end : end + 1] == b"\n")) > 0:
        stop = _REST.match(classes, end + eol).end()  # type: ignore[union-attr]
        line = data[end + eol : stop]
        if not line or len(line) > width:
            break
        lines.append(line)
        end = stop
        if len(line) < width or line.endswith(b"="):
            break
    return lines, end


def _pieces(run: bytes) -> Iterator[bytes]:
    """The long pieces of a run that mixes both alphabets: cut at ``+`` and ``/`` (URL-safe
    pieces, a URL's path segments), and cut at ``-`` and ``_`` (standard ones)."""
    for cuts in (b"+/", b"-_"):
        text = run.replace(cuts[:1], b" ").replace(cuts[1:], b" ")
        yield from (piece for piece in text.split() if len(piece) >= MIN_RUN)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A run's payload: ``run[start:end]`` is the base64 (the rest are stray characters at its
    edges), ``content`` its bytes, ``inflated`` those decompressed when they are compressed."""

    start: int
    end: int
    urlsafe: bool
    content: bytes
    inflated: bytes | None

    @property
    def payload(self) -> bytes:
        return self.inflated if self.inflated is not None else self.content


def decode_run(run: str | bytes, *, edges: bool = False) -> Decoded | None:
    """The first alignment of ``run`` whose payload is :func:`meaningful`, or ``None``. Written
    for speed: the record path decodes the runs of every answer (an id is one), most to noise.
    ``edges``: the run lies in binary content, where a ``-`` or ``_`` at its edges is likelier a
    stray byte (a length, a tag) than the URL-safe alphabet."""
    raw = run.encode("ascii") if isinstance(run, str) else run
    body = raw.rstrip(b"=")
    urlsafe = b"-" in body or b"_" in body
    if edges and urlsafe and b"-" not in body[3:-1] and b"_" not in body[3:-1] and len(body) > 8:
        # "-" or "_" at an edge only: a stray byte (a length, a tag) beside standard base64
        lead = max(body.rfind(b"-", 0, 3), body.rfind(b"_", 0, 3)) + 1
        cut = len(body) - 1 if body[-1:] in (b"-", b"_") else len(raw)
        found = decode_run(raw[lead:cut])
        if found is not None:
            found = dataclasses.replace(found, start=found.start + lead, end=found.end + lead)
            if _canonical(raw[found.start : found.end], found.content):
                return found
        # Read without its edge character the run leaves stray bits: the "-" or "_" is its own
        # last (or first) base64 character after all, the URL-safe alphabet's, as in a JWT.
        as_one = decode_run(raw)
        return as_one if as_one is not None else found
    if urlsafe and (b"+" in raw or b"/" in raw):
        return None  # both alphabets: its pieces are tried apart (see :func:`runs`)
    standard = body.translate(_TO_STANDARD) if urlsafe else body
    for start in range(4 if len(body) <= _SHIFTED else 1):
        end = len(body)
        if (end - start) % 4 == 1:
            end -= 1  # one stray character after the payload (a protobuf field's tag byte)
        if end - start < MIN_RUN - 4:
            return None
        piece = standard[start:end]
        try:
            content = binascii.a2b_base64(piece + _PADDING[-len(piece) % 4], strict_mode=True)
        except binascii.Error:
            continue
        if start == 0 and is_media(content):
            return None  # a picture, aligned: no other start is its payload
        # Its padding, as much as it needs (a stray "=" after it is the next field's), unless a
        # stray character was cut.
        whole = end + min(-(end - start) % 4, len(raw) - len(body)) if end == len(body) else end
        if content[:1] in _COMPRESSED_FIRST:
            inflated = decompressed(content, unmarked=False)
            if inflated is not None and meaningful(inflated):
                return Decoded(start, whole, urlsafe, content, inflated)
        if meaningful(content):
            return Decoded(start, whole, urlsafe, content, None)
    return None


def _canonical(base: bytes, content: bytes) -> bool:
    """Whether ``base`` is how ``content`` is written in standard base64 (padding aside): the
    last character of a run cut at the wrong place carries bits the bytes do not hold."""
    return binascii.b2a_base64(content, newline=False).rstrip(b"=") == base.rstrip(b"=")


def is_text(content: bytes) -> bool:
    """Whether ``content`` begins as text: printable ASCII, or UTF-8 of any script."""
    head = content[:_HEAD]
    if not head:
        return False
    if len(head.translate(None, _PRINTABLE)) * 5 <= len(head):
        return True
    if head.isascii() or _CONTROL.search(head) is not None:  # control characters: binary
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start >= len(head) - 3  # a character cut by the head's end
    return True


#: Control characters no text holds (tab and line ends are text).
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def is_binary(content: bytes) -> bool:
    """Whether ``content`` holds a control character: binary, whose lengths a change must keep
    (a message with length-prefixed fields), however much of it reads as text."""
    return _CONTROL.search(content) is not None


def is_media(content: bytes) -> bool:
    """Whether ``content`` is a picture, a sound or a video (compressed: no text in it)."""
    return content.startswith(_MEDIA) or content[4:8] == b"ftyp"


def meaningful(content: bytes) -> bool:
    """Whether a payload is worth searching: text, or binary that is no media and holds a run."""
    if is_text(content):
        return True
    return not is_media(content) and content.translate(_CLASSES).find(_LONG) >= 0


def payloads(data: bytes, *, edges: bool = False) -> Iterator[bytes]:
    """The payload of each run in ``data`` that means something (inflated when compressed);
    ``edges``: ``data`` is binary (see :func:`decode_run`)."""
    for run in runs(data):
        decoded = decode_run(run, edges=edges)
        if decoded is not None:
            yield decoded.payload
