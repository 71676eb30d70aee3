"""Credentials by value: what the request sent as a credential, looked for everywhere else.

Redaction by name (:mod:`.byname`) removes a credential from the place it was sent. A
server may send the same value back anywhere: in an error message, an SSE event, a
redirect, a file it returns. So every value removed from the request is collected here
(:func:`request_credentials`) and masked wherever it appears in the stored interaction
(:class:`Masker`): in every string, in text split across the events of a stream, and
inside ``base64`` bodies, gzip-compressed or not. :func:`.decode.texts` gives the scanner the
same views of the data: each string, each field joined across events, each binary body
decoded.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

from ..cassettes.largebody import ChunkedBody, ChunkedText
from ..cassettes.models import Request
from ..cassettes.multipart import parse_multipart
from ..cassettes.spool import ChunksOnDisk, SpooledChunks, byte_slices
from .bodyfields import walk_fields
from .byname import names_secret_field
from .compressed import decompressed, inflate
from .decode import event_groups, json_escaped, plain_dump, windows
from .examples import is_documented_example
from .names import is_secret_header, is_secret_param
from .placeholder import is_placeholder, placeholder

__all__ = [
    "MIN_VALUE_LENGTH",
    "Masker",
    "Substitution",
    "json_credentials",
    "remember_sent",
    "request_credentials",
    "run_credentials",
    "sent_credentials",
    "worth_masking",
]

#: Shorter values occur by chance too often ("true", "gpt-4o") to be masked wherever they appear.
MIN_VALUE_LENGTH = 8


def _header_values(name: str, value: str) -> Iterator[str]:
    yield value
    scheme, _, rest = value.strip().partition(" ")
    if rest:
        yield rest.strip()
        if scheme.lower() == "basic":
            try:
                password = base64.b64decode(rest.strip(), validate=True).decode("utf-8").partition(":")[2]
            except (binascii.Error, UnicodeDecodeError):
                password = ""
            yield password
    if name.lower() == "cookie":
        for pair in value.split(";"):
            yield pair.partition("=")[2].strip()


def json_credentials(value: Any, *, request: bool = True) -> Iterator[str]:
    """The value of every credential field of a JSON body, where names count (:mod:`.bodyfields`)."""
    found: list[str] = []

    def collect(name: str, child: Any) -> Any:
        if isinstance(child, (str, int, float)) and not isinstance(child, bool):
            found.append(str(child))
        return child

    walk_fields(value, collect, request=request)
    return iter(found)


def _body_values(request: Request) -> Iterator[str]:
    content, content_type = request.content, request.content_type
    if not content:
        return
    if content_type.startswith("multipart/"):
        for part in parse_multipart(content, request.headers.get("content-type", content_type)) or ():
            if is_secret_param(part.name):
                yield part.content.decode("utf-8", "replace")
            elif part.content.lstrip()[:1] in (b"{", b"[") and _may_name_field(part.content):
                yield from _json_document_values(part.content)
        return
    if (inflated := decompressed(content)) is not None:  # a body the client compressed
        content = inflated
    stripped = content.lstrip()[:1]
    if stripped in (b"{", b"["):
        if _may_name_field(content):
            yield from _json_document_values(content)
        return
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return
    if "=" in text and "\n" not in text.strip():
        for name, value in parse_qsl(text, keep_blank_values=True):
            if is_secret_param(name):
                yield value


def _json_document_values(content: bytes) -> Iterator[str]:
    try:
        parsed = json.loads(content)
    except (ValueError, RecursionError):
        return
    yield from json_credentials(parsed)


def _may_name_field(content: bytes) -> bool:
    """Whether a JSON body may have a credential field, from its text: a key is written
    out between quotes unless a ``\\u`` escape spells it (then this says yes)."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:  # UTF-16 or -32 JSON: parse it
        return True
    return "\x00" in text or names_secret_field(text.lower())


def request_credentials(request: Request) -> set[str]:
    """Every credential value the request sent in a place known by name: credential
    headers (the token after ``Bearer``, a Basic password, cookie values), credential query
    parameters and userinfo, credential fields of a JSON, form or multipart body."""
    return worth_masking(sent_credentials(request))


