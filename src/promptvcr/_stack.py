"""Which cassette is active, and the patches that route requests to it.

The patches are installed when the first cassette is entered and removed when the last
one exits. Requests go to the innermost active cassette whatever thread or task sends
them: a worker thread started inside a ``with use_cassette(...)`` block is intercepted
too, instead of reaching the network unseen (a context variable would miss it).
"""

from __future__ import annotations

import threading
from typing import Protocol

from . import _exits
from .cassettes.models import Request, Response
from .interceptors import OnRecorded, Uninstall, install_all

__all__ = ["activate", "deactivate"]


class _Active(Protocol):
    def handle(self, request: Request) -> Response | OnRecorded | None: ...


_lock = threading.RLock()
_stack: list[_Active] = []
_uninstall: Uninstall | None = None


class _Dispatcher:
    def handle(self, request: Request) -> Response | OnRecorded | None:
        with _lock:
            current = _stack[-1] if _stack else None
        return None if current is None else current.handle(request)


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
    _exits.notify(cassette)
