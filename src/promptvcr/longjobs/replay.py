"""What one cassette does for the long jobs it replays: their answers' declared waits served as
none (:mod:`.waits`), and with ``timing="fast"`` the code's sleeps skipped (:mod:`.clock`) while
one of its jobs is open: created or polled, its last replayed state not an end state."""

from __future__ import annotations

import contextvars
from collections.abc import Callable

from ..cassettes.jobs import job_state
from ..cassettes.models import Request, Response
from .waits import declares_waits, without_waits

__all__ = ["JobReplay"]


class JobReplay:
    """Made with the cassette: ``keep_waits`` when replay keeps the recorded pace, ``fast`` for
    ``timing="fast"``. :meth:`start` and :meth:`stop` bracket one use of the cassette."""

    def __init__(self, *, keep_waits: bool, fast: bool) -> None:
        self.keep_waits = keep_waits
        self.fast = fast
        #: The jobs whose last replayed state had not ended (by job id).
        self.open: set[str] = set()
        self._token: contextvars.Token[tuple[Callable[[], bool], ...]] | None = None
        self._skips: Callable[[], bool] = lambda: bool(self.open)  # one object: what the clock knows

    def start(self, *, replaying: bool) -> None:
        """A use begins; the sleeps are fast-forwarded only when it replays (never when it records)."""
        self.open = set()
        if self.fast and replaying and self._token is None:
            from . import clock  # with asyncio and inspect: imported only by timing="fast"

            self._token = clock.enter(self._skips)

    def stop(self) -> None:
        self.open = set()
        if self._token is not None:
            from . import clock

            token, self._token = self._token, None
            clock.leave(self._skips, token)

    def served(self, request: Request, response: Response) -> Response:
        """``response``, replayed for ``request``, as it is served (under the cassette's lock)."""
        if self._token is not None and (state := job_state(
            request.method, request.url, response.content_type, response.chunks
        )) is not None:  # fmt: skip
            if state.ended:
                self.open.discard(state.job)
            else:
                self.open.add(state.job)
        if not self.keep_waits and declares_waits(response):
            return without_waits(response)
        return response
