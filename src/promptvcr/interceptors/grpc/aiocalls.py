"""``grpc.aio`` calls, served from a cassette or recorded into it.

A patched ``__call__`` hands out an :class:`AioCall`: the call as the client uses it (awaited,
iterated, ``read()``, ``write()``, its metadata and status), asking the cassette on first use,
once its request messages are known. A replayed failure raises ``grpc.aio.AioRpcError``, what
grpc raises live, with the recorded code, details and metadata.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from grpc import aio

from .._compat import grpc_coders, grpc_method, grpc_raw_clone, grpc_target
from ..decision import Handler, Record, Replay
from ..pacing import PacedBody, wait_for_headers_async
from .exchange import CallRecording, Outcome, broken, grpc_request, message_of, outcome_of

__all__ = ["AioCall", "aio_patched"]


def aio_patched(handler: Handler, pattern: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """The ``__call__`` of one asyncio multi-callable class."""
    client_streams, server_streams = pattern.startswith("stream"), pattern.endswith("stream")

    def __call__(self: Any, request: Any = None, **kwargs: Any) -> AioCall:
        return AioCall(handler, self, original, request, kwargs, client_streams, server_streams)

    return __call__


class AioCall:
    """One asyncio call; see the module."""

    def __init__(
        self,
        handler: Handler,
        callable_: Any,
        original: Callable[..., Any],
        request: Any,
        kwargs: dict[str, Any],
        client_streams: bool,
        server_streams: bool,
    ) -> None:
        self._handler = handler
        self._callable = callable_
        self._original = original
        self._request = request
        self._kwargs = kwargs
        self._client_streams = client_streams
        self._server_streams = server_streams
        self._deserializer = grpc_coders(callable_)[1]
        self._written: list[Any] = []
        self._writing_done = asyncio.Event()
        self._task: asyncio.Future[None] | None = None
        self._result: asyncio.Future[Any] | None = None
        self._reader: AsyncIterator[Any] | None = None
        self._outcome: Outcome | None = None
        self._playback: Any = None
        self._live: Any = None
        self._recording: CallRecording | None = None
        self._cancelled = False

    # --- the decision, once the request messages are known -------------------------------
    def _begin(self) -> asyncio.Future[None]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._decide())
        return self._task

    async def _messages_sent(self) -> list[Any]:
        request = self._request
        if not self._client_streams:
            return [request]
        if request is None:  # the client writes them: all of them first (see the package)
            await self._writing_done.wait()
            return list(self._written)
        if hasattr(request, "__aiter__"):
            return [message async for message in request]
        return list(request)

    async def _decide(self) -> None:
        messages = await self._messages_sent()
        serializer = grpc_coders(self._callable)[0]
        key = grpc_request(
            grpc_target(self._callable), grpc_method(self._callable), self._kwargs.get("metadata"),
            messages, serializer, self._client_streams,
        )  # fmt: skip
        decision = self._handler.handle(key)
        if isinstance(decision, Replay):
            self._outcome = outcome_of(decision.response)
            self._playback = decision.response.playback
            return
        sent = iter(messages) if self._client_streams else self._request
        target = self._callable
        if isinstance(decision, Record):
            self._recording = CallRecording(decision.recorder)
            self._recording.started(self._abandon)
            target = grpc_raw_clone(self._callable)
        self._live = self._original(target, sent, **self._kwargs)

    def _abandon(self) -> None:
        if self._recording is not None:
            self._recording.finish(
                grpc.StatusCode.CANCELLED, "closed before its end", None, None, end="closed"
            )

    # --- replay --------------------------------------------------------------------------
    def _error(self) -> aio.AioRpcError:
        outcome = self._outcome
        assert outcome is not None
        return aio.AioRpcError(
            outcome.code,
            aio.Metadata(*outcome.initial),
            aio.Metadata(*outcome.trailing),
            outcome.details,
            None,
        )

    def _fail(self, kind: str) -> BaseException:
        assert self._outcome is not None
        code, details = broken(kind)
        self._outcome = Outcome((), code, details, self._outcome.initial, ())
        error: BaseException = self._error()
        return error

    async def _replayed(self) -> AsyncIterator[bytes]:
        outcome = self._outcome
        assert outcome is not None
        if self._playback is None:
            for chunk in outcome.chunks:
                yield message_of(chunk)
        else:
            await wait_for_headers_async(self._playback, self._fail)
            async for chunk in PacedBody(outcome.chunks, self._playback, self._fail):
                yield message_of(chunk)
        if self._outcome is not None and self._outcome.code is not grpc.StatusCode.OK:
            raise self._error()

    def _read(self, raw: bytes) -> Any:
        return self._deserializer(raw) if self._deserializer is not None else raw

    async def _finish(self, call: Any) -> None:
        assert self._recording is not None
        if isinstance(call, grpc.RpcError):
            self._recording.finish(
                call.code(), call.details(), call.initial_metadata(), call.trailing_metadata()
            )
        else:
            self._recording.finish(
                await call.code(),
                await call.details(),
                await call.initial_metadata(),
                await call.trailing_metadata(),
            )

    # --- one response --------------------------------------------------------------------
    async def _response(self) -> Any:
        await self._begin()
        if self._outcome is not None:
            received = [raw async for raw in self._replayed()]
            return self._read(received[0]) if received else None
        live = self._live
        if self._recording is None:
            return await live
        try:
            raw = await live
        except grpc.RpcError as error:
            await self._finish(error)
            raise
        value = self._read(raw)
        self._recording.message(raw, value)
        await self._finish(live)
        return value

    def __await__(self) -> Any:
        if self._result is None:
            self._result = asyncio.ensure_future(self._response())
        return self._result.__await__()

    # --- a stream of responses -----------------------------------------------------------
    async def _responses(self) -> AsyncIterator[Any]:
        await self._begin()
        if self._outcome is not None:
            async for raw in self._replayed():
                yield self._read(raw)
            return
        live = self._live
        if self._recording is None:
            async for value in live:
                yield value
            return
        try:
            async for raw in live:
                value = self._read(raw)
                self._recording.message(raw, value)
                yield value
        except grpc.RpcError as error:
            await self._finish(error)
            raise
        await self._finish(live)

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._reader is None:
            self._reader = self._responses()
        return self._reader

    async def read(self) -> Any:
        try:
            return await self.__aiter__().__anext__()
        except StopAsyncIteration:
            return aio.EOF

    # --- a stream of requests ------------------------------------------------------------
    async def write(self, request: Any) -> None:
        self._written.append(request)

    async def done_writing(self) -> None:
        self._writing_done.set()

    # --- the call ------------------------------------------------------------------------
    async def wait_for_connection(self) -> None:
        await self._begin()
        if self._live is not None:
            await self._live.wait_for_connection()

    async def initial_metadata(self) -> aio.Metadata:
        await self._begin()
        if self._live is not None:
            return await self._live.initial_metadata()
        assert self._outcome is not None
        return aio.Metadata(*self._outcome.initial)

    async def trailing_metadata(self) -> aio.Metadata:
        await self._begin()
        if self._live is not None:
            return await self._live.trailing_metadata()
        assert self._outcome is not None
        return aio.Metadata(*self._outcome.trailing)

    async def code(self) -> grpc.StatusCode:
        await self._begin()
        if self._live is not None:
            return await self._live.code()
        assert self._outcome is not None
        return grpc.StatusCode.CANCELLED if self._cancelled else self._outcome.code

    async def details(self) -> str:
        await self._begin()
        if self._live is not None:
            return await self._live.details()  # type: ignore[no-any-return]
        assert self._outcome is not None
        return self._outcome.details

    def cancel(self) -> bool:
        if self._live is not None:
            return bool(self._live.cancel())
        self._cancelled = True
        return True

    def cancelled(self) -> bool:
        return bool(self._live.cancelled()) if self._live is not None else self._cancelled

    def done(self) -> bool:
        if self._live is not None:
            return bool(self._live.done())
        return self._cancelled or (self._result is not None and self._result.done())

    def time_remaining(self) -> float | None:
        return self._live.time_remaining() if self._live is not None else None

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        if self._live is not None:
            self._live.add_done_callback(callback)
