"""Declaring a fault: what goes wrong, and which request it happens to.

A fault applies to the ``nth`` request (and the ``times - 1`` after it) among those that
match its selector: a method, a path pattern (``fnmatch`` syntax, against the URL path)
and a predicate on the :class:`~promptvcr.Request`, all optional. Every matching request
counts, whether or not a fault fired on it, so ``nth`` means what it says.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..cassettes.models import Request

__all__ = [
    "Fault",
    "FaultKind",
    "connect_timeout",
    "cut_stream",
    "http_error",
    "malformed_event",
    "read_timeout",
]

FaultKind = Literal["http_error", "connect_timeout", "read_timeout", "cut_stream", "malformed_event"]

Predicate = Callable[[Request], bool]


@dataclass(frozen=True, eq=False)
class Fault:
    """One declared fault. Build it with :func:`http_error`, :func:`connect_timeout`,
    :func:`read_timeout`, :func:`cut_stream` or :func:`malformed_event`."""

    kind: FaultKind
    status: int | None = None
    retry_after: float | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    after_events: int | None = None
    event: int | None = None
    method: str | None = None
    path: str | None = None
    where: Predicate | None = None
    nth: int = 1
    times: int = 1

    def __post_init__(self) -> None:
        for name in ("nth", "times"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.kind}: {name}={value!r}, expected a whole number from 1.")
        for name in ("after_events", "event"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise ValueError(f"{self.kind}: {name}={value!r}, expected a whole number from 0.")
        retry_after = self.retry_after
        if retry_after is not None and not (isinstance(retry_after, (int, float)) and retry_after >= 0):
            raise ValueError(f"{self.kind}: retry_after={self.retry_after!r}, expected seconds (0 or more).")

    @property
    def breaks_recorded_answer(self) -> bool:
        """It changes a recorded response (so it needs one) rather than replacing it."""
        return self.kind in ("cut_stream", "malformed_event") or (
            self.kind == "read_timeout" and self.after_events is not None
        )

    def matches(self, request: Request) -> bool:
        if self.method is not None and request.method.upper() != self.method.upper():
            return False
        if self.path is not None and not fnmatch.fnmatchcase(request.path, self.path):
            return False
        return self.where is None or bool(self.where(request))

    def __repr__(self) -> str:
        shown = {
            "status": self.status,
            "after_events": self.after_events,
            "event": self.event,
            "method": self.method,
            "path": self.path,
        }
        parts = [f"{k}={v!r}" for k, v in shown.items() if v is not None]
        if self.where is not None:
            parts.append(f"where={getattr(self.where, '__name__', 'predicate')}")
        parts.append(f"nth={self.nth}" + (f", times={self.times}" if self.times != 1 else ""))
        return f"{self.kind}({', '.join(parts)})"


def http_error(
    status: int,
    *,
    retry_after: float | None = None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    method: str | None = None,
    path: str | None = None,
    where: Predicate | None = None,
    nth: int = 1,
    times: int = 1,
) -> Fault:
    """Answer with ``status`` and the body the request's provider sends with it.

    429 rate limited, 500, 503, 529 overloaded (Anthropic), or any other status. The body
    and headers are the provider's (chosen by host, SDK headers and path; see
    :mod:`.provider_errors`); ``body`` (a JSON value) and ``headers`` replace or extend them.
    ``retry_after`` (seconds) sends ``retry-after`` and ``retry-after-ms``.
    """
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise ValueError(f"http_error: status={status!r}, expected an HTTP error status (400 to 599).")
    return Fault(
        "http_error", status=status, retry_after=retry_after, body=body, headers=dict(headers or {}),
        method=method, path=path, where=where, nth=nth, times=times,
    )  # fmt: skip


def connect_timeout(
    *,
    method: str | None = None,
    path: str | None = None,
    where: Predicate | None = None,
    nth: int = 1,
    times: int = 1,
) -> Fault:
    """The client cannot connect in time: raised as its library's connect-timeout exception."""
    return Fault("connect_timeout", method=method, path=path, where=where, nth=nth, times=times)


def read_timeout(
    *,
    after_events: int | None = None,
    method: str | None = None,
    path: str | None = None,
    where: Predicate | None = None,
    nth: int = 1,
    times: int = 1,
) -> Fault:
    """The server stops sending: the library's read-timeout exception, before the response
    headers, or with ``after_events=k`` after the first ``k`` events of the recorded stream."""
    return Fault(
        "read_timeout", after_events=after_events, method=method, path=path, where=where, nth=nth, times=times
    )


def cut_stream(
    after_events: int,
    *,
    method: str | None = None,
    path: str | None = None,
    where: Predicate | None = None,
    nth: int = 1,
    times: int = 1,
) -> Fault:
    """The connection ends after the first ``after_events`` events of the recorded stream
    (or, for a body that is not a stream, before it), as when the server goes away:
    the client raises what it raises for an incomplete body."""
    return Fault(
        "cut_stream", after_events=after_events, method=method, path=path, where=where, nth=nth, times=times
    )


def malformed_event(
    event: int,
    *,
    method: str | None = None,
    path: str | None = None,
    where: Predicate | None = None,
    nth: int = 1,
    times: int = 1,
) -> Fault:
    """Event ``event`` (0 is the first) of the recorded stream arrives with its JSON cut in
    half; a body that is not a stream (``event=0``) arrives as half its JSON."""
    return Fault("malformed_event", event=event, method=method, path=path, where=where, nth=nth, times=times)