def sent_credentials(request: Request) -> frozenset[str]:
    """:func:`request_credentials` before :func:`worth_masking` leaves out what is too short
    or a placeholder."""
    found: set[str] = set()
    for name, value in request.headers.items():
        if is_secret_header(name):
            found.update(_header_values(name, value))
    if "?" in request.url or "@" in request.url:  # a query, or userinfo
        parts = urlsplit(request.url)
        found.update(v for k, v in parse_qsl(parts.query, keep_blank_values=True) if is_secret_param(k))
        if parts.password:
            found.add(parts.password)
    found.update(_body_values(request))
    return frozenset(value.strip() for value in found)


def worth_masking(values: Iterable[str]) -> set[str]:
    """The credentials worth masking wherever they appear: long enough not to occur by chance,
    and no placeholder (vcrpy's "scrubbed" in a credential's place is no secret)."""
    return {
        v
        for v in values
        if len(v) >= MIN_VALUE_LENGTH and not is_placeholder(v) and not is_documented_example(v)
    }


#: Every credential sent by a request recorded in this process, so far: a key sent in one
#: test's request is masked where it shows up in every cassette written after it (a key one
#: call creates and the next uses; a server that echoes another request's key). Bounded: a
#: run that sends more distinct credentials than this masks the latest ones.
_SENT: dict[str, None] = {}
_MAX_SENT = 4096


def remember_sent(values: Iterable[str]) -> None:
    """Add credentials a recorded request sent to those of the run (:func:`run_credentials`)."""
    for value in values:
        if value not in _SENT:
            if len(_SENT) >= _MAX_SENT:
                del _SENT[next(iter(_SENT))]
            _SENT[value] = None


def run_credentials() -> frozenset[str]:
    """The credentials every request recorded in this process sent (see :func:`remember_sent`)."""
    return frozenset(_SENT)


def _variants(value: str) -> set[str]:
    """The value as it may be written: raw, URL-encoded, JSON-escaped."""
    return {value, quote(value, safe=""), quote_plus(value), json_escaped(value)} - {""}


class Substitution(Protocol):
    """What a :class:`Masker` may replace instead of credentials: each match of a pattern by what
    its ``*_sub`` returns (:class:`promptvcr.identity.Identity`: the machine's values)."""

    text_pattern: re.Pattern[str] | None
    bytes_pattern: re.Pattern[bytes] | None
    needles: tuple[str, ...]
    longest: int

    def text_sub(self, match: re.Match[str]) -> str: ...

    def bytes_sub(self, match: re.Match[bytes]) -> bytes: ...


#: How much of a large body is masked at a time.
_SLICE = 1024 * 1024


