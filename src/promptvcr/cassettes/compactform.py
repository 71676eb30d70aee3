"""Interactions in a compact form of plain data, for :mod:`marshal`: what the parse cache
(:mod:`.parsecache`) and the memo of small files (:mod:`.smallcache`) keep.

``marshal`` writes and reads only plain values (tuples, lists, dicts, strings, bytes, numbers)
and constructs no other objects (unlike ``pickle``), so an interaction is kept as a tuple of
them and made again here. A request or response whose headers and body were not made yet
(see :mod:`.reading`) is kept as what they are to be made from, so a first read makes none.
"""

from __future__ import annotations

import dataclasses
import marshal
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .models import Interaction, Request, Response
from .playback import ENDS, ended
from .reading import StoredRequest, StoredResponse
from .timing import Timing

__all__ = ["compact_part", "interactions_from"]

# The compact form of one interaction:
# (method, url, request, status, response, timing as (headers, chunks) or None, end,
#  recorded as (y, m, d, H, M, S, us) or None), where the request is (headers, body) and the
# response (headers, chunks), or either is what its headers and body are still to be made from
# (bytes: see .reading): kept so, a first read does not make them all.
_Compact = tuple[Any, ...]
_REQUESTS = (Request, StoredRequest)
_RESPONSES = (Response, StoredResponse)


def _compact(interaction: Interaction) -> _Compact | None:
    """``None`` for an interaction the compact form cannot hold exactly."""
    req, resp, recorded = interaction.request, interaction.response, interaction.recorded
    date = _date_parts(recorded)
    if date is False or type(req) not in _REQUESTS or type(resp) not in _RESPONSES:
        return None
    timing = None if resp.timing is None else (resp.timing.headers, resp.timing.chunks)
    source = req.unmade if type(req) is StoredRequest else None
    if (
        source is not None
        and type(resp) is StoredResponse
        and resp.unmade is source
        and resp.playback is None
        and resp.end == "complete"
    ):  # as read from its file: nothing made yet (see .reading)
        return (req.method, req.url, source, resp.status, source, timing, "complete", date)
    if resp.websocket is not None or not _own_playback(resp):
        return None
    request = req.unmade if type(req) is StoredRequest else None
    response = resp.unmade if type(resp) is StoredResponse else None
    return (
        req.method,
        req.url,
        (req.headers, req.content) if request is None else request,
        resp.status,
        (resp.headers, resp.chunks) if response is None else response,
        timing,
        resp.end,
        date,
    )


def _date_parts(recorded: datetime | None) -> tuple[int, ...] | bool | None:
    """A recorded date in compact form; ``False`` for one it cannot hold exactly."""
    if recorded is None:
        return None
    if recorded.tzinfo is not timezone.utc or recorded.fold:
        return False
    return (
        recorded.year,
        recorded.month,
        recorded.day,
        recorded.hour,
        recorded.minute,
        recorded.second,
        recorded.microsecond,
    )


def _own_playback(resp: Response) -> bool:
    """Whether the response's playback is the one its ``end`` gives (rebuilt when read)."""
    if resp.playback is None and resp.end == "complete":  # without making a stored one's chunks
        return True
    expected = ended(resp.end, len(resp.chunks), "")
    if expected is None or resp.playback is None:
        return expected is resp.playback
    return dataclasses.replace(resp.playback, reason=expected.reason) == expected


def _interaction(item: _Compact, path: Path, index: int) -> Interaction:
    method, url, request, status, response, timing, end, date = item
    if end not in ENDS:
        raise ValueError(end)
    where = (path, index)
    times = None if timing is None else Timing(*timing)
    if type(request) is bytes:
        req: Request = StoredRequest.of(method, url, request, where)
    else:
        req = Request(method, url, *request)
    if type(response) is bytes:
        resp: Response = StoredResponse.of(status, times, response, where)
    else:
        headers, chunks = response
        resp = Response(status, headers, chunks, times)
    if end != "complete":
        resp.end = end
        resp.playback = ended(end, len(resp.chunks), f" in {path}")
    recorded = None
    if date is not None:
        year, month, day, hour, minute, second, microsecond = date
        recorded = datetime(year, month, day, hour, minute, second, microsecond, timezone.utc)
    return Interaction(req, resp, recorded)


def compact_part(interactions: list[Interaction]) -> bytes | None:
    """``interactions`` in compact form, written with :mod:`marshal`; ``None`` when one of them
    does not fit it (they are then read from their file every time)."""
    items: list[_Compact] = []
    for interaction in interactions:
        item = _compact(interaction)
        if item is None:
            return None
        items.append(item)
    try:
        return marshal.dumps(items)
    except ValueError:
        return None


def interactions_from(part: bytes | memoryview, path: Path) -> Iterator[Interaction]:
    """The interactions of a :func:`compact_part` (``path`` is their cassette, for messages), for
    the caller's list; ``ValueError``, ``TypeError``, ``EOFError`` or ``IndexError`` for a
    damaged one, as they are made."""
    return (_interaction(item, path, index) for index, item in enumerate(marshal.loads(part)))
