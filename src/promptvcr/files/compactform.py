"""A cassette's interactions as plain data: what a file is read into, and what both caches keep.

One interaction is one tuple::

    (method, url, request headers, request body, status, response headers, chunks,
     timing as (headers, chunks) or None, end, recorded as (y, m, d, H, M, S, us) or None,
     identity placeholders as a tuple of names)

of strings, bytes, numbers and tuples only (a large body kept beside the cassette is its
reference in place of its chunks: ``(path, size)``, see :mod:`promptvcr.cassettes.bodyfiles`;
the caches never hold its bytes) (headers as ``(name, value, name, value, ...)``),
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
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..cassettes.bodyfiles import BodyFile, BodyFileError, Reference, body_folder, is_reference
from ..cassettes.models import Interaction, Request, Response
from ..cassettes.playback import ENDS, ended
from ..cassettes.timing import Timing
from ..errors import CassetteFormatError

__all__ = [
    "Compact",
    "date_of",
    "dumps",
    "flat_headers",
    "header",
    "headers_of",
    "interaction",
    "is_item",
    "items_from",
]

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


def interaction(item: Compact, where: str, cassette: Path | None = None) -> Interaction:
    """The interaction ``item`` holds (``where`` names its cassette in a cut body's messages:
    ``" in PATH"``; ``cassette`` is that file, which a body file's reference is relative to);
    ``ValueError``, ``TypeError`` or ``IndexError`` for a damaged one, and
    :class:`~promptvcr.CassetteFormatError` for a body file missing or cut short."""
    method, url, req_headers, content, status, resp_headers, chunks, timing, end, date, identity = item
    if end not in ENDS:
        raise ValueError(end)
    timed = None if timing is None else Timing(*timing)
    # a body file's reference holds a str where chunks are bytes (checked whole by is_item)
    body: Sequence[bytes] = (
        list(chunks) if not chunks or type(chunks[0]) is bytes else _body_file(chunks, where, cassette)
    )
    response = Response(status, headers_of(resp_headers), body, timed)
    if end != "complete":
        response.end = end
        response.playback = ended(end, len(body), where)
    recorded = None
    if date is not None:
        year, month, day, hour, minute, second, microsecond = date
        recorded = datetime(year, month, day, hour, minute, second, microsecond, timezone.utc)
    return Interaction(Request(method, url, headers_of(req_headers), content), response, recorded, identity)


def _body_file(reference: tuple[str, int], where: str, cassette: Path | None) -> BodyFile:
    """The body file a compact item refers to, checked as the reader checks it."""
    if cassette is None:
        raise ValueError("a body file's reference, read without its cassette's path")
    try:
        return BodyFile(body_folder(cassette), Reference(reference))
    except BodyFileError as error:
        raise CassetteFormatError(
            f"Cassette {cassette} cannot be replayed: a response's body file: {error}.\n"
            f"Restore the file (it is committed beside the cassette), or record the cassette again "
            f"(PROMPTVCR_RECORD_MODE=rewrite).",
            path=cassette,
        ) from None


def dumps(items: list[Compact]) -> bytes | None:
    """``items`` written with :mod:`marshal`; ``None`` when they cannot be."""
    try:
        return marshal.dumps(items)
    except ValueError:
        return None


def items_from(part: bytes | memoryview) -> list[Compact]:
    """The items of a :func:`dumps`, every field of each checked (:func:`is_item`);
    ``ValueError``, ``TypeError`` or ``EOFError`` for a damaged one."""
    items = marshal.loads(part)
    if type(items) is not list or not all(map(is_item, items)):
        raise ValueError("not a list of compact interactions")
    return items


def _strings(value: Any, *, pairs: bool = False) -> bool:
    return (
        type(value) is tuple and all(type(part) is str for part in value) and not (pairs and len(value) % 2)
    )


def _number(value: Any) -> bool:
    return type(value) in (int, float) and value >= 0


def is_item(item: Any) -> bool:
    """Whether ``item`` is a compact interaction, each field of its type: what a cache read
    holds is checked whole before anything is made of it, as a file's items are."""
    if type(item) is not tuple or len(item) != _FIELDS:
        return False
    method, url, req_headers, content, status, resp_headers, chunks, timing, end, date, identity = item
    return (
        type(method) is str
        and type(url) is str
        and _strings(req_headers, pairs=True)
        and type(content) is bytes
        and type(status) is int
        and 100 <= status <= 599
        and _strings(resp_headers, pairs=True)
        and type(chunks) is tuple
        and (all(type(chunk) is bytes for chunk in chunks) or is_reference(chunks))
        and (
            timing is None
            or (
                type(timing) is tuple
                and len(timing) == 2
                and _number(timing[0])
                and type(timing[1]) is tuple
                and all(map(_number, timing[1]))
            )
        )
        and type(end) is str
        and end in ENDS
        and (date is None or _is_date(date))
        and _strings(identity)
    )


def _is_date(date: Any) -> bool:
    if type(date) is not tuple or len(date) != 7 or not all(type(n) is int for n in date):
        return False
    try:
        datetime(*date, tzinfo=timezone.utc)
    except (ValueError, OverflowError):
        return False
    return True


_FIELDS = 11
