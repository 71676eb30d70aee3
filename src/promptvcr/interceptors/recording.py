"""One real response being recorded: the part every interceptor shares.

An interceptor reads the body of a real response chunk by chunk as it arrives and hands
each chunk on to the application at once: nothing is buffered before the application sees
it. Each chunk, decoded, also goes to a :class:`Recording`, which keeps a copy,
notes when it arrived (:class:`~promptvcr.cassettes.timing.TimingRecorder`) and, once the
body is complete, gives the recorded :class:`~promptvcr.Response` to the handler's
:class:`~.decision.Recorder`. Each interceptor only adds a thin adapter that moves the
bytes in its library's own way, sync or async.

What happens when the application closes a response before its end is decided here
once, by :meth:`Recording.reads_rest`: a small body of declared length (an answer or an
error body the application did not read, already on its way) is read to its end; anything
else, a stream above all, stops at once, as it does without promptvcr, and what was
received is recorded with ``end: closed`` (see :func:`~promptvcr.cassettes.playback.ended`).
A body the server cuts is recorded too, with ``end: disconnect`` or ``end: read_timeout``,
so that replay breaks where the recording broke.

A large body is not held: past :data:`~promptvcr.cassettes.largebody.LARGE_BODY_BYTES` the
chunks go to a private temporary file (:mod:`~promptvcr.cassettes.spool`), one length check
per chunk until then. A spool that cannot be written (the temporary folder full, a file size
limit) loses the recording, never the answer: the application still gets every chunk, nothing
is recorded as a provider's cut (``end: closed``/``disconnect``), and the recorder is told
(:meth:`Recording.lose`), so the cassette raises :class:`~promptvcr.CassetteWriteError` at exit
(``promptvcr serve``: an error in the report, and exit status 1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set

from ..cassettes.largebody import LARGE_BODY_BYTES
from ..cassettes.models import Response
from ..cassettes.playback import End, ended
from ..cassettes.spool import SpooledChunks
from ..cassettes.timing import TimingRecorder
from ..cassettes.wire import WIRE_HEADERS
from ..policies import budget
from .decision import Recorder

__all__ = ["READ_REST_BYTES", "Recording"]

_DONE = re.compile(rb"(?:^|[\r\n])data: ?\[DONE\](?:\r\n|\r|\n){2}$")

#: A body closed early is still read to its end when it declared a length up to this.
READ_REST_BYTES = 256 * 1024


class Recording:
    """Create it just before the request is sent, then, in order: :meth:`headers_arrived`,
    :meth:`add` for each chunk of the body, :meth:`complete` at its end (or :meth:`fail`),
    and :meth:`hand_over` to record it."""

    __slots__ = (
        "_chunks", "_end", "_handed", "_headers", "_held", "_length", "_lost", "_recorder", "_status",
        "_watch",
    )  # fmt: skip

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._watch = TimingRecorder()
        self._status = 0
        self._headers: dict[str, str] = {}
        self._chunks: list[bytes] | SpooledChunks = []
        self._held = 0  # bytes added since the chunks were last moved to their spool (or ever)
        self._end: End | None = None
        self._handed = False
        self._length: int | None = None
        self._lost = False

    def headers_arrived(
        self, status: int, headers: Iterable[tuple[str, str]], wire: Set[str] = WIRE_HEADERS
    ) -> None:
        """The response's status and headers, as its library lists them (of a repeated name,
        the last value is kept); the ``wire`` headers are not recorded."""
        self._watch.headers_arrived()
        kept: dict[str, str] = {}
        length: str | None = None
        for name, value in headers:
            name = name.lower()
            if name not in wire:
                kept[name] = value
            if name == "content-length" and length is None:
                length = value
        self._keep(status, kept, length)

    def headers_decoded(self, status: int, headers: dict[str, str], wire: Set[str] = WIRE_HEADERS) -> None:
        """:meth:`headers_arrived` for headers already read into a dictionary, each name once and
        lower-cased as bytes (the httpx family's ``decoded_items``): the same result, without
        lower-casing the ASCII names again, as every recorded response comes here."""
        self._watch.headers_arrived()
        kept: dict[str, str] = {}
        for name, value in headers.items():
            if not name.isascii():  # bytes.lower() left its other letters as they were
                name = name.lower()
            if name not in wire:
                kept[name] = value
        self._keep(status, kept, headers.get("content-length"))

    def headers_kept(self, status: int, headers: dict[str, str], length: str | None) -> None:
        """The headers to record (lower-case names, no wire header) and the content-length
        received, read by the interceptor in one pass (``_httpx_record.received_headers``)."""
        self._watch.headers_arrived()
        self._keep(status, headers, length)

    def _keep(self, status: int, headers: dict[str, str], length: str | None) -> None:
        """What both readers of the headers keep: the status, the headers recorded, and the
        length the body announced (a malformed one is no length)."""
        self._status = status
        self._headers = headers
        self._length = int(length) if length is not None and length.strip().isdigit() else None

    def started(self) -> None:
        """Report the body as on its way, so that a response the application then neither
        reads to the end nor closes is reported when the cassette exits (see
        :meth:`~.decision.Recorder.started`): if it is still unfinished when the cassette
        exits, :meth:`abandon` records what arrived."""
        self._recorder.started(self.abandon)

    def add(self, chunk: bytes) -> None:
        """A chunk of the decoded body, as it arrived."""
        if self._lost:
            return
        try:
            self._chunks.append(chunk)
            self._held += len(chunk)
            if self._held > LARGE_BODY_BYTES:
                self._spool()
        except OSError as error:  # the spool's file: ENOSPC, EFBIG (see the module)
            self.lose(error)
            return
        self._watch.chunk_arrived()

    def lose(self, error: OSError) -> None:
        """The body cannot be kept (see the module): nothing of it is recorded, the recorder is
        told why, and the application's reading goes on untouched."""
        self._lost = self._handed = True
        self._end = self._end or "complete"  # ended for the interceptor: nothing more to record
        self._chunks = []
        lost = getattr(self._recorder, "lost", None)
        if lost is not None:
            lost(error)

    def _spool(self) -> None:
        """The body passed the size held in memory: its chunks move to a temporary file, and
        each later one goes there as it comes (after that, this runs once per threshold)."""
        if isinstance(self._chunks, list):
            self._chunks = SpooledChunks(self._chunks)
        self._held = 0

    def fail(self, error: BaseException | None = None) -> None:
        """Reading the body failed (the server cut it, or went silent): what arrived is
        recorded as cut that way, and nothing more is read."""
        if self._end is None:
            timeout = isinstance(error, TimeoutError) or "timeout" in type(error).__name__.lower()
            self._end = "read_timeout" if timeout else "disconnect"
            self.hand_over()

    def complete(self) -> None:
        """The body was read to its end."""
        if self._end is None:
            self._end = "complete"

    def close_early(self) -> None:
        """The application let go of the body before its end: what arrived is recorded.

        An event stream whose last event is ``data: [DONE]`` is complete: SDKs close it
        there, before the end of the HTTP body that follows at once, but may read on to it
        in another version or in async code (openai's drains it over HTTP/1.1)."""
        if self._end is None:
            self._end = "complete" if _DONE.search(b"".join(self._chunks[-2:])) else "closed"
            self.hand_over()

    def abandon(self) -> None:
        """The cassette exits while the body is still unfinished: the application's consumer
        raised, or let the stream go without closing it. What arrived was paid for: recorded as
        closed there (issue 42), as :meth:`close_early` records a stream closed before its end."""
        self.close_early()

    @property
    def closed_early(self) -> bool:
        return self._end == "closed"

    @property
    def ended(self) -> bool:
        """The body was read to its end, reading it failed, or it was closed early."""
        return self._end is not None

    def reads_rest(self) -> bool:
        """Whether the rest of the body must still be read now that the application closes
        the response before its end: only a small body of declared length; else the
        recording ends here (:meth:`close_early`)."""
        if self._end is not None:
            return False
        if self._length is not None and self._length <= READ_REST_BYTES:
            return True
        self.close_early()
        return False

    def hand_over(self) -> None:
        """Give the response to the recorder, once it has ended; nothing before."""
        if self._end is not None and not self._handed:
            self._handed = True
            chunks, self._chunks = self._chunks, []  # a reader still running adds to no recording
            headers = self._headers
            if self._length and not any(chunks):  # HEAD: the length of the body not sent
                headers = {**headers, "content-length": str(self._length)}
            response = Response(
                status=self._status,
                headers=headers,
                chunks=chunks,
                timing=self._watch.timing(),
                end=self._end,
                playback=ended(self._end, len(chunks), ""),
            )
            self._recorder(response)
            budget.spend(response)  # a live answer, recorded or verified: the run's budget pays for it
