"""How one replayed response is to be served: its pace, when its parts are due, where it breaks.

Pacing lives here: the ``timing=`` option (:func:`pace_factor`), and the recorded timing of
an answer scaled into a :class:`Playback` (:func:`paced`).

A cassette puts a :class:`Playback` on the response it hands an interceptor only when the
test asked for recorded timing or a fault fired; otherwise ``Response.playback`` is
``None`` and replay takes its fast path. The interceptors carry it out through
:mod:`promptvcr.interceptors.pacing`, the one place that sleeps and breaks streams.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .models import Response

__all__ = [
    "ENDS",
    "Breakage",
    "End",
    "Gate",
    "Pace",
    "Playback",
    "StreamNotRecorded",
    "ended",
    "pace_factor",
    "paced",
    "untimed_message",
]

#: A held chunk's gate: the bytes to send now (maybe none) and whether the chunk went with them.
Gate = Callable[[], tuple[bytes, bool]]

#: What ``use_cassette(timing=...)`` accepts: ``"none"``, ``"fast"``, ``"recorded"`` or a speed factor.
Pace = str | float | None

#: How a connection fails. Each interceptor raises its own library's exception for it:
#: ``connect_timeout`` and ``read_timeout`` as the client's timeout errors, ``disconnect``
#: as what the client raises when the server closes the connection mid-body.
Breakage = Literal["connect_timeout", "read_timeout", "disconnect", "unrecorded"]

#: How a recorded body ended: read to its end (``complete``), closed by the application
#: before its end (``closed``: replay then serves what was received, and a read past it
#: raises :class:`StreamNotRecorded`), or cut by the server (``disconnect``, ``read_timeout``:
#: replay breaks the same way after the chunks received).
End = Literal["complete", "closed", "disconnect", "read_timeout"]
ENDS: tuple[End, ...] = ("complete", "closed", "disconnect", "read_timeout")


class StreamNotRecorded(Exception):
    """A replayed stream is read further than the application read it while recording."""


@dataclass(frozen=True, slots=True)
class Playback:
    """Delays in seconds (already scaled to the requested pace) and an optional breakage.

    ``chunk_times[i]`` is when chunk ``i`` is due, counted from the moment the response
    headers were handed to the client. ``breakage`` happens instead of the headers when
    ``break_after`` is ``None``, else once ``break_after`` chunks have been delivered.
    ``reason`` is the message of an ``unrecorded`` breakage.
    """

    headers_delay: float = 0.0
    chunk_times: tuple[float, ...] | None = None
    breakage: Breakage | None = None
    break_after: int | None = None
    reason: str = ""
    #: A session's stream (see :mod:`.sessions`): chunk ``i`` is replaced by what ``gates[i]()``
    #: says to send, asked until it says the chunk went (``None``: the chunk, no wait); one more
    #: gate is asked while ``hold_open`` keeps an ``unrecorded`` end open until closed.
    gates: tuple[Gate | None, ...] | None = None
    hold_open: bool = False

    @property
    def breaks_before_headers(self) -> bool:
        return self.breakage is not None and self.break_after is None


def untimed_message(path: object, timing: Pace) -> str:
    """The warning for a cassette whose interactions were recorded without timing."""
    return (
        f"Cassette {path} has interactions recorded without timing; timing={timing!r} "
        f"replays them without delays. Record them again to keep their timing "
        f"(PROMPTVCR_RECORD_MODE=rewrite)."
    )


def pace_factor(timing: Pace) -> float | None:
    """The factor replay multiplies recorded delays by, or ``None`` to serve without delays.

    ``"none"`` (the default) replays as fast as possible, ``"recorded"`` at the recorded
    pace, and a number scales it: ``timing=0.1`` is ten times faster than recorded. ``"fast"``
    serves as fast as ``"none"`` and also skips the application's sleeps between the polls of a
    replayed long job (see :mod:`promptvcr.longjobs`).
    """
    if timing is None or timing == "none" or timing == "fast":
        return None
    if timing == "recorded":
        return 1.0
    if (
        isinstance(timing, int | float)
        and not isinstance(timing, bool)
        and math.isfinite(timing)
        and timing > 0
    ):
        return float(timing)
    raise ValueError(
        f"timing={timing!r} is not a replay pace. Use timing='none' (as fast as possible, the default), "
        f"timing='fast' (that, and the code's sleeps between polls of a replayed long job skipped), "
        f"timing='recorded' (the recorded gaps) or a positive speed factor such as timing=0.1 "
        f"(ten times faster than recorded)."
    )


def paced(response: Response, factor: float | None, playback: Playback | None = None) -> Response:
    """A copy of ``response`` served at ``factor`` times its recorded pace (plus ``playback``'s
    breakage); the response itself when there is nothing to do."""
    timing = response.timing
    if factor is None or timing is None:
        return response if playback is None else dataclasses.replace(response, playback=playback)
    scaled = timing.scaled(factor)
    playback = dataclasses.replace(
        playback or response.playback or Playback(),
        headers_delay=scaled.headers,
        chunk_times=scaled.chunks or None,
    )
    return dataclasses.replace(response, playback=playback)


def ended(end: End, chunks: int, where: str) -> Playback | None:
    """The playback that ends a replayed body as the recorded one ended (``None``: complete).

    ``where`` names the cassette in the message of a read past a body closed early.
    """
    if end == "complete":
        return None
    if end == "closed":
        reason = (
            f"promptvcr: this response was recorded only as far as the application read it "
            f"({chunks} chunk(s)) before closing it{where}, and the code now reads further. "
            f"Record it again with the code reading it to the end (PROMPTVCR_RECORD_MODE=rewrite)."
        )
        return Playback(breakage="unrecorded", break_after=chunks, reason=reason)
    return Playback(breakage=end, break_after=chunks)
