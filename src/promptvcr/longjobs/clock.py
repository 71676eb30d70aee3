"""The application's sleeps, skipped while a replayed long job is being polled.

A user's polling loop (``while batch.status != "completed": time.sleep(10); retrieve``) sleeps
on its own clock, not the server's: no header to rewrite. With ``timing="fast"`` a replaying
cassette installs :func:`time.sleep` and :func:`asyncio.sleep` replacements that return at once
(still yielding, as a sleep of 0 does) when three things hold: the caller runs in the context
that entered the cassette (or a context copied from it: tasks, ``asyncio.to_thread``), as
:mod:`promptvcr.activation` scopes requests; that cassette has a job whose last replayed state
had not ended; and the caller is not promptvcr itself (its own pacing sleeps stay real). Any
other sleep, in any other thread or task, or once the job ended, waits as asked.

The replacements are installed while at least one such cassette is entered and removed when the
last leaves; one that finds another library's replacement in place leaves it there.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["enter", "leave", "skipping"]

#: Whether each cassette entered in this context skips sleeps now (one callable per cassette).
_scope: contextvars.ContextVar[tuple[Callable[[], bool], ...]] = contextvars.ContextVar(
    "promptvcr_fast_forward", default=()
)
_lock = threading.Lock()
_users = 0
#: The sleeps found in place when the replacements went in: called for every sleep, put back after.
_real_sleep = time.sleep
_real_async_sleep: Callable[..., Any] = asyncio.sleep


def skipping() -> bool:
    """Whether a sleep called now, in this context, is skipped."""
    return any(skips() for skips in _scope.get())


def _ours(frame: Any) -> bool:
    """Whether the sleep was called by promptvcr's own code (its pacing keeps real time)."""
    caller = frame.f_back if frame is not None else None
    return caller is not None and str(caller.f_globals.get("__name__", "")).startswith("promptvcr.")


def _sleep(seconds: float) -> None:
    if seconds > 0 and skipping() and not _ours(inspect.currentframe()):
        seconds = 0
    _real_sleep(seconds)


async def _async_sleep(delay: float, result: Any = None) -> Any:
    if delay > 0 and skipping() and not _ours(inspect.currentframe()):
        delay = 0
    return await _real_async_sleep(delay, result)


def enter(skips: Callable[[], bool]) -> contextvars.Token[tuple[Callable[[], bool], ...]]:
    """Skip sleeps in this context whenever ``skips()`` says so, until :func:`leave`."""
    global _users, _real_sleep, _real_async_sleep
    with _lock:
        if _users == 0:
            _real_sleep, _real_async_sleep = time.sleep, asyncio.sleep
            time.sleep = _sleep  # type: ignore[assignment]
            asyncio.sleep = _async_sleep
        _users += 1
    return _scope.set((*_scope.get(), skips))


def leave(skips: Callable[[], bool], token: contextvars.Token[tuple[Callable[[], bool], ...]]) -> None:
    """Stop skipping for ``skips``; the last to leave puts the real sleeps back."""
    global _users
    try:
        _scope.reset(token)
    except ValueError:  # left from another context (a fixture, an async generator)
        _scope.set(tuple(s for s in _scope.get() if s is not skips))
    with _lock:
        _users -= 1
        if _users == 0:
            if time.sleep is _sleep:
                time.sleep = _real_sleep
            if asyncio.sleep is _async_sleep:
                asyncio.sleep = _real_async_sleep
