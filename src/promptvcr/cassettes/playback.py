"""How one replayed response is to be served: when its parts are due, and where it breaks.

A cassette puts a :class:`Playback` on the response it hands an interceptor only when the
test asked for recorded timing or a fault fired; otherwise ``Response.playback`` is
``None`` and replay takes its fast path. The interceptors carry it out through
:mod:`promptvcr.interceptors.playback`, the one place that sleeps and breaks streams.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Breakage", "Playback"]

#: How a connection fails. Each interceptor raises its own library's exception for it:
#: ``connect_timeout`` and ``read_timeout`` as the client's timeout errors, ``disconnect``
#: as what the client raises when the server closes the connection mid-body.
Breakage = Literal["connect_timeout", "read_timeout", "disconnect"]


@dataclass(frozen=True, slots=True)
class Playback:
    """Delays in seconds (already scaled to the requested pace) and an optional breakage.

    ``chunk_times[i]`` is when chunk ``i`` is due, counted from the moment the response
    headers were handed to the client. ``breakage`` happens instead of the headers when
    ``break_after`` is ``None``, else once ``break_after`` chunks have been delivered.
    """

    headers_delay: float = 0.0
    chunk_times: tuple[float, ...] | None = None
    breakage: Breakage | None = None
    break_after: int | None = None

    @property
    def breaks_before_headers(self) -> bool:
        return self.breakage is not None and self.break_after is None
