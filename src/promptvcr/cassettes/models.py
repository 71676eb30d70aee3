"""The values every other part of promptvcr passes around: requests, responses, interactions.

They are plain data, independent of any HTTP library, so that the cassette logic can be
tested without a client and each interceptor only converts to and from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from .playback import End, Playback
from .sessions import served
from .timing import Timing
from .wsframes import WebSocketSession

__all__ = ["Interaction", "LazyRequest", "Outcome", "Play", "Request", "Response"]


@dataclass(slots=True)
class Request:
    """An HTTP request as promptvcr sees it: header names lower-case, the body fully read.

    ``strings``: set when ``content`` is a large JSON body's document with stand-ins for its
    long strings (:mod:`.largejson`; ``promptvcr serve`` keys a large request so), the strings
    themselves by stand-in, on disk, for the cassette writer. Not compared: the stand-ins name
    the strings' digests, and a request holding the whole body has the same key."""

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes = b""
    strings: Mapping[str, Sequence[bytes]] | None = field(default=None, compare=False, repr=False)

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class LazyRequest(Request):
    """A :class:`Request` whose headers are copied from the HTTP library's on first use.

    A replayed request whose key is already known never reads its headers: an interceptor
    hands over the content-type it needs and the library's headers (anything with
    ``items()``, or any value with the function ``read`` that makes the dict of it),
    copied only when read. It compares equal to a :class:`Request` with the same values,
    and is copied or pickled as one.
    """

    __slots__ = ("_read", "_source", "raw_content_type")

    _source: Any
    _read: Callable[[Any], dict[str, str]]
    #: The ``content-type`` header as sent ("" without one), read before the others.
    raw_content_type: str

    @classmethod
    def of(
        cls,
        method: str,
        url: str,
        source: Any,
        content: bytes,
        content_type: str,
        read: Callable[[Any], dict[str, str]] | None = None,
    ) -> LazyRequest:
        request = cls.__new__(cls)
        request.method = method
        request.url = url
        request.content = content
        request._source = source
        request._read = read or _items
        request.raw_content_type = content_type
        return request

    def __getattr__(self, name: str) -> Any:
        # Only reached for a slot still unset: the headers, copied now, once; or the
        # content-type of one built by ``dataclasses.replace`` (headers given, no source).
        if name == "headers":
            headers = self.headers = self._read(self._source)
            self._source = None  # read once: what it holds may go
            return headers
        if name == "raw_content_type":
            value = self.raw_content_type = self.headers.get("content-type", "")
            return value
        if name == "strings":  # a request an interceptor built holds its whole body
            return None
        raise AttributeError(name)

    @property
    def content_type(self) -> str:
        return self.raw_content_type.split(";", 1)[0].strip().lower()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return (self.method, self.url, self.headers, self.content) == (
            other.method,
            other.url,
            other.headers,
            other.content,
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[Request], tuple[str, str, dict[str, str], bytes]]:
        # Copied or pickled as the plain request it stands for (the reader may not pickle).
        return Request, (self.method, self.url, self.headers, self.content)


def _items(source: Any) -> dict[str, str]:
    return dict(source.items())


@dataclass(slots=True)
class Response:
    """An HTTP response, decoded (no content-encoding), its body kept as the chunks to replay.

    A streamed (SSE) response holds one chunk per event, so replay hands the client the
    events one at a time, as the provider did; any other response holds a single chunk.

    ``timing`` is when it arrived while it was recorded (``None`` for cassettes recorded
    before promptvcr kept timing). ``playback`` is set only on the copy a cassette serves
    when a test asked for recorded timing or a fault fired: interceptors that see it hand
    it to :mod:`promptvcr.interceptors.playback`, and take the fast path when it is ``None``.
    ``end`` is how the recorded body ended (see :data:`~.playback.End`): a response the
    application closed early, or the server cut, holds the chunks received before that.
    """

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    chunks: Sequence[bytes] = field(default_factory=list)
    timing: Timing | None = None
    playback: Playback | None = None
    end: End = "complete"
    #: The frames of a websocket session, on its ``101`` handshake response (see :mod:`.wsframes`).
    websocket: WebSocketSession | None = None
    #: The headers an interceptor serves this response with, kept from its second replay on (a
    #: response served again is likely served many times): not compared, not copied.
    wire_headers: Any = field(default=None, init=False, repr=False, compare=False)
    #: The tokens the provider reported in it, (input, output), when they were counted already
    #: (a response of a small cassette, kept in their memo: see :mod:`.smallcache`); not compared.
    usage: tuple[int, int] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def content(self) -> bytes:
        return b"".join(self.chunks)

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def is_event_stream(self) -> bool:
        return self.content_type == "text/event-stream"

    def served(self, pace: float | None, played: Sequence[Play], method: str) -> Response:
        """This response, to a request sent with ``method``, as a cassette serves it (see
        :func:`.sessions.served`)."""
        return served(self, pace, played, method)


@dataclass(slots=True)
class Interaction:
    """One recorded request and the response the server gave to it.

    ``recorded`` is when it was recorded (UTC; ``None`` for interactions recorded before
    promptvcr kept the date, or built by hand): what ``max_age`` measures. ``identity`` names
    the placeholders of the recording machine's values written into it (``home``, ``user``:
    see :mod:`promptvcr.identity`): replay restores those, and nothing the provider said.
    """

    request: Request
    response: Response
    recorded: datetime | None = None
    identity: tuple[str, ...] = ()


Outcome = Literal["replayed", "recorded", "passthrough", "fault", "ignored", "verified", "tool-drift"]


@dataclass(slots=True, frozen=True)
class Play:
    """What happened to one request while a cassette was in use.

    ``outcome`` is ``"replayed"`` when the response came from the cassette, ``"recorded"``
    when it came from the network and was (or will be, on exit) written to the cassette,
    and ``"passthrough"`` when it came from the network and is not kept; ``"fault"`` when
    an injected fault answered it (see :mod:`promptvcr.faults`); ``"ignored"`` when it went to
    a background host that promptvcr answers locally (see :mod:`promptvcr.background`);
    ``"verified"`` when ``RecordMode.verify`` sent it to the network and compared the answer
    with its recording (see ``Cassette.drift``). ``recorded`` is the recorded request a
    replayed one was answered for when the two differ in bytes the key ignores (a JSON-RPC
    ``id``): an answer that comes on another stream (MCP's GET stream) is found by it.
    ``"tool-drift"``: replayed, though only its tool results differ from the recording
    (``on_tool_drift="replay"``); ``tool_drift`` then says each: tool, call id, recorded -> sent.
    """

    request: Request
    outcome: Outcome
    response: Response | None = None
    recorded: Request | None = None
    tool_drift: tuple[str, ...] = ()

    @property
    def hit(self) -> bool:
        return self.outcome in ("replayed", "tool-drift")
