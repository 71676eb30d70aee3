"""grpcio, sync and ``grpc.aio``, recorded and replayed at the channel (docs/grpc.md).

The seam is the multi-callable a channel hands out for each method (``channel.unary_unary(...)``
and its three siblings): their classes are patched, so channels and stubs made before the
cassette was entered are covered: behind any sync client interceptor (the metadata it adds is
seen), before an asyncio one (which runs inside the patched call). Each call becomes a
:class:`~promptvcr.Request` (see :mod:`.exchange`) and takes the same decision path as an HTTP
request. The messages of a client stream are read in full before the cassette is asked (its key
is all of them, in order): a bidirectional stream whose client waits for an answer before it
sends its next message cannot be served this way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from .._compat import (
    grpc_callable_classes,
    grpc_coders,
    grpc_inactive_rpc_error,
    grpc_method,
    grpc_raw_clone,
    grpc_target,
)
from ..decision import Handler, Record, Replay, Uninstall
from .aiocalls import aio_patched
from .exchange import CallRecording, Outcome, broken, grpc_request, outcome_of
from .synccalls import RecordingStream, ReplayedCall, ReplayedStream, raise_if_failed, serve_messages

__all__ = ["install"]

#: What each sync multi-callable offers: ``__call__`` always; ``with_call`` and ``future`` for
#: the patterns with one response.
_SYNC_METHODS = ("__call__", "with_call", "future")


def install(handler: Handler) -> Uninstall:
    """Patch every gRPC multi-callable class, sync and asyncio; the returned function undoes it."""
    sync, aio = grpc_callable_classes(aio=False), grpc_callable_classes(aio=True)  # before any patch
    undo: list[tuple[type, str, Any]] = []
    for pattern, cls in sync.items():
        originals = {name: vars(cls)[name] for name in _SYNC_METHODS if name in vars(cls)}
        for name, original in originals.items():
            undo.append((cls, name, original))
            setattr(cls, name, _sync_patched(handler, pattern, name, originals))
    for pattern, cls in aio.items():
        original = cls.__call__
        undo.append((cls, "__call__", vars(cls).get("__call__", original)))
        cls.__call__ = aio_patched(handler, pattern, original)  # type: ignore[method-assign]

    def uninstall() -> None:
        for cls, name, original in reversed(undo):
            setattr(cls, name, original)

    return uninstall


def _sync_patched(handler: Handler, pattern: str, kind: str, originals: dict[str, Any]) -> Callable[..., Any]:
    client_streams, server_streams = pattern.startswith("stream"), pattern.endswith("stream")
    original = originals[kind]

    def patched(
        self: Any, request: Any, timeout: float | None = None, metadata: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        messages = list(request) if client_streams else [request]
        serializer, deserializer = grpc_coders(self)
        key = grpc_request(
            grpc_target(self), grpc_method(self), metadata, messages, serializer, client_streams
        )
        decision = handler.handle(key)
        sent = iter(messages) if client_streams else request
        if isinstance(decision, Replay):
            return _replayed(decision, deserializer, kind, server_streams)
        if not isinstance(decision, Record):
            return original(self, sent, timeout, metadata, *args, **kwargs)
        recording = CallRecording(decision.recorder)
        clone = grpc_raw_clone(self)
        if server_streams:
            return RecordingStream(
                original(clone, sent, timeout, metadata, *args, **kwargs), deserializer, recording
            )
        try:
            raw, call = originals["with_call"](clone, sent, timeout, metadata, *args, **kwargs)
        except grpc.RpcError as error:
            recording.finish(
                error.code(), error.details(), error.initial_metadata(), error.trailing_metadata()
            )
            if kind == "future":
                return ReplayedCall(_ended(error))
            raise
        value = deserializer(raw) if deserializer is not None else raw
        recording.message(raw, value)
        recording.finish(call.code(), call.details(), call.initial_metadata(), call.trailing_metadata())
        if kind == "__call__":
            return value
        return (value, call) if kind == "with_call" else ReplayedCall(_ended(call), value)

    patched.__name__ = kind
    patched.__doc__ = getattr(original, "__doc__", None)
    return patched


def _ended(call: Any) -> Outcome:
    initial, trailing = call.initial_metadata(), call.trailing_metadata()
    return Outcome((), call.code(), call.details(), tuple(initial or ()), tuple(trailing or ()))


def _replayed(decision: Replay, deserializer: Any, kind: str, server_streams: bool) -> Any:
    response = decision.response
    outcome = outcome_of(response)
    if server_streams:
        return ReplayedStream(outcome, deserializer, response.playback)

    def fail(breakage: str) -> BaseException:
        return grpc_inactive_rpc_error(*broken(breakage), outcome.initial, ())

    try:
        received = list(serve_messages(outcome, response.playback, fail))
        raise_if_failed(outcome)
    except grpc.RpcError as error:
        if kind == "future":
            return ReplayedCall(_ended(error))
        raise
    value = None
    if received:
        value = deserializer(received[0]) if deserializer is not None else received[0]
    if kind == "__call__":
        return value
    call = ReplayedCall(outcome, value)
    return (value, call) if kind == "with_call" else call
