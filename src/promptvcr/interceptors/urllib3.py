"""urllib3 2.x, and with it ``requests`` and botocore (boto3, AWS Bedrock), which send through it.

The patch sits on the connection pool's single attempt (``_make_request``): urllib3's own
retries, redirects and connection bookkeeping in ``urlopen`` run unchanged around it, so a
recorded 429 followed by a 200 replays through the same retry logic that produced it, and
each attempt on the wire is one interaction. Replay never connects: the pool's connection
object is handed back untouched. ``requests`` and botocore both call ``urlopen`` on these
pools, so neither needs a patch of its own (vcrpy patches each of them separately, at the
``http.client`` connection, which misses urllib3's response streaming).

Injected breakages are raised as the exceptions urllib3 itself raises at the same point
(see :mod:`.playback`): ``ConnectTimeoutError`` and ``ReadTimeoutError`` from the attempt,
``ReadTimeoutError`` or ``ProtocolError`` from the body read. ``urlopen``'s retries and the
mapping onto ``requests.exceptions.ConnectTimeout``/``ReadTimeout``/``ChunkedEncodingError``
or botocore's errors then happen in those libraries, as for a real failure.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import urllib3
from urllib3.connectionpool import HTTPConnectionPool

from ..cassettes.models import Request
from ..cassettes.playback import Breakage
from ..cassettes.spool import body_size
from ..cassettes.wire import WIRE_HEADERS, reason_phrase
from ._compat import URLLIB3_ATTEMPT_SEAM
from ._forwarding import forwarding, is_forwarding
from .decision import Handler, Record, Replay, Uninstall
from .pacing import Fail, PacedBody, describe, wait_for_headers
from .recording import Recording
from .unavailable import SeamMissing

__all__ = ["install"]


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def _url(pool: HTTPConnectionPool, target: str) -> str:
    if target.startswith(("http://", "https://")):
        return target  # a plain-HTTP proxy is sent the absolute URL
    host = pool.host or ""
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    default_port = {"http": 80, "https": 443}.get(pool.scheme)
    port = "" if pool.port in (None, default_port) else f":{pool.port}"
    return f"{pool.scheme}://{host}{port}{target}"


def _body_bytes(body: Any) -> bytes:
    """The whole request body, whatever form urllib3 accepts it in."""
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode("utf-8")
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if hasattr(body, "read"):
        data = body.read()
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if isinstance(body, Iterable):
        return b"".join(part.encode("utf-8") if isinstance(part, str) else bytes(part) for part in body)
    raise TypeError(f"promptvcr cannot read a urllib3 request body of type {type(body).__name__}")


class _Chunks:
    """The file object behind a response promptvcr serves: one chunk (or less) per read,
    so a stream reaches the application event by event, as the server sent it."""

    def __init__(
        self, next_chunk: Callable[[int | None], bytes], on_close: Callable[[], None] | None = None
    ) -> None:
        self._next_chunk = next_chunk
        self._on_close = on_close
        self._pending = b""
        self.closed = False

    def readable(self) -> bool:
        return True

    def read1(self, amt: int | None = None) -> bytes:
        if self.closed:
            return b""
        if not self._pending:
            self._pending = self._next_chunk(amt)
        cut = len(self._pending) if amt is None or amt < 0 else amt
        data, self._pending = self._pending[:cut], self._pending[cut:]
        return data

    def read(self, amt: int | None = None) -> bytes:
        if amt is not None and amt >= 0:
            return self.read1(amt)
        parts = []
        while data := self.read1():
            parts.append(data)
        return b"".join(parts)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self._on_close is not None:
                self._on_close()


def _replayed(chunks: Sequence[bytes] | PacedBody) -> _Chunks:
    remaining = iter(chunks)
    return _Chunks(lambda amt: next(remaining, b""))


def _failures(pool: HTTPConnectionPool, conn: Any, url: str) -> Fail:
    """urllib3's own exceptions for injected breakages, as its connection, attempt and
    body read raise them for a real failure (``requests`` and botocore map them on)."""

    def fail(kind: Breakage) -> BaseException:
        message = describe(kind)
        if kind == "connect_timeout":
            return urllib3.exceptions.ConnectTimeoutError(conn, message)
        if kind == "read_timeout":
            return urllib3.exceptions.ReadTimeoutError(pool, url, message)
        return urllib3.exceptions.ProtocolError(f"Connection broken: {message}")

    return fail


class _Reader:
    """Reads the real response decoded, chunk by chunk as the application asks, into a
    :class:`Recording`; the file object :class:`_Chunks` serves its chunks."""

    def __init__(self, real: Any, recording: Recording) -> None:
        self._real = real
        self._recording = recording
        self._read: Callable[..., bytes] = getattr(real, "read1", real.read)

    def next_chunk(self, amt: int | None) -> bytes:
        if self._recording.ended:
            return b""
        try:
            data = self._read(amt if amt and amt > 0 else 65536, decode_content=True)
        except Exception as error:
            self._recording.fail(error)
            raise
        if data:
            self._recording.add(data)
        else:
            self._recording.complete()
            self._recording.hand_over()
        return data

    def close(self) -> None:
        try:
            while self._recording.reads_rest() and self.next_chunk(None):
                pass
        finally:
            if self._recording.closed_early:
                self._real.close()  # the rest never comes: the connection cannot be reused
            self._real.release_conn()


def _response(
    source: _Chunks,
    status: int,
    headers: Iterable[tuple[str, str]],
    args: Mapping[str, Any],
    pool: Any,
    conn: Any,
) -> urllib3.HTTPResponse:
    response = urllib3.HTTPResponse(
        body=source,  # type: ignore[arg-type]  # file-like enough: read, read1, close, closed
        headers=urllib3.HTTPHeaderDict(list(headers)),
        status=status,
        version=11,
        version_string="HTTP/1.1",
        reason=reason_phrase(status),
        preload_content=args["preload_content"],
        decode_content=args["decode_content"],
        pool=pool,
        connection=conn,
        retries=args["retries"],
        enforce_content_length=args["enforce_content_length"],
        request_method=args["method"],
        request_url=args["url"],
    )
    return response


@functools.cache
def _checked_signature(original: Callable[..., Any]) -> inspect.Signature:
    """The seam's signature, once per process, after checking that the installed urllib3
    plays responses as this module makes them: ``HTTPResponse(version_string=...)``, from
    urllib3 2.2.2 on (checked by that parameter, not by the version). An older one is left
    unpatched with a warning (see :mod:`.unavailable`), not a failure of every cassette."""
    if "version_string" not in inspect.signature(urllib3.HTTPResponse).parameters:
        raise SeamMissing(
            "urllib3",
            "urllib3.HTTPResponse takes no version_string: promptvcr needs urllib3 2.2.2 or newer "
            "(pip install 'urllib3>=2.2.2')",
        )
    return inspect.signature(original)


def install(handler: Handler) -> Uninstall:
    original = getattr(HTTPConnectionPool, URLLIB3_ATTEMPT_SEAM)
    signature = _checked_signature(original)

    @functools.wraps(original)
    def attempt(pool: HTTPConnectionPool, *args: Any, **kwargs: Any) -> Any:
        if is_forwarding():
            return original(pool, *args, **kwargs)
        bound = signature.bind(pool, *args, **kwargs)
        bound.apply_defaults()
        call = bound.arguments
        content = _body_bytes(call["body"])
        call["body"] = content if call["body"] is not None else None
        headers = {_text(k).lower(): _text(v) for k, v in (call["headers"] or {}).items()}
        request = Request(
            method=call["method"], url=_url(pool, call["url"]), headers=headers, content=content
        )
        decision = handler.handle(request)
        if isinstance(decision, Replay):
            answer = decision.response
            length = str(body_size(answer.chunks))
            if length == "0":  # a HEAD answer: the length of the body it did not send
                length = answer.headers.get("content-length", length)
            stored = [(k, v) for k, v in answer.headers.items() if k not in WIRE_HEADERS]
            playback = answer.playback
            if playback is None:
                source = _replayed(answer.chunks)
            else:
                fail = _failures(pool, call["conn"], call["url"])
                wait_for_headers(playback, fail)
                source = _replayed(PacedBody(answer.chunks, playback, fail))
            return _response(source, answer.status, [*stored, ("content-length", length)], call, pool, None)
        # The body is read here, decoded, whatever the caller asked: the wrapper below
        # applies the caller's preload_content to what it hands on.
        call["preload_content"], wanted = False, call["preload_content"]
        recording = Recording(decision.recorder) if isinstance(decision, Record) else None
        with forwarding():
            real = original(*bound.args, **bound.kwargs)
        call["preload_content"] = wanted
        if recording is None:
            return real
        recording.headers_arrived(real.status, real.headers.items())
        recording.started()  # reported at exit if the response is neither read nor closed
        reader = _Reader(real, recording)
        # A HEAD answer keeps its content-length: the length of the body it did not send.
        wire = WIRE_HEADERS - {"content-length"} if str(call["method"]).upper() == "HEAD" else WIRE_HEADERS
        plain = [(k, v) for k, v in real.headers.items() if k.lower() not in wire]
        response = _response(_Chunks(reader.next_chunk, reader.close), real.status, plain, call, pool, None)
        response.retries = real.retries
        return response

    setattr(HTTPConnectionPool, URLLIB3_ATTEMPT_SEAM, attempt)

    def uninstall() -> None:
        setattr(HTTPConnectionPool, URLLIB3_ATTEMPT_SEAM, original)

    return uninstall
