"""Undoing the encodings a credential hides behind: the views of stored data a search reads.

Each string and key, each field of a stream joined across its events, each binary body
decoded (gzip inflated); in each of them, percent-escapes read and every base64 run decoded,
a whole string or part of one (:mod:`.runs`), a few layers deep.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from ..cassettes.largebody import ChunkedBody
from ..cassettes.spool import byte_slices
from .compressed import decompressed
from .runs import MIN_RUN, is_binary, is_media, payloads

__all__ = [
    "EVENT_INDEX",
    "body_texts",
    "event_groups",
    "holds_base64",
    "json_escaped",
    "plain_dump",
    "texts",
    "windows",
]

EVENT_INDEX = re.compile(r"\.events\[\d+\]|\.frames\[\d+\]")


def _streams(data: Any) -> list[tuple[str, Any]]:
    """The stored streams (``events``, ``frames``) of an interaction, a request or response,
    a body, or a websocket or MCP stdio session (``response.websocket.frames``): (field, list
    of events)."""
    found = []
    if isinstance(data, dict):
        response = data.get("response")
        holders = [(data, ""), (data.get("request"), ".request"), (response, ".response")]
        for holder, prefix in (*holders, *_sessions(data, ""), *_sessions(response, ".response")):
            if isinstance(holder, dict) and ("events" in holder or "frames" in holder):  # most: neither
                found += [(f"{prefix}.{key}", holder[key]) for key in ("events", "frames") if key in holder]
    return found


def _sessions(holder: Any, prefix: str) -> list[tuple[Any, str]]:
    """The sessions a response holds (:data:`promptvcr.cassettes.wsframes.STORED_AS`)."""
    if not isinstance(holder, dict) or ("websocket" not in holder and "stdio" not in holder):
        return []
    return [(holder.get(key), f"{prefix}.{key}") for key in ("websocket", "stdio")]


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


#: A JSON string that is base64 with JSON's optional ``\/`` escape (PHP's ``json_encode`` writes
#: every ``/`` so), as a JSON document inside a string reads in the dump: ``\\/``. Searched only
#: when that text is there; other base64 is found by :func:`.runs.payloads`.
_BASE64_ESCAPED_IN_JSON = re.compile(r'"(?:[A-Za-z0-9+]|\\\\/){32,}={0,2}\\?"')


def holds_base64(dump: str) -> bool:
    """Whether the JSON text ``dump`` holds base64 worth decoding: a run, a whole string or
    part of one, whose payload means something (:mod:`.runs`). A JSON escape before a run
    (``\\n``) is one of the stray characters a run's start may have."""
    if any(True for _ in payloads(dump.encode("utf-8", "surrogatepass"))):
        return True
    if "%" in dump and (unquoted := unquote(dump)) != dump:  # noqa: SIM102 - a run cut by escapes
        if any(True for _ in payloads(unquoted.encode("utf-8", "surrogatepass"))):
            return True
    return "\\\\/" in dump and _BASE64_ESCAPED_IN_JSON.search(dump) is not None


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
    if len(text) >= MIN_RUN:
        for payload in payloads(text.encode("utf-8", "surrogatepass")):
            yield from _payload_views(payload, depth + 1)


def _payload_views(payload: bytes, depth: int) -> Iterator[str]:
    if is_binary(payload):
        yield from _binary_views(payload, depth)
    else:
        yield from _views(payload.decode("latin-1"), depth)


def _binary_views(content: bytes, depth: int = 0) -> Iterator[str]:
    """Binary content as Latin-1 (ASCII keys in it read as they are), and the views of each
    base64 run in it (a string field of a protobuf message, of any frame); none in media."""
    yield content.decode("latin-1")
    if depth < _MAX_LAYERS and not is_media(content):
        for payload in payloads(content, edges=True):
            yield from _payload_views(payload, depth + 1)


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
                for view in _binary_views(window):
                    yield where, view
        elif isinstance(value, dict):
            if "events" in value or "frames" in value:  # a stream, at any depth (a file's interactions)
                for group in event_groups(value):
                    place = EVENT_INDEX.sub(".events[*]", f"{where}{group[0][2]}")
                    for view in _views("".join(holder[key] for holder, key, _ in group)):
                        yield place, view  # a value sent in pieces, base64 too: only whole once joined
            for key, item in value.items():
                if key == "base64" and isinstance(item, str):
                    try:
                        content = base64.b64decode(item, validate=True)
                    except (binascii.Error, ValueError):
                        yield f"{where}.base64", item
                        continue
                    inflated = decompressed(content)
                    for view in _binary_views(inflated if inflated is not None else content):
                        yield f"{where}.base64", view
                    continue
                if isinstance(key, str):
                    yield where, key
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))


def body_texts(data: Any, field: str) -> Iterator[tuple[str, str]]:
    """(field, text) of each whole body stored as text or bytes in ``data`` (an interaction,
    a request or a response): a ``text`` body, a ``base64`` body decoded (inflated). The
    places where a credential field is read by name in a body promptvcr did not parse; never
    a string inside a body (a tool call's arguments are JSON in a string, not a body)."""
    holders: list[tuple[str, Any]] = [(field, data)]
    if isinstance(data, dict):
        holders += [(f"{field}.{side}", data.get(side)) for side in ("request", "response")]
    for where, holder in holders:
        if not isinstance(holder, dict):
            continue
        if isinstance(text := holder.get("text"), str):
            yield f"{where}.text", text
        if isinstance(encoded := holder.get("base64"), str):
            try:
                content = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                continue
            inflated = decompressed(content)
            yield f"{where}.base64", (inflated if inflated is not None else content).decode("latin-1")
