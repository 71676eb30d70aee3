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
from collections.abc import Iterable, Iterator
from typing import Any

from ..cassettes.largebody import ChunkedBody

__all__ = ["EVENT_INDEX", "event_groups", "inflate", "json_escaped", "plain_dump", "texts", "windows"]

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


def windows(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """A large body in slices of about a megabyte, each beginning with the end of the last."""
    tail = b""
    for chunk in chunks:
        for start in range(0, len(chunk), _WINDOW):
            window = tail + chunk[start : start + _WINDOW]
            yield window
            tail = window[-_OVERLAP:]


def inflate(content: bytes) -> bytes | None:
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
                    inflated = inflate(content) if content[:2] == b"\x1f\x8b" else None
                    yield f"{where}.base64", (inflated or content).decode("latin-1")
                    continue
                if isinstance(key, str):
                    yield where, key
                stack.append((f"{where}.{key}" if where else str(key), item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
    for group in event_groups(data):
        yield EVENT_INDEX.sub(".events[*]", f"{field}{group[0][2]}"), "".join(h[k] for h, k, _ in group)
