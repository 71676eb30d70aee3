"""httpx, the legacy client many libraries still pass to the SDKs, through respx.

respx owns the patching (start, stop, the client seam) and the routing; promptvcr adds a
respx ``Mocker`` whose only addition is to tee the responses of requests that respx
passes through, so that they can be recorded.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import respx

from ._compat import respx_mocker, respx_pass_through
from ._forwarding import forwarding
from ._httpx_family import failures, record_response, to_request
from ._httpx_replay import replay_response
from .decision import Decision, Handler, Record, Replay, Uninstall
from .pacing import wait_for_headers, wait_for_headers_async
from .recording import Recording

__all__ = ["install"]

_DECISION = "promptvcr.decision"
#: respx registers Mockers by name for the life of the process. A name of this module's own
#: lets a second import of it (pytester runs, ``importlib.reload``) register its Mocker
#: instead of failing on the first import's.
_MOCKER_NAME = f"promptvcr-{uuid.uuid4().hex[:12]}"
#: What respx raises for a request its route passes through.
_PassThrough = respx_pass_through()


class _Transport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Ask respx first; what it passes through goes to the real transport, recorded if asked."""

    def __init__(self, route: Callable[..., Any], real: Any) -> None:
        self._route = route
        self._real = real

    @staticmethod
    def _decision(request: httpx.Request) -> Decision | None:
        """What the handler decided for a request respx passed through: record it, or
        serve a response with a playback (its delays must be slept here, sync or async)."""
        decision: Decision | None = request.extensions.pop(_DECISION, None)
        return decision

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return httpx.MockTransport(self._route).handle_request(request)
        except _PassThrough:
            pass
        decision = self._decision(request)
        if isinstance(decision, Replay) and decision.response.playback is not None:
            wait_for_headers(decision.response.playback, failures(httpx, request))
            return replay_response(httpx, decision.response, request)  # type: ignore[no-any-return]
        recording = Recording(decision.recorder) if isinstance(decision, Record) else None
        with forwarding():  # an aiohttp-backed transport (litellm's) must not intercept it again
            real = self._real.handle_request(request)
        if recording is not None:
            return record_response(httpx, real, recording)  # type: ignore[no-any-return]
        return real  # type: ignore[no-any-return]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await httpx.MockTransport(self._route).handle_async_request(request)
        except _PassThrough:
            pass
        decision = self._decision(request)
        if isinstance(decision, Replay) and decision.response.playback is not None:
            await wait_for_headers_async(decision.response.playback, failures(httpx, request))
            return replay_response(httpx, decision.response, request)  # type: ignore[no-any-return]
        recording = Recording(decision.recorder) if isinstance(decision, Record) else None
        with forwarding():
            real = await self._real.handle_async_request(request)
        if recording is not None:
            return record_response(httpx, real, recording)  # type: ignore[no-any-return]
        return real  # type: ignore[no-any-return]


class _FixedRouter(respx.MockRouter):
    """A router whose one route never changes, so respx's snapshot and rollback (run on each
    start and stop to undo routes added meanwhile) have nothing to keep; they build two
    ``unittest.mock`` call lists each time, half the cost of entering a cassette's patches.
    The calls it records are still cleared on each stop (``reset``)."""

    def snapshot(self) -> None:
        pass

    def rollback(self) -> None:
        pass


@functools.cache
def _mocker() -> type:
    """The respx Mocker, defined once: respx keeps a registry of them by name."""
    return respx_mocker(_MOCKER_NAME, _Transport)


class _Router:
    """One respx router for the process, started for each activation with its handler.

    Building a router and its route costs as much as starting it, and a pytest suite enters
    a cassette per test; the handler of the activation in place is all that changes.
    """

    handler: Handler | None = None

    @functools.cached_property
    def router(self) -> respx.MockRouter:
        _mocker()
        router = _FixedRouter(using=_MOCKER_NAME, assert_all_called=False, assert_all_mocked=False)
        router.route().mock(side_effect=self.side_effect)
        return router

    def side_effect(self, request: httpx.Request) -> httpx.Response | httpx.Request:
        handler = self.handler
        if handler is None:  # stopped meanwhile (another thread's cassette exited): not ours
            return request
        decision = handler.handle(to_request(request))
        if isinstance(decision, Replay) and decision.response.playback is None:
            return replay_response(httpx, decision.response)  # type: ignore[no-any-return]
        request.extensions[_DECISION] = decision
        return request  # respx: pass it through to the real transport


_ROUTER = _Router()


def install(handler: Handler) -> Uninstall:
    # The shared router, unless it is in use (a second install alongside the first): then a router of its own.
    shared = _ROUTER if _ROUTER.handler is None else _Router()
    router = shared.router
    shared.handler = handler
    router.start()

    def uninstall() -> None:
        router.stop(quiet=True)
        shared.handler = None

    return uninstall
