"""Which cassette is active, the patches that route requests to it, and who hears of exits.

The patches are installed when the first cassette is entered and removed when the last
one exits. Requests go to the innermost active cassette whatever thread or task sends
them: a worker thread started inside a ``with use_cassette(...)`` block is intercepted
too, instead of reaching the network unseen (a context variable would miss it).

Exit watchers (the pytest plugin's run record) are kept here too. Importing this module
loads no HTTP library: :func:`~promptvcr.interceptors.install_all` imports each
interceptor (and its library) only when the first cassette is entered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

from .cassettes.models import Request
from .interceptors import PASS_THROUGH, Decision, Uninstall, install_all

__all__ = ["activate", "deactivate", "watch_exits"]


class _Active(Protocol):
    def handle(self, request: Request) -> Decision: ...


_lock = threading.RLock()
_stack: list[_Active] = []
_uninstall: Uninstall | None = None
_watchers: list[Callable[[Any], None]] = []


class _Dispatcher:
    def handle(self, request: Request) -> Decision:
        with _lock:
            current = _stack[-1] if _stack else None
        return PASS_THROUGH if current is None else current.handle(request)


def activate(cassette: _Active) -> None:
    global _uninstall
    with _lock:
        if _uninstall is None:
            _uninstall = install_all(_Dispatcher())
        _stack.append(cassette)


def deactivate(cassette: _Active) -> None:
    global _uninstall
    with _lock:
        if cassette in _stack:
            # Remove this one even when cassettes exit out of order (async tasks).
            del _stack[len(_stack) - 1 - _stack[::-1].index(cassette)]
        uninstall = _uninstall if not _stack else None
        if uninstall is not None:
            _uninstall = None
            uninstall()
        watchers = list(_watchers)
    for callback in watchers:
        callback(cassette)


def watch_exits(callback: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``callback(cassette)`` whenever a cassette exits; returns the function that stops it."""
    with _lock:
        _watchers.append(callback)

    def stop() -> None:
        with _lock:
            if callback in _watchers:
                _watchers.remove(callback)

    return stop
