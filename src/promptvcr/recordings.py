"""The recording of one response, from its headers to its last byte: what a cassette hands an
interceptor (or ``promptvcr serve``'s relay) as the :class:`~promptvcr.interceptors.decision.Recorder`
of a request it decided to record.

Kept beside :mod:`.cassette` (issue 40: that module holds the decision of each request, and no
more): the recorder reports to its cassette that the body is on its way (an answer never read
to its end is recorded as far as it came when the cassette exits), hands it the response once
complete, or tells it the response was lost as it arrived (its spool could not be written:
:meth:`promptvcr.files.saving.Saver.lost`), which fails the use instead of writing a cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .cassettes.models import Request, Response

if TYPE_CHECKING:
    from .cassette import Cassette

__all__ = ["ResponseRecording"]


class ResponseRecording:
    """The recording of one response, from its headers (``started``) to its last byte (call)."""

    __slots__ = ("_cassette", "_key", "_request")

    def __init__(self, cassette: Cassette, request: Request, key: str) -> None:
        self._cassette, self._request, self._key = cassette, request, key

    def started(self, abandon: Callable[[], None] | None = None) -> None:
        with self._cassette._lock:
            self._cassette._unfinished[id(self._request)] = (self._request, abandon)

    def __call__(self, response: Response) -> None:
        self._cassette._add_recorded(self._request, self._key, response)

    def lost(self, error: OSError) -> None:
        """The body could not be kept as it arrived: the use's error (see the module)."""
        with self._cassette._lock:
            self._cassette._unfinished.pop(id(self._request), None)
        saver = self._cassette._saver
        if saver is not None:
            saver.lost(self._request, error)
