"""A cassette's interactions as plain data: what a file is read into, and what both caches keep.

One interaction is one tuple::

    (method, url, request headers, request body, status, response headers, chunks,
     timing as (headers, chunks) or None, end, recorded as (y, m, d, H, M, S, us) or None)

of strings, bytes, numbers, dicts, lists and tuples only, so that :mod:`marshal` writes and
reads it (it constructs no other objects, unlike ``pickle``). A file's items are checked
straight into this form (:func:`.reading.read`), and its interactions made from it, the same
way on a first read as from the parse cache (:mod:`.parsecache`) or the memo of small files
(:mod:`.smallcache`), about 0.6 us each: a first read no longer builds each interaction field by
field and then walks it back into this form for the cache (issue 22).

Only a websocket session does not fit: its file is read every time, its items built whole.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..cassettes.models import Interaction, Request, Response
from ..cassettes.playback import ENDS, ended
from ..cassettes.timing import Timing

__all__ = ["Compact", "date_of", "dumps", "interaction", "interactions_from"]

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


def interaction(item: Compact, where: str) -> Interaction:
    """The interaction ``item`` holds (``where`` names its cassette in a cut body's messages:
    ``" in PATH"``); ``ValueError``, ``TypeError`` or ``IndexError`` for a damaged one."""
    method, url, req_headers, content, status, resp_headers, chunks, timing, end, date = item
    if end not in ENDS:
        raise ValueError(end)
    response = Response(status, resp_headers, chunks, None if timing is None else Timing(*timing))
    if end != "complete":
        response.end = end
        response.playback = ended(end, len(chunks), where)
    recorded = None
    if date is not None:
        year, month, day, hour, minute, second, microsecond = date
        recorded = datetime(year, month, day, hour, minute, second, microsecond, timezone.utc)
    return Interaction(Request(method, url, req_headers, content), response, recorded)


def dumps(items: list[Compact]) -> bytes | None:
    """``items`` written with :mod:`marshal`; ``None`` when they cannot be."""
    try:
        return marshal.dumps(items)
    except ValueError:
        return None


def interactions_from(part: bytes | memoryview, path: Path) -> Iterator[Interaction]:
    """The interactions of a :func:`dumps` (``path`` is their cassette, for messages), for the
    caller's list; ``ValueError``, ``TypeError``, ``EOFError`` or ``IndexError`` for a damaged
    one, as they are made."""
    where = f" in {path}"
    return (interaction(item, where) for item in marshal.loads(part))
