"""A gRPC call as promptvcr's own values: the request a cassette keys, the response it stores.

Converting here, once, is what lets every part of promptvcr that reads a cassette (matching and
its rules, volatile fields, redaction, miss diagnostics, verify, ``max_age``, faults, ``show``,
``scan``, the report) work on gRPC without a copy of its own:

- the call is a ``POST`` to ``grpc://<target>/<package.Service>/<Method>``; its metadata are its
  headers (a ``-bin`` value as base64), so ``authorization``, ``x-goog-api-key`` and ``api-key``
  are removed by the same credential rules as HTTP headers;
- the request message is a JSON body (:mod:`.protojson`); the messages of a client stream are a
  JSON list, matched in order, so a diff names the message and the field that changed;
- the response is an event stream, one event per server message, so each message keeps its
  recorded time (``timing="recorded"``) and a stream can be cut after N messages; the status
  is ``grpc-status`` / ``grpc-message`` with an HTTP status beside it that says the same
  (``RESOURCE_EXHAUSTED`` is a 429, ``UNAVAILABLE`` a 503), which is what ``on_record_error``
  and the faults read; trailing metadata are headers named ``grpc-trailer-<key>``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from ...cassettes.bodies import json_bytes
from ...cassettes.models import Request, Response
from ...cassettes.sse import decode_events, encode_event
from ...cassettes.timing import TimingRecorder
from ...policies import budget
from ..decision import Recorder
from ..pacing import describe
from .protojson import BYTES_KEY, as_message, masked_bytes, message_bytes, message_doc, request_doc

__all__ = [
    "CallRecording",
    "Metadata",
    "Outcome",
    "broken",
    "grpc_request",
    "outcome_of",
]

Metadata = tuple[tuple[str, str | bytes], ...]

TRAILER = "grpc-trailer-"
_STATUS, _MESSAGE = "grpc-status", "grpc-message"
_EVENT_STREAM = "text/event-stream"

#: The HTTP status that says what a gRPC status says (google.rpc.Code's own mapping), so that
#: ``on_record_error`` keeps or skips a gRPC error as it does an HTTP one.
_HTTP_OF: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
#: The other way, for a response no gRPC server wrote (a declared fault's ``http_error``).
_CODE_OF: dict[int, grpc.StatusCode] = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ABORTED,
    429: grpc.StatusCode.RESOURCE_EXHAUSTED,
    499: grpc.StatusCode.CANCELLED,
    501: grpc.StatusCode.UNIMPLEMENTED,
    502: grpc.StatusCode.UNAVAILABLE,
    503: grpc.StatusCode.UNAVAILABLE,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
}
_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}

#: What a broken replayed stream reports: the status grpc gives for the same failure live.
_BREAKAGE_CODE = {
    "connect_timeout": grpc.StatusCode.UNAVAILABLE,
    "read_timeout": grpc.StatusCode.DEADLINE_EXCEEDED,
    "disconnect": grpc.StatusCode.UNAVAILABLE,
}


def _text(key: str, value: str | bytes) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _metadata_headers(metadata: Iterable[tuple[str, str | bytes]] | None, prefix: str = "") -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in metadata or ():
        name = prefix + key.lower()
        text = _text(key, value)
        headers[name] = f"{headers[name]}, {text}" if name in headers else text
    return headers


def _metadata_of(headers: dict[str, str], trailing: bool) -> Metadata:
    found: list[tuple[str, str | bytes]] = []
    for name, text in headers.items():
        if name in (_STATUS, _MESSAGE, "content-type") or name.startswith(TRAILER) != trailing:
            continue
        key = name.removeprefix(TRAILER) if trailing else name
        if key.endswith("-bin"):
            try:
                found.append((key, base64.b64decode(text)))
            except (binascii.Error, ValueError):
                found.append((key, text.encode("utf-8")))
        else:
            found.append((key, text))
    return tuple(found)


def _request_doc(value: object, serializer: Callable[[Any], bytes] | None) -> dict[str, Any]:
    message = as_message(value)
    if message is not None:
        return request_doc(message)
    raw = serializer(value) if serializer is not None else value
    if not isinstance(raw, bytes):
        raise TypeError(f"promptvcr cannot read a gRPC request message of type {type(value).__name__}")
    return {BYTES_KEY: base64.b64encode(masked_bytes(raw)).decode("ascii")}


def grpc_request(
    target: str,
    method: str,
    metadata: Iterable[tuple[str, str | bytes]] | None,
    messages: Sequence[object],
    serializer: Callable[[Any], bytes] | None,
    client_streams: bool,
) -> Request:
    """The :class:`Request` a cassette keys for one call (see the module)."""
    docs = [_request_doc(message, serializer) for message in messages]
    headers = {"content-type": "application/json", **_metadata_headers(metadata)}
    body = json_bytes(docs if client_streams else docs[0])
    return Request("POST", f"grpc://{target}{method}", headers, body)


@dataclass
class Outcome:
    """What a replayed call gives its client: the server messages (as their bytes), the status,
    and both sets of metadata."""

    chunks: Sequence[bytes]
    code: grpc.StatusCode = grpc.StatusCode.OK
    details: str = ""
    initial: Metadata = ()
    trailing: Metadata = field(default_factory=tuple)


#: Replayed messages already rebuilt, by their event's bytes (see :func:`message_of`); a large
#: one is rebuilt each time rather than held twice.
_MESSAGES: dict[bytes, bytes] = {}
_MESSAGES_KEPT, _MESSAGE_BYTES_KEPT = 2048, 64 * 1024
_EVENT_HEAD = b"event: message\ndata: "


def message_of(chunk: bytes) -> bytes:
    """The bytes of the server message one replayed event holds. Remembered: a cassette's chunks
    are the same bytes each time it serves them, and rebuilding a message from its JSON costs
    far more than the call it stands for (benchmarks/bench_grpc.py)."""
    found = _MESSAGES.get(chunk)
    if found is not None:
        return found
    body = chunk[len(_EVENT_HEAD) : -2]
    if chunk.startswith(_EVENT_HEAD) and chunk.endswith(b"\n\n") and b"\n" not in body:
        data = json.loads(body)  # as CallRecording wrote it: one event, its data on one line
    else:  # as a reviewer or another tool wrote it: the event-stream parser reads any form
        events = decode_events(chunk)
        if not events or not isinstance(events[0], dict):
            raise ValueError(f"a replayed gRPC message is no stored message: {chunk[:80]!r}")
        data = events[0].get("data")
        if isinstance(data, str):
            data = json.loads(data)
    built = message_bytes(data)
    if len(chunk) <= _MESSAGE_BYTES_KEPT:
        if len(_MESSAGES) >= _MESSAGES_KEPT:
            _MESSAGES.clear()
        _MESSAGES[chunk] = built
    return built


def _status_of(response: Response) -> tuple[grpc.StatusCode, str]:
    number = response.headers.get(_STATUS)
    if number is not None and number.strip().isdigit() and int(number) in _BY_NUMBER:
        return _BY_NUMBER[int(number)], response.headers.get(_MESSAGE, "")
    if response.status < 400:
        return grpc.StatusCode.OK, ""
    code = _CODE_OF.get(response.status, grpc.StatusCode.UNKNOWN)
    body = response.content.decode("utf-8", "replace")
    return code, body or f"HTTP {response.status}"


def outcome_of(response: Response) -> Outcome:
    """A replayed :class:`Response` as the call it stands for; a response no gRPC server wrote
    (a declared ``http_error`` fault) gets the status its HTTP status says, its body as details."""
    code, details = _status_of(response)
    grpc_written = _STATUS in response.headers
    chunks = response.chunks if grpc_written or code is grpc.StatusCode.OK else ()
    trailing = _metadata_of(response.headers, trailing=True)
    if not grpc_written and (retry := response.headers.get("retry-after")) is not None:
        trailing = (*trailing, *_retry_info(retry, code, details))
    return Outcome(chunks, code, details, _metadata_of(response.headers, trailing=False), trailing)


def _retry_info(retry_after: str, code: grpc.StatusCode, details: str) -> Metadata:
    """A declared 429's ``Retry-After`` as gRPC servers say it: a ``google.rpc.RetryInfo`` in
    ``grpc-status-details-bin`` (what google-api-core and grpcio-status read); nothing without
    googleapis-common-protos."""
    try:
        from google.protobuf import any_pb2, duration_pb2
        from google.rpc import error_details_pb2, status_pb2
    except ImportError:
        return ()
    try:
        seconds = float(retry_after)
    except ValueError:
        return ()
    delay = duration_pb2.Duration()
    delay.FromNanoseconds(int(seconds * 1e9))
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    status = status_pb2.Status(code=code.value[0], message=details, details=[detail])
    return (("grpc-status-details-bin", status.SerializeToString()),)


def broken(kind: str) -> tuple[grpc.StatusCode, str]:
    """The status a replayed call reports where its playback breaks it (a fault, a cut)."""
    return _BREAKAGE_CODE.get(kind, grpc.StatusCode.UNAVAILABLE), describe(kind)  # type: ignore[arg-type]


class CallRecording:
    """One live call being recorded: its messages as they arrive (timed), then its status."""

    __slots__ = ("_chunks", "_done", "_recorder", "_seen", "_watch")

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._watch = TimingRecorder()
        self._chunks: list[bytes] = []
        self._seen = False
        self._done = False

    def _arrived(self) -> None:
        if not self._seen:
            self._seen = True
            self._watch.headers_arrived()

    def message(self, received: bytes, value: object) -> None:
        """A server message: ``received`` its bytes, ``value`` what the client's deserializer
        made of them."""
        self._arrived()
        message = as_message(value)
        doc = (
            message_doc(message, received)
            if message is not None
            else {BYTES_KEY: base64.b64encode(masked_bytes(received)).decode("ascii")}
        )
        self._chunks.append(encode_event({"event": "message", "data": doc}))
        self._watch.chunk_arrived()

    def finish(
        self,
        code: grpc.StatusCode | None,
        details: str | None,
        initial: Iterable[tuple[str, str | bytes]] | None,
        trailing: Iterable[tuple[str, str | bytes]] | None,
        end: str = "complete",
    ) -> None:
        """The call ended with this status: the response goes to the cassette, once."""
        if self._done:
            return
        self._done = True
        self._arrived()
        code = code or grpc.StatusCode.UNKNOWN
        headers = {
            "content-type": _EVENT_STREAM,
            **_metadata_headers(initial),
            **_metadata_headers(trailing, TRAILER),
            _STATUS: str(code.value[0]),
        }
        if details:
            headers[_MESSAGE] = details
        response = Response(
            status=_HTTP_OF.get(code, 500),
            headers=headers,
            chunks=self._chunks,
            timing=self._watch.timing(),
            end=end,  # type: ignore[arg-type]
        )
        self._recorder(response)
        budget.spend(response)

    def started(self, abandon: Callable[[], None]) -> None:
        self._recorder.started(abandon)
