"""A cassette's interactions as plain data: what a file is read into, and what both caches keep.

One interaction is one tuple::

    (method, url, request headers, request body, status, response headers, chunks,
     timing as (headers, chunks) or None, end, recorded as (y, m, d, H, M, S, us) or None)

of strings, bytes, numbers and tuples only (headers as ``(name, value, name, value, ...)``),
so that :mod:`marshal` writes and reads it (it constructs no other objects, unlike
``pickle``), and so that the garbage collector stops tracking it once it has seen it: a
tuple holding a dict, even an untracked one, stays tracked. A loaded cassette is held in this
form until an interaction is asked for (:mod:`.loaded`). A file's items are checked
straight into this form (:func:`.reading.read`), and its interactions made from it, the same
way on a first read as from the parse cache (:mod:`.parsecache`) or the memo of small files
(:mod:`.smallcache`), about 0.6 us each: a first read no longer builds each interaction field by
field and then walks it back into this form for the cache (issue 22).

Only a websocket session does not fit: its file is read every time, its items built whole.
"""

from __future__ import annotations

import marshal
from datetime import datetime, timezone
from typing import Any

from ..cassettes.models import Interaction, Request, Response
from ..cassettes.playback import ENDS, ended
from ..cassettes.timing import Timing

__all__ = ["Compact", "date_of", "dumps", "flat_headers", "header", "headers_of", "interaction", "items_from"]

Compact = tuple[Any, ...]


def date_of(moment: datetime) -> tuple[int, ...]:
    """A recorded date (in UTC) as the compact form holds it."""
    return (
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond,
    )


def flat_headers(headers: dict[str, str]) -> tuple[str, ...]:
    """Headers as the compact form holds them: ``(name, value, name, value, ...)``."""
    return tuple(part for pair in headers.items() for part in pair)


def headers_of(flat: tuple[str, ...]) -> dict[str, str]:
    """The headers a :func:`flat_headers` holds, as a new dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def header(flat: tuple[str, ...], name: str) -> str:
    """One header's value (lower-case ``name``) in a :func:`flat_headers`; "" when absent."""
    for position in range(0, len(flat), 2):
        if flat[position] == name:
            return flat[position + 1]
    return ""


def interaction(item: Compact, where: str) -> Interaction:
    """The interaction ``item`` holds (``where`` names its cassette in a cut body's messages:
    ``" in PATH"``); ``ValueError``, ``TypeError`` or ``IndexError`` for a damaged one."""
    method, url, req_headers, content, status, resp_headers, chunks, timing, end, date = item
    if end not in ENDS:
        raise ValueError(end)
    timed = None if timing is None else Timing(*timing)
    response = Response(status, headers_of(resp_headers), list(chunks), timed)
    if end != "complete":
        response.end = end
        response.playback = ended(end, len(chunks), where)
    recorded = None
    if date is not None:
        year, month, day, hour, minute, second, microsecond = date
        recorded = datetime(year, month, day, hour, minute, second, microsecond, timezone.utc)
    return Interaction(Request(method, url, headers_of(req_headers), content), response, recorded)


def dumps(items: list[Compact]) -> bytes | None:
    """``items`` written with :mod:`marshal`; ``None`` when they cannot be."""
    try:
        return marshal.dumps(items)
    except ValueError:
        return None


def items_from(part: bytes | memoryview) -> list[Compact]:
    """The items of a :func:`dumps`; ``ValueError``, ``TypeError`` or ``EOFError`` for a
    damaged one (each item's fields are checked as its interaction is made)."""
    items = marshal.loads(part)
    if type(items) is not list or not all(type(item) is tuple and len(item) == _FIELDS for item in items):
        raise ValueError("not a list of compact interactions")
    return items


_FIELDS = 10
