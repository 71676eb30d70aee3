"""grpcio's sync calls, served from a cassette or recorded into it.

Each patched multi-callable method asks the cassette (``decide``) and then either serves the
recorded call (:class:`ReplayedCall`, :class:`ReplayedStream`), sends it through a copy of the
multi-callable that hands back the messages' bytes (recorded, then read with the client's own
deserializer), or sends it untouched. A failed unary call raises what grpc raises live,
``_InactiveRpcError``; a failed stream raises itself, as grpc's own stream object does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc

from .._compat import grpc_inactive_rpc_error
from ..pacing import PacedBody, wait_for_headers
from .exchange import CallRecording, Metadata, Outcome, broken, message_of

__all__ = ["RecordingStream", "ReplayedCall", "ReplayedStream", "raise_if_failed", "serve_messages"]

Deserializer = Callable[[bytes], Any] | None


def _read(deserializer: Deserializer, raw: bytes) -> Any:
    return deserializer(raw) if deserializer is not None else raw


def serve_messages(outcome: Outcome, playback: Any, fail: Callable[[str], BaseException]) -> Iterator[bytes]:
    """The recorded messages' bytes, paced and broken as the playback says."""
    if playback is None:
        for chunk in outcome.chunks:
            yield message_of(chunk)
        return
    wait_for_headers(playback, fail)
    for chunk in PacedBody(outcome.chunks, playback, fail):
        yield message_of(chunk)


def raise_if_failed(outcome: Outcome) -> None:
    if outcome.code is not grpc.StatusCode.OK:
        raise grpc_inactive_rpc_error(outcome.code, outcome.details, outcome.initial, outcome.trailing)


class ReplayedCall(grpc.Call, grpc.Future):  # type: ignore[misc]
    """A finished unary call, as ``with_call`` and ``future`` hand it out."""

    def __init__(self, outcome: Outcome, response: Any = None) -> None:
        self._outcome = outcome
        self._response = response

    def initial_metadata(self) -> Metadata:
        return self._outcome.initial

    def trailing_metadata(self) -> Metadata:
        return self._outcome.trailing

    def code(self) -> grpc.StatusCode:
        return self._outcome.code

    def details(self) -> str:
        return self._outcome.details

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float | None:
        return None

    def cancel(self) -> bool:
        return False

    def cancelled(self) -> bool:
        return False

    def running(self) -> bool:
        return False

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> Any:
        raise_if_failed(self._outcome)
        return self._response

    def exception(self, timeout: float | None = None) -> BaseException | None:
        try:
            raise_if_failed(self._outcome)
        except grpc.RpcError as error:
            return error  # type: ignore[no-any-return]
        return None

    def traceback(self, timeout: float | None = None) -> Any:
        return None

    def add_callback(self, callback: Callable[[], None]) -> bool:
        return False

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        fn(self)


class ReplayedStream(grpc.RpcError, ReplayedCall):  # type: ignore[misc]
    """A recorded server stream: an iterator of the client's messages that, like grpc's own
    stream object, is the call and raises itself when the call failed."""

    def __init__(self, outcome: Outcome, deserializer: Deserializer, playback: Any) -> None:
        ReplayedCall.__init__(self, outcome)
        self._deserializer = deserializer
        self._messages = serve_messages(outcome, playback, self._broken)
        self._ended = False
        self._callbacks: list[Callable[[], None]] = []

    def _broken(self, kind: str) -> BaseException:
        code, details = broken(kind)
        self._outcome = Outcome((), code, details, self._outcome.initial, ())
        return self

    def __iter__(self) -> ReplayedStream:
        return self

    def __next__(self) -> Any:
        if self._ended:
            raise self._end()
        try:
            raw = next(self._messages)
        except StopIteration:
            self._ended = True
            raise self._end() from None
        except grpc.RpcError:
            self._ended = True
            raise self._end() from None
        return _read(self._deserializer, raw)

    def _end(self) -> BaseException:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
        return StopIteration() if self._outcome.code is grpc.StatusCode.OK else self

    def next(self) -> Any:
        return self.__next__()

    def is_active(self) -> bool:
        return not self._ended

    def done(self) -> bool:
        return self._ended

    def cancel(self) -> bool:
        if self._ended:
            return False
        self._ended = True
        self._outcome = Outcome(
            (), grpc.StatusCode.CANCELLED, "Locally cancelled by application!", self._outcome.initial, ()
        )
        return True

    def cancelled(self) -> bool:
        return self._outcome.code is grpc.StatusCode.CANCELLED

    def add_callback(self, callback: Callable[[], None]) -> bool:
        if self._ended:
            return False
        self._callbacks.append(callback)
        return True

    def __str__(self) -> str:
        code, details = self._outcome.code, self._outcome.details
        return f'<ReplayedStream of RPC that terminated with: status = {code}, details = "{details}">'


class RecordingStream:
    """A live server stream read through to the client while each message is recorded; every
    other attribute is the live stream's (it is the call, its errors are itself)."""

    def __init__(self, live: Any, deserializer: Deserializer, recording: CallRecording) -> None:
        self._live = live
        self._deserializer = deserializer
        self._recording = recording
        recording.started(self._abandon)

    def _abandon(self) -> None:
        self._recording.finish(grpc.StatusCode.CANCELLED, "closed before its end", None, None, end="closed")

    def __iter__(self) -> RecordingStream:
        return self

    def __next__(self) -> Any:
        try:
            raw = next(self._live)
        except StopIteration:
            self._finish(self._live)
            raise
        except grpc.RpcError as error:
            self._finish(error)
            raise
        value = _read(self._deserializer, raw)
        self._recording.message(raw, value)
        return value

    next = __next__

    def _finish(self, call: Any) -> None:
        self._recording.finish(call.code(), call.details(), call.initial_metadata(), call.trailing_metadata())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._live, name)
