"""One real response being recorded: the part every interceptor shares.

An interceptor reads the decoded body of a real response chunk by chunk as it arrives
and hands each chunk to the application at once: nothing is buffered before the
application sees it. Each chunk also goes to a :class:`Recording`, which keeps a copy,
notes when it arrived (:class:`~promptvcr.cassettes.timing.TimingRecorder`) and, once the
body is complete, gives the recorded :class:`~promptvcr.Response` to the handler's
:class:`~.decision.Recorder`. Each interceptor only adds a thin adapter that moves the
bytes in its library's own way, sync or async.

What happens when the application closes a response before its end is decided here
once, by :meth:`Recording.reads_rest`: today the rest is read, so that the cassette holds
the whole answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Set

from ..cassettes.models import Response
from ..cassettes.timing import TimingRecorder
from ..cassettes.wire import WIRE_HEADERS
from .decision import Recorder

__all__ = ["Recording"]


class Recording:
    """Create it just before the request is sent, then, in order: :meth:`headers_arrived`,
    :meth:`add` for each chunk of the body, :meth:`complete` at its end (or :meth:`fail`),
    and :meth:`hand_over` to record it."""

    __slots__ = ("_chunks", "_complete", "_failed", "_handed", "_headers", "_recorder", "_status", "_watch")

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._watch = TimingRecorder()
        self._status = 0
        self._headers: dict[str, str] = {}
        self._chunks: list[bytes] = []
        self._complete = False
        self._failed = False
        self._handed = False

    def headers_arrived(
        self, status: int, headers: Iterable[tuple[str, str]], wire: Set[str] = WIRE_HEADERS
    ) -> None:
        """The response's status and headers, as its library lists them (of a repeated name,
        the last value is kept); the ``wire`` headers are not recorded."""
        self._watch.headers_arrived()
        self._status = status
        self._headers = {k.lower(): v for k, v in headers if k.lower() not in wire}

    def started(self) -> None:
        """Report the body as on its way, so that a response the application then neither
        reads to the end nor closes is reported when the cassette exits (see
        :meth:`~.decision.Recorder.started`)."""
        self._recorder.started()

    def add(self, chunk: bytes) -> None:
        """A chunk of the decoded body, as it arrived."""
        self._chunks.append(chunk)
        self._watch.chunk_arrived()

    def fail(self) -> None:
        """Reading the body failed: the response is not recorded, and not read any further."""
        self._failed = True

    def complete(self) -> None:
        """The body was read to its end."""
        self._complete = True

    @property
    def ended(self) -> bool:
        """The body was read to its end, or reading it failed."""
        return self._complete or self._failed

    def reads_rest(self) -> bool:
        """Whether the rest of the body must still be read now that the application closes
        the response: while it has not ended, so that the cassette holds the whole answer."""
        return not self.ended

    def hand_over(self) -> None:
        """Give the complete response to the recorder, once; nothing if it is not complete."""
        if self._complete and not self._handed:
            self._handed = True
            response = Response(
                status=self._status, headers=self._headers, chunks=self._chunks, timing=self._watch.timing()
            )
            self._recorder(response)
