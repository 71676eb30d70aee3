"""When a recorded response arrived, and the pace at which replay hands it out again.

Recording measures two things with a monotonic clock: the time from sending the request
to the response headers, and for every chunk of the body its arrival after the headers
(the response's first byte). Offsets after one instant rather than gaps between chunks
are kept so that replay sleeps *until* each chunk is due: time the application spends
between reads is then not added on top of the recorded gaps.

The network hands a recorder chunks that do not line up with the chunks a cassette
replays (one per SSE event, or the whole body), so :func:`stored_offsets` moves the
measurements onto the stored chunks: a chunk is due when its last byte had arrived.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .bodyfiles import slice_ends
from .spool import body_size, chunk_lengths
from .sse import event_ends

__all__ = [
    "Timing",
    "TimingRecorder",
    "stored_offsets",
    "timing_from_data",
    "timing_to_data",
]

#: Stored timings are rounded to the millisecond: finer figures are noise, and churn in a diff.
PRECISION = 3


@dataclass(frozen=True, slots=True)
class Timing:
    """Seconds from sending the request to the response headers, and from the headers to each chunk."""

    headers: float
    chunks: tuple[float, ...] = ()

    def scaled(self, factor: float) -> Timing:
        return Timing(self.headers * factor, tuple(offset * factor for offset in self.chunks))


class TimingRecorder:
    """The stopwatch an interceptor runs while it records one response.

    Create it just before the request is sent, call :meth:`headers_arrived` when the
    client hands back the response, :meth:`chunk_arrived` as each body chunk is read,
    and put :meth:`timing` on the recorded :class:`~promptvcr.Response`.
    """

    __slots__ = ("_chunks", "_headers_at", "_sent_at")

    def __init__(self) -> None:
        self._sent_at = time.perf_counter()
        self._headers_at: float | None = None
        self._chunks: list[float] = []

    def headers_arrived(self) -> None:
        self._headers_at = time.perf_counter()

    def chunk_arrived(self) -> None:
        if self._headers_at is None:
            self.headers_arrived()
        self._chunks.append(time.perf_counter() - self._headers_at)  # type: ignore[operator]

    def timing(self) -> Timing:
        headers_at = self._headers_at if self._headers_at is not None else self._sent_at
        return Timing(headers_at - self._sent_at, tuple(self._chunks))


def stored_offsets(
    timing: Timing, received: Sequence[bytes], stored_ends: Sequence[int]
) -> tuple[float, ...]:
    """The offsets of the stored chunks ending at byte positions ``stored_ends`` of the body.

    ``received`` are the chunks as they came off the network, whose arrival ``timing``
    holds. A stored chunk is due when the received chunk holding its last byte arrived.
    Without a measurement for every received chunk the result is empty: no timing is
    better than a wrong one.
    """
    if len(timing.chunks) != len(received):
        return ()
    lengths = chunk_lengths(received)  # a spooled body is not read for them
    offsets: list[float] = []
    index, received_end = 0, 0
    for end in stored_ends:
        while index < len(lengths) and received_end + lengths[index] < end:
            received_end += lengths[index]
            index += 1
        if index == len(lengths):
            return ()
        offsets.append(timing.chunks[index])
    return tuple(offsets)


def _frame_ends(content: bytes) -> list[int]:
    """Where each AWS event-stream frame ends: a frame starts with its total length (4 bytes)."""
    ends, at = [], 0
    while at + 4 <= len(content):
        at += max(4, int.from_bytes(content[at : at + 4], "big"))
        ends.append(min(at, len(content)))
    return ends


def timing_to_data(
    timing: Timing, received: Sequence[bytes], *, body_key: str, stored_chunks: int
) -> dict[str, Any]:
    """The stored form: ``{headers: s, chunks: [s, ...]}``, one offset per stored chunk.

    ``body_key`` is how the body is stored (see :mod:`.bodies`): ``events`` and ``frames``
    replay one chunk per event or frame, a body ``file`` one per slice (:mod:`.bodyfiles`);
    any other body replays as a single chunk.
    ``stored_chunks`` is how many chunks the stored body replays: offsets that do not
    match them one for one are left out rather than make the cassette unreadable.
    """
    if body_key == "events":
        offsets = stored_offsets(timing, received, event_ends(b"".join(received)))
    elif body_key == "frames":
        offsets = stored_offsets(timing, received, _frame_ends(b"".join(received)))
    elif body_key == "file":  # its slices, due as the bytes of each had arrived
        offsets = stored_offsets(timing, received, slice_ends(body_size(received)))
    elif len(received) == 1 and len(timing.chunks) == 1:  # most answers: one chunk, due when it came
        offsets = timing.chunks if received[0] else ()
    else:  # one stored chunk: its end is the body's length (a large body is not joined for it)
        size = body_size(received)
        offsets = stored_offsets(timing, received, [size] if size else [])
    data: dict[str, Any] = {"headers": round(timing.headers, PRECISION)}
    if len(offsets) == stored_chunks:
        data["chunks"] = [round(t, PRECISION) for t in offsets]
    return data


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _seconds(value: Any, where: str) -> float:
    if not _is_number(value) or value < 0:
        raise ValueError(f"{where} is {value!r}, expected a number of seconds (0 or more)")
    return float(value)


def timing_from_data(value: Any, chunk_count: int) -> Timing:
    """A stored timing, checked against the body it times; ``ValueError`` says what is wrong."""
    if not isinstance(value, dict):
        raise ValueError(f"timing is a {type(value).__name__}, expected a mapping with headers and chunks")
    headers = _seconds(value.get("headers", 0), "timing.headers")
    chunks = value.get("chunks")
    if chunks is None:
        return Timing(headers)
    if not isinstance(chunks, list):
        raise ValueError(f"timing.chunks is a {type(chunks).__name__}, expected a list of seconds")
    if len(chunks) != chunk_count:
        raise ValueError(
            f"timing.chunks has {len(chunks)} entries for a body of {chunk_count} chunks "
            f"(one per event of a stream, else one); an edited body needs its timing removed"
        )
    return Timing(headers, tuple(_seconds(c, f"timing.chunks[{i}]") for i, c in enumerate(chunks)))
