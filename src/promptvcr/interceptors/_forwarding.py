"""Each request is handled by exactly one interceptor, the outermost one.

Some transports are built on another HTTP library: openai's ``DefaultAioHttpClient`` and
litellm's transport are httpx(2) transports that send with aiohttp. The httpx2 interceptor
sees such a request first; when it forwards it to the real transport, the aiohttp
interceptor must let it through untouched, or a recording would hold it twice and a
passthrough would count it twice. A context variable marks that forwarding: it follows
the request into the tasks and awaits of the transport, and nowhere else, so an unrelated
request from another thread or task is still intercepted.
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["forwarding", "is_forwarding"]

_forwarding: ContextVar[bool] = ContextVar("promptvcr_forwarding", default=False)


def is_forwarding() -> bool:
    """True while an outer interceptor sends this request to the network itself."""
    return _forwarding.get()


def forwarding() -> _Forwarding:
    """Marks the request sent inside the ``with`` block as forwarded (see above)."""
    return _Forwarding()


class _Forwarding:
    """The context manager of :func:`forwarding`: a class rather than a generator, as it runs
    for every request sent to the network (a third of the cost, issue 22)."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _forwarding.set(True)

    def __exit__(self, *error: object) -> None:
        _forwarding.reset(self._token)
