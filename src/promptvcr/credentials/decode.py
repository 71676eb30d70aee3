"""Undoing the encodings a credential hides behind: the views of stored data a search reads.

Each string and key, each field of a stream joined across its events, each binary body
decoded (gzip inflated).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from ..cassettes.largebody import ChunkedBody
from ..cassettes.spool import byte_slices

__all__ = [
    "BASE64_IN_JSON",
    "EVENT_INDEX",
    "decompressed",
    "event_groups",
    "holds_base64",
    "inflate",
    "json_escaped",
    "plain_dump",
    "texts",
    "windows",
]

#: Largest decompressed body searched inside a gzip body (a bomb must not fill the memory).
_MAX_INFLATED = 256 * 1024 * 1024

EVENT_INDEX = re.compile(r"\.events\[\d+\]|\.frames\[\d+\]")


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


def event_groups(data: Any) -> list[list[tuple[dict[Any, Any] | list[Any], Any, str]]]:
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
                groups.setdefault(EVENT_INDEX.sub(".events[*]", field), []).append((value, key, field))
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


def windows(chunks: Sequence[bytes]) -> Iterator[bytes]:
    """A large body in slices of about a megabyte, each beginning with the end of the last."""
    tail = b""
    for piece in byte_slices(chunks, _WINDOW):
        window = tail + piece
        yield window
        tail = window[-_OVERLAP:]


def inflate(content: bytes) -> bytes | None:
    """A gzip body inflated (``None`` when it is not one, or inflates past the bound)."""
    return _zlib(content, 16 + zlib.MAX_WBITS) if content[:2] == b"\x1f\x8b" else None


def _zlib(content: bytes, wbits: int) -> bytes | None:
    try:
        inflater = zlib.decompressobj(wbits)
        out = inflater.decompress(content, _MAX_INFLATED)
        return out if not inflater.unconsumed_tail else None
    except zlib.error:
        return None


def _zstd(content: bytes) -> bytes | None:
    try:
        import zstandard  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover - without it no client sends zstd either
        return None
    try:
        reader = zstandard.ZstdDecompressor().decompressobj()
        out: bytes = reader.decompress(content[:_MAX_INFLATED])
        return out[:_MAX_INFLATED]
    except zstandard.ZstdError:
        return None


def _brotli(content: bytes) -> bytes | None:
    try:
        import brotli  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # without it no client sends brotli either (httpx, aiohttp, urllib3 need it)
        return None
    try:
        out: bytes = brotli.decompress(content)
        return out[:_MAX_INFLATED]
    except Exception:  # brotli raises its own error type, or a plain one
        return None


_ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")


def decompressed(content: bytes) -> bytes | None:
    """A compressed body's bytes (gzip, deflate, zstd, brotli), or ``None``: what a client that
    compresses its request bodies sent, found by the bytes themselves (a stored request keeps
    no ``content-encoding``). Brotli has no magic number: it is tried on bytes that are not
    text."""
    if content[:2] == b"\x1f\x8b":
        return _zlib(content, 16 + zlib.MAX_WBITS)
    if content[:2] in _ZLIB_HEADERS:
        return _zlib(content, zlib.MAX_WBITS)
    if content[:4] == b"\x28\xb5\x2f\xfd":
        return _zstd(content)
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return _brotli(content)
    return None


#: A JSON string that is base64 as a whole, long enough to hold a key: decoded and searched.
_BASE64_STRING = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
#: The same inside JSON text (a JSON document in a string too: ``\\"``), in the standard
#: alphabet: the search that says whether any string is worth decoding. Ids (``chatcmpl-...``,
#: ``msg_01...``) hold ``-`` or ``_`` and do not send every answer down the slow walk.
BASE64_IN_JSON = re.compile(r'"[A-Za-z0-9+/]{32,}={0,2}\\?"')
#: The same with JSON's optional ``\/`` escape (PHP's ``json_encode`` writes every ``/`` so), as a
#: JSON document inside a string reads in the dump: ``\\/``. Searched only when that text is there.
_BASE64_ESCAPED_IN_JSON = re.compile(r'"(?:[A-Za-z0-9+]|\\\\/){32,}={0,2}\\?"')


def holds_base64(dump: str) -> bool:
    """Whether the JSON text ``dump`` holds a string that is base64 as a whole (see above)."""
    if BASE64_IN_JSON.search(dump) is not None:
        return True
    return "\\\\/" in dump and _BASE64_ESCAPED_IN_JSON.search(dump) is not None


def _decoded_string(text: str) -> str | None:
    """A string's base64 payload as text (inflated when compressed), or ``None``."""
    if _BASE64_STRING.fullmatch(text) is None:
        return None
    padded = text + "=" * (-len(text) % 4)
    try:
        content = base64.b64decode(
            padded, altchars=b"-_" if ("-" in text or "_" in text) else None, validate=True
        )
    except (binascii.Error, ValueError):
        return None
    inflated = decompressed(content)
    content = inflated if inflated is not None else content
    decoded = content.decode("latin-1")
    printable = sum(32 <= ord(c) < 127 for c in decoded[:256])
    return decoded if printable >= 0.8 * min(len(decoded), 256) else None


#: Largest JSON document inside a string that is parsed to be searched string by string.
_MAX_DOCUMENT = 16 * 1024 * 1024


def _document(text: str) -> Any:
    """The JSON document a string holds, or ``None``."""
    if len(text) > _MAX_DOCUMENT or text.rstrip()[-1:] not in ("}", "]"):
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return document if isinstance(document, (dict, list)) else None


def _views(text: str, depth: int = 0) -> Iterator[str]:
    """The text, percent-decoded when it holds escapes, and its base64 payload decoded; each
    of those decoded again, a few layers deep (a key percent-encoded, then base64-encoded)."""
    yield text
    if depth >= _MAX_LAYERS:
        return
    if "%" in text and (unquoted := unquote(text)) != text:
        yield from _views(unquoted, depth + 1)
    if len(text) >= 24 and (decoded := _decoded_string(text)) is not None:
        yield from _views(decoded, depth + 1)


#: How many encodings deep a string is decoded.
_MAX_LAYERS = 4


def texts(data: Any, field: str) -> Iterator[tuple[str, str]]:
    """(field, text) for every text of stored data a secret can hide in: each string and
    key, percent-decoded, a string that is base64 decoded (inflated when compressed), each
    field of a stream joined across its events, each binary body decoded (gzip, deflate,
    zstd, brotli inflated) as Latin-1, so that ASCII keys in it read as they are. A JSON
    document inside a string is searched as its text: JSON escapes no character of a key."""
    stack: list[tuple[str, Any]] = [(field, data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            for view in _views(value):
                yield where, view
                if view[:1] in ("{", "[") and (document := _document(view)) is not None:
                    stack.append((f"{where}(json)", document))  # JSON inside a string: its strings too
        elif isinstance(value, ChunkedBody):
            for window in windows(value.chunks):
                yield where, window.decode("latin-1")
        elif isinstance(value, dict):
            for key, item in value.items():
                if key == "base64" and isinstance(item, str):
                    try:
                        content = base64.b64decode(item, validate=True)
                    except (binascii.Error, ValueError):
                        yield f"{where}.base64", item
                        continue
                    inflated = decompressed(content)
                    yield f"{where}.base64", (inflated if inflated is not None else content).decode("latin-1")
                    continue
                if isinstance(key, str):
                    yield where, key
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    for group in event_groups(data):
        yield EVENT_INDEX.sub(".events[*]", f"{field}{group[0][2]}"), "".join(h[k] for h, k, _ in group)