class Masker:
    """Replaces each of some values by a placeholder (``<redacted:sent-credential>`` unless
    told another) wherever they are in stored data; or each match of a :class:`Substitution`
    (the machine's values) by what it says: one walk over every byte that is written."""

    def __init__(
        self,
        values: Iterable[str] = (),
        what: str = "sent-credential",
        *,
        substitution: Substitution | None = None,
        binary: bool = True,
    ) -> None:
        self._placeholder = placeholder(what)
        self.count = 0
        #: Whether binary bodies (``base64``, a large one's slices) are looked into: always for
        #: credentials; not for the machine's values in a response (see :mod:`.machinevalues`).
        self._binary = binary
        if substitution is not None:  # each match replaced by what the substitution says
            self._escaped = list(substitution.needles)
            self._text, self._bytes = substitution.text_pattern, substitution.bytes_pattern
            self._text_sub: str | Callable[[re.Match[str]], str] = substitution.text_sub
            self._bytes_sub: bytes | Callable[[re.Match[bytes]], bytes] = substitution.bytes_sub
            self._longest = substitution.longest
            self.active = self._text is not None
            return
        variants = sorted({v for value in values for v in _variants(value)}, key=len, reverse=True)
        self._escaped = [json_escaped(v) for v in variants]
        self.active = bool(variants)
        self._text = re.compile("|".join(map(re.escape, variants))) if variants else None
        self._bytes = re.compile(b"|".join(re.escape(v.encode()) for v in variants)) if variants else None
        self._text_sub, self._bytes_sub = self._placeholder, self._placeholder.encode()
        self._longest = max((len(v.encode()) for v in variants), default=1)

    def text(self, value: str) -> str:
        if self._text is None:
            return value
        masked, count = self._text.subn(self._text_sub, value)
        self.count += count
        return masked

    def binary(self, content: bytes) -> bytes:
        if self._bytes is None:
            return content
        if content[:2] == b"\x1f\x8b":  # gzip: look inside, compress again if anything was masked
            inflated = inflate(content)
            if inflated is not None:
                masked = self.binary(inflated)
                return content if masked == inflated else gzip.compress(masked, mtime=0)
        masked, count = self._bytes.subn(self._bytes_sub, content)
        self.count += count
        return masked

    def data(self, value: Any, dump: str | None = None) -> Any:
        """A copy of stored data with the values masked; strings split between the events of a
        stream (``events[0].data.delta.text`` + ``events[1].data.delta.text``) included.
        ``value`` itself when nothing is to be masked; ``dump`` is its :func:`plain_dump`
        when the caller has it already."""
        if not self.active:
            return value
        if dump is None:
            dump = plain_dump(value)
        if dump is not None and not any(v in dump for v in self._escaped):
            return value  # the common case, found by substring searches written in C
        return self._across_events(self._walk(value))

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            result: dict[Any, Any] = {}
            for key, item in value.items():
                if key == "base64" and isinstance(item, str):
                    result[key] = self._base64(item) if self._binary else item
                elif isinstance(item, ChunkedBody):
                    result[key] = self._large(item) if self._binary or isinstance(item, ChunkedText) else item
                else:
                    result[self.text(key) if isinstance(key, str) else key] = self._walk(item)
            return result
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        return value

    def _large(self, body: ChunkedBody) -> ChunkedBody:
        """A large body holding a value to mask, masked a slice at a time, never joined: into a
        new spool when it was spooled (see :mod:`promptvcr.cassettes.spool`)."""
        assert self._bytes is not None
        if not any(self._bytes.search(window) for window in windows(body.chunks)):
            return body
        masked = (piece for piece in self._masked_slices(body.chunks) if piece)
        return type(body)(SpooledChunks(masked) if isinstance(body.chunks, ChunksOnDisk) else list(masked))

    def _masked_slices(self, chunks: Sequence[bytes]) -> Iterator[bytes]:
        """``chunks`` masked, in slices: the last ``longest - 1`` bytes of each slice wait for the
        next one, so a value cut by the slicing is masked whole, as in the joined body (a match
        starting before them fits in the slice, whichever variant it is)."""
        assert self._bytes is not None
        held_back = self._longest - 1
        carry = b""
        for piece in byte_slices(chunks, _SLICE):
            buffer = carry + piece
            safe = len(buffer) - held_back
            out: list[bytes] = []
            at = 0
            for match in self._bytes.finditer(buffer):
                if match.start() >= safe:
                    break
                out += (buffer[at : match.start()], self._replacement(match))
                at = match.end()
                self.count += 1
            if at < safe:
                out.append(buffer[at:safe])
                at = safe
            carry = buffer[at:]
            yield b"".join(out)
        masked, count = self._bytes.subn(self._bytes_sub, carry)
        self.count += count
        yield masked

    def _replacement(self, match: re.Match[bytes]) -> bytes:
        sub = self._bytes_sub
        return sub if isinstance(sub, bytes) else sub(match)

    def _base64(self, stored: str) -> str:
        try:
            content = base64.b64decode(stored, validate=True)
        except (binascii.Error, ValueError):
            return self.text(stored)
        masked = self.binary(content)
        return stored if masked == content else base64.b64encode(masked).decode("ascii")

    def _across_events(self, data: Any) -> Any:
        """Mask a value whose pieces sit in the same field of consecutive events."""
        assert self._text is not None
        for group in event_groups(data):
            joined = "".join(holder[key] for holder, key, _ in group)
            matches = list(self._text.finditer(joined))
            if not matches:
                continue
            offset = 0
            for holder, key, _ in group:
                piece = holder[key]
                start, end = offset, offset + len(piece)
                offset = end
                keep = list(piece)
                touched = False
                for match in matches:
                    s, e = match.span()
                    if s < end and e > start:
                        for i in range(max(s, start), min(e, end)):
                            keep[i - start] = ""
                        if s >= start:  # the masked value starts in this piece: say so here
                            sub = self._text_sub
                            keep[s - start] = sub if isinstance(sub, str) else sub(match)
                        touched = True
                if touched:
                    holder[key] = "".join(keep)
                    self.count += 1
        return data
