"""Credentials by value: what the request sent as a credential, looked for everywhere else.

Redaction by name (:mod:`.redact`) removes a credential from the place it was sent. A
server may send the same value back anywhere: in an error message, an SSE event, a
redirect, a file it returns. So every value removed from the request is collected here
(:func:`request_credentials`) and masked wherever it appears in the stored interaction
(:class:`Masker`): in every string, in text split across the events of a stream, and
inside ``base64`` bodies, gzip-compressed or not. :func:`texts` gives the scanner the
same views of the data: each string, each field joined across events, each binary body
decoded.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

from .examples import is_documented_example
from .largebody import ChunkedBody
from .models import Request
from .multipart import parse_multipart
from .redact import (
    REDACTED,
    SECRET_BODY_FIELDS,
    SECRET_FIELDS_ANY_DEPTH,
    is_secret_header,
    is_secret_param,
    names_secret_field,
)

__all__ = [
    "MIN_VALUE_LENGTH",
    "Masker",
    "environment_credentials",
    "request_credentials",
    "sent_credentials",
    "texts",
    "worth_masking",
]

#: Shorter values occur by chance too often ("true", "gpt-4o") to be masked wherever they appear.
MIN_VALUE_LENGTH = 8
#: Largest decompressed body searched inside a gzip body (a bomb must not fill the memory).
_MAX_INFLATED = 256 * 1024 * 1024


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


def _json_values(value: Any, top: bool = True) -> Iterator[str]:
    stack: list[tuple[Any, bool]] = [(value, top)]
    while stack:
        item, at_top = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                name = key.lower() if isinstance(key, str) else ""
                secret = name in SECRET_FIELDS_ANY_DEPTH or (at_top and name in SECRET_BODY_FIELDS)
                if secret and isinstance(child, (str, int, float)) and not isinstance(child, bool):
                    yield str(child)
                else:
                    stack.append((child, False))
        elif isinstance(item, list):
            stack.extend((child, False) for child in item)


def _body_values(request: Request) -> Iterator[str]:
    content, content_type = request.content, request.content_type
    if not content:
        return
    if content_type.startswith("multipart/"):
        for part in parse_multipart(content, request.headers.get("content-type", content_type)) or ():
            if is_secret_param(part.name) or part.name.lower() in SECRET_BODY_FIELDS:
                yield part.content.decode("utf-8", "replace")
        return
    stripped = content.lstrip()[:1]
    if stripped in (b"{", b"["):
        if not _may_name_field(content):
            return
        try:
            parsed = json.loads(content)
        except (ValueError, RecursionError):
            return
        yield from _json_values(parsed)
        return
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return
    if "=" in text and "\n" not in text.strip():
        for name, value in parse_qsl(text, keep_blank_values=True):
            if is_secret_param(name) or name.lower() in SECRET_BODY_FIELDS:
                yield value


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
    return {v for v in values if len(v) >= MIN_VALUE_LENGTH and not is_documented_example(v)}


def _variants(value: str) -> set[str]:
    """The value as it may be written: raw, URL-encoded, JSON-escaped."""
    return {value, quote(value, safe=""), quote_plus(value), json_escaped(value)} - {""}


_EVENT_INDEX = re.compile(r"\.events\[\d+\]|\.frames\[\d+\]")


class Masker:
    """Replaces each of some values by ``<redacted>`` wherever they are in stored data."""

    def __init__(self, values: Iterable[str]) -> None:
        variants = sorted({v for value in values for v in _variants(value)}, key=len, reverse=True)
        self._escaped = [json_escaped(v) for v in variants]
        self.active = bool(variants)
        self._text = re.compile("|".join(map(re.escape, variants))) if variants else None
        self._bytes = re.compile(b"|".join(re.escape(v.encode()) for v in variants)) if variants else None
        self.count = 0

    def text(self, value: str) -> str:
        if self._text is None:
            return value
        masked, count = self._text.subn(REDACTED, value)
        self.count += count
        return masked

    def binary(self, content: bytes) -> bytes:
        if self._bytes is None:
            return content
        if content[:2] == b"\x1f\x8b":  # gzip: look inside, compress again if anything was masked
            inflated = _inflate(content)
            if inflated is not None:
                masked = self.binary(inflated)
                return content if masked == inflated else gzip.compress(masked, mtime=0)
        masked, count = self._bytes.subn(REDACTED.encode(), content)
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
                    result[key] = self._base64(item)
                elif isinstance(item, ChunkedBody):
                    result[key] = self._large(item)
                else:
                    result[self.text(key) if isinstance(key, str) else key] = self._walk(item)
            return result
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        return value

    def _large(self, body: ChunkedBody) -> ChunkedBody:
        """A large body is joined (held again) only when it holds a value to mask."""
        assert self._bytes is not None
        if not any(self._bytes.search(window) for window in _windows(body.chunks)):
            return body
        return type(body)([self.binary(b"".join(body.chunks))])

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
        for group in _event_groups(data):
            joined = "".join(holder[key] for holder, key, _ in group)
            spans = [m.span() for m in self._text.finditer(joined)]
            if not spans:
                continue
            offset = 0
            for holder, key, _ in group:
                piece = holder[key]
                start, end = offset, offset + len(piece)
                offset = end
                keep = list(piece)
                touched = False
                for s, e in spans:
                    if s < end and e > start:
                        for i in range(max(s, start), min(e, end)):
                            keep[i - start] = ""
                        if s >= start:  # the masked value starts in this piece: say so here
                            keep[s - start] = REDACTED
                        touched = True
                if touched:
                    holder[key] = "".join(keep)
                    self.count += 1
        return data


def _streams(data: Any) -> list[tuple[str, Any]]:
    """The stored streams (``events``, ``frames``) of an interaction, a request or response,
    or a body: (field, list of events)."""
    found = []
    if isinstance(data, dict):
        for holder, prefix in (
            (data, ""),
            (data.get("request"), ".request"),
            (data.get("response"), ".response"),
        ):
            if isinstance(holder, dict) and ("events" in holder or "frames" in holder):  # most: neither
                found += [(f"{prefix}.{key}", holder[key]) for key in ("events", "frames") if key in holder]
    return found


def _event_groups(data: Any) -> list[list[tuple[dict[Any, Any] | list[Any], Any, str]]]:
    """Strings of a stream grouped by their field with the event number left out, in order:
    (container, key, field) for each, so that a group joined is the text the client reads."""
    groups: dict[str, list[tuple[dict[Any, Any] | list[Any], Any, str]]] = {}
    stack: list[tuple[Any, str]] = [(events, where) for where, events in reversed(_streams(data))]
    while stack:
        value, where = stack.pop()
        items: Iterable[tuple[Any, Any]]
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        children = []
        for key, item in items:
            field = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"
            if isinstance(item, str):
                groups.setdefault(_EVENT_INDEX.sub(".events[*]", field), []).append((value, key, field))
            else:
                children.append((item, field))
        stack.extend(reversed(children))
    return [group for group in groups.values() if len(group) > 1]


def plain_dump(data: Any, text: str | None = None) -> str | None:
    """``data`` as JSON when one substring search of it is as good as a walk over it: no
    stream (a value split between events), no ``base64`` or large body (encoded text).
    ``text`` is ``json.dumps(data, ensure_ascii=False)`` when the caller has it already."""
    if _streams(data):
        return None
    if text is None:
        try:
            text = json.dumps(data, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):  # a large body, or data JSON cannot hold
            return None
    return None if '"base64"' in text else text


def json_escaped(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]


#: Windows over a large body overlap by this much, so that a value cut by the slicing is seen
#: whole in one of them (every key is far shorter).
_OVERLAP = 4096
_WINDOW = 1024 * 1024


def _windows(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """A large body in slices of about a megabyte, each beginning with the end of the last."""
    tail = b""
    for chunk in chunks:
        for start in range(0, len(chunk), _WINDOW):
            window = tail + chunk[start : start + _WINDOW]
            yield window
            tail = window[-_OVERLAP:]


def _inflate(content: bytes) -> bytes | None:
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = inflater.decompress(content, _MAX_INFLATED)
        return out if not inflater.unconsumed_tail else None
    except zlib.error:
        return None


def texts(data: Any, field: str) -> Iterator[tuple[str, str]]:
    """(field, text) for every text of stored data a secret can hide in: each string and
    key, each field of a stream joined across its events, each binary body decoded (gzip
    inflated) as Latin-1, so that ASCII keys in it read as they are."""
    stack: list[tuple[str, Any]] = [(field, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            yield where, value
        elif isinstance(value, ChunkedBody):
            for window in _windows(value.chunks):
                yield where, window.decode("latin-1")
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "base64" and isinstance(item, str):
                    try:
                        content = base64.b64decode(item, validate=True)
                    except (binascii.Error, ValueError):
                        yield f"{where}.base64", item
                        continue
                    inflated = _inflate(content) if content[:2] == b"\x1f\x8b" else None
                    yield f"{where}.base64", (inflated or content).decode("latin-1")
                    continue
                if isinstance(key, str):
                    yield where, key
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    for group in _event_groups(data):
        yield _EVENT_INDEX.sub(".events[*]", f"{field}{group[0][2]}"), "".join(h[k] for h, k, _ in group)


def environment_credentials(environ: Mapping[str, str]) -> dict[str, str]:
    """Credential variables of an environment worth looking for: name -> value."""
    return {
        name: value.strip()
        for name, value in environ.items()
        if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= _MIN_ENV_VALUE_LENGTH
    }


#: Environment variables whose names say they hold a credential.
_CREDENTIAL_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
#: Shorter values are too likely to occur by chance ("true", "1234") to be worth a finding.
_MIN_ENV_VALUE_LENGTH = 12
