"""A large JSON body as its structure, each long string in it standing in by its digest.

A request over :data:`~.largebody.LARGE_BODY_BYTES` is almost always a small document holding
a few very long strings: an image or a PDF as a base64 data URL, a book pasted into a prompt.
Held whole it costs the body several times over (``promptvcr serve`` held a 300 MB request
eight times: issue 54), and nobody reviews a 300 MB string in a diff. So in a JSON body over
that size, each string over :data:`LONG_STRING` bytes (UTF-8, escapes decoded; an object key
too) is replaced by a *stand-in*, a short string that names its length and SHA-256::

    {"model": "gpt-4o", "messages": [{"role": "user",
      "content": "<promptvcr: 314572800 bytes in bodies/sha256-9f86d0...>"}]}

That document is what the request is keyed by (:func:`promptvcr.matching.parts.parse_body`
does the same to any body over the threshold, so a request sent in-process and the same one
through ``serve`` have one key), what the cassette stores and a reviewer reads, and the
string itself is a body file beside the cassette (:mod:`.bodyfiles`) under the name the
stand-in gives. Two requests are then the same when their structure is and each long string
is the same, byte for byte: matching rules see the stand-in, never inside the string.

Two ways to the same document, tested against each other (``tests/cassettes/test_large_json.py``):
:func:`stood_in` replaces the strings of a document parsed whole (a request built in the
process, which holds it anyway), and :class:`Skeleton` reads the body in slices from a spool,
keeping only the document's text outside long strings and writing each long string, decoded,
to a spool of its own while hashing it: ``serve`` keys a 300 MB request holding a few
megabytes. Anything :class:`Skeleton` cannot prove is the same JSON as the whole parse (a
lone surrogate, a control character, bytes that are not UTF-8) makes it give up (``None``),
and the body is then read whole, as before.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .spool import SpooledChunks

__all__ = ["LONG_STRING", "STAND_IN", "Skeleton", "leaves_replaced", "skeleton", "stand_in", "stood_in"]

#: A string longer than this (in UTF-8 bytes) in a large JSON body stands in by its digest.
LONG_STRING = 64 * 1024
#: A stand-in: the string's length in bytes and the SHA-256 of its UTF-8 bytes, which is the
#: name of the body file that holds it (:data:`.bodyfiles.BODY_FOLDER`).
STAND_IN = re.compile(r"<promptvcr: ([0-9]+) bytes in bodies/sha256-([0-9a-f]{64})>")


def stand_in(size: int, sha256: str) -> str:
    """The stand-in of a long string of ``size`` UTF-8 bytes whose SHA-256 is ``sha256``."""
    return f"<promptvcr: {size} bytes in bodies/sha256-{sha256}>"


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate is a string JSON may hold


def _long(text: str) -> bool:
    return len(text) > LONG_STRING or (len(text) * 4 > LONG_STRING and len(_utf8(text)) > LONG_STRING)


def _replaced(text: str, strings: dict[str, bytes] | None) -> str:
    data = _utf8(text)
    name = stand_in(len(data), hashlib.sha256(data).hexdigest())
    if strings is not None:
        strings[name] = data
    return name


def stood_in(value: Any, strings: dict[str, bytes] | None = None) -> Any:
    """``value`` (a parsed JSON document) with each long string, key or value, replaced by its
    stand-in; each string replaced goes into ``strings`` by its stand-in when it is given.
    Walked without recursion (a document's depth is its sender's to choose); shared lists and
    dicts (never made by a parser) are copied per place."""
    if isinstance(value, str):
        return _replaced(value, strings) if _long(value) else value
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, list[Any] | dict[Any, Any], Any]] = [(value, root, 0)]
    while stack:
        source, parent, slot = stack.pop()
        copy: dict[Any, Any] | list[Any]
        if isinstance(source, dict):
            copy = {
                (_replaced(key, strings) if isinstance(key, str) and _long(key) else key): item
                for key, item in source.items()
            }
            items: Iterable[tuple[Any, Any]] = list(copy.items())
        else:
            copy = list(source)
            items = enumerate(copy)
        parent[slot] = copy
        for where, item in items:
            if isinstance(item, str):
                if _long(item):
                    copy[where] = _replaced(item, strings)
            elif isinstance(item, (dict, list)):
                stack.append((item, copy, where))
    return root[0]


#: A run of string content: characters, complete escapes; a high surrogate only with the escape
#: after it (half a pair is never cut from its other half, nor taken alone: see :class:`Skeleton`).
#: Written as characters, then (escape, characters) repeated: three times quicker on text full of
#: escapes than one alternation repeated.
_ESCAPE = (
    rb'\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4}'
    rb"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_RUN = re.compile(rb'[^"\\\x00-\x1f]*(?:(?:' + _ESCAPE + rb')[^"\\\x00-\x1f]*)*')
#: What may still become an escape when more bytes come (the end of a slice cut one in two).
_ESCAPE_START = re.compile(
    rb"\\(?:u(?:[0-9a-fA-F]{0,3}|[dD][89abAB][0-9a-fA-F]{2}(?:\\(?:u[0-9a-fA-F]{0,3})?)?))?"
)


class _NotSame(Exception):
    """What :class:`Skeleton` read cannot be proved the same JSON as the whole parse."""


class Skeleton:
    """Reads a JSON body fed in slices (:meth:`feed`), keeping its text outside long strings
    and each long string's decoded bytes in a spool of its own, hashed as they pass.
    :meth:`result` gives the document's text with stand-ins and the strings by stand-in, or
    ``None`` when the body is not JSON this reader can vouch for (then read it whole)."""

    def __init__(self) -> None:
        self._text = bytearray()  # the document outside long strings, stand-ins in their place
        self._carry = b""  # the end of the last slice: an escape cut in two
        self._inside = False  # in a string
        self._pending = bytearray()  # the current string's raw bytes, while it may be short
        self._spool: SpooledChunks | None = None  # the current long string's decoded bytes
        self._hash: Any = None
        self._size = 0
        self._utf8: Any = None
        self.strings: dict[str, SpooledChunks] = {}
        self._failed = False

    def feed(self, data: bytes) -> None:
        if self._failed:
            return
        try:
            self._feed(self._carry + data if self._carry else data)
        except _NotSame:
            self._failed = True
            self._text.clear()
            self.strings.clear()

    def _feed(self, data: bytes) -> None:
        self._carry = b""
        at, end = 0, len(data)
        while at < end:
            if not self._inside:
                quote = data.find(b'"', at)
                if quote < 0:
                    self._text += data[at:]
                    return
                self._text += data[at:quote]
                self._inside, at = True, quote + 1
                continue
            stop = _RUN.match(data, at).end()  # type: ignore[union-attr]
            self._content(data[at:stop])
            if stop == end:
                return
            if data[stop] == 0x22:  # the closing quote
                self._close()
                self._inside, at = False, stop + 1
                continue
            tail = data[stop:]
            if len(tail) < 12 and _ESCAPE_START.fullmatch(tail):
                self._carry = bytes(tail)  # an escape cut by the slicing: with the next slice
                return
            raise _NotSame  # a control character, a bad escape, a lone high surrogate

    def _content(self, run: bytes) -> None:
        if not run:
            return
        if self._spool is not None:
            self._write(run)
            return
        self._pending += run
        if len(self._pending) > LONG_STRING and len(self._decoded(self._pending, final=False)) > LONG_STRING:
            pending, self._pending = bytes(self._pending), bytearray()
            self._spool, self._hash, self._size = SpooledChunks(), hashlib.sha256(), 0
            self._utf8 = codecs.getincrementaldecoder("utf-8")()
            self._write(pending)

    def _decoded(self, raw: bytes | bytearray, *, final: bool) -> bytes:
        """The UTF-8 bytes of string content ``raw`` (complete escapes, never half a pair)."""
        try:
            if self._utf8 is not None:
                text = self._utf8.decode(raw, final)
            else:
                text = codecs.decode(raw, "utf-8") if final else raw.decode("utf-8", "ignore")
            if "\\" in text:
                text = json.loads(f'"{text}"')
            return _utf8(text)
        except (UnicodeDecodeError, ValueError):
            raise _NotSame from None

    def _write(self, raw: bytes) -> None:
        data = self._decoded(raw, final=False)
        assert self._spool is not None
        self._hash.update(data)
        self._size += len(data)
        self._spool.append(data)

    def _close(self) -> None:
        if self._spool is None:
            self._text += b'"' + self._pending + b'"'
            self._pending.clear()
            return
        tail = self._decoded(b"", final=True)  # a character cut at the very end: an error
        assert not tail
        name = stand_in(self._size, self._hash.hexdigest())
        self.strings[name] = self._spool
        self._text += json.dumps(name).encode("ascii")
        self._spool, self._hash, self._utf8 = None, None, None

    def result(self) -> tuple[bytes, dict[str, SpooledChunks]] | None:
        """The document's text with stand-ins and the long strings by stand-in; ``None`` when
        the body is not JSON that this reader can vouch for (or was cut inside a string)."""
        if self._failed or self._inside or self._carry:
            return None
        text = bytes(self._text)
        try:
            codecs.decode(text, "utf-8")
        except UnicodeDecodeError:
            return None
        return text, self.strings


def skeleton(chunks: Sequence[bytes] | Iterable[bytes]) -> tuple[bytes, dict[str, SpooledChunks]] | None:
    """:class:`Skeleton` of a body given as its chunks (read in order, once)."""
    reader = Skeleton()
    for chunk in chunks:
        reader.feed(bytes(chunk))
    return reader.result()


def leaves_replaced(value: Any, replace: Callable[[Any], Any]) -> Any:
    """``value`` (a stored JSON document) with each value that is neither a dict nor a list
    replaced by ``replace(value)``: where the cassette writer puts a long string's bytes for a
    stand-in, and the body file's stand-in back. Without recursion; every dict and list is a
    copy (``value`` is left as it is), each other value ``replace``'s answer."""
    if not isinstance(value, (dict, list)):
        return replace(value)
    root: list[Any] = [value]
    stack: list[tuple[list[Any] | dict[Any, Any], Any]] = [(root, 0)]
    while stack:
        parent, slot = stack.pop()
        item = parent[slot]
        if isinstance(item, (dict, list)):
            copy: dict[Any, Any] | list[Any] = dict(item) if isinstance(item, dict) else list(item)
            parent[slot] = copy
            places = list(copy) if isinstance(copy, dict) else range(len(copy))
            stack.extend((copy, where) for where in places)
        else:
            parent[slot] = replace(item)
    return root[0]
