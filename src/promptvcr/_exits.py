"""Who hears of each cassette as it exits: the pytest plugin's usage record, and nothing else.

Its own module, with no imports, so the plugin can listen from the start of a run without
loading the interceptors or the cassette machinery before a test needs them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["notify", "watch"]

_lock = threading.Lock()
_watchers: list[Callable[[Any], None]] = []


def watch(callback: Callable[[Any], None]) -> Callable[[], None]:
    """Call ``callback(cassette)`` whenever a cassette exits; returns the function that stops it."""
    with _lock:
        _watchers.append(callback)

    def stop() -> None:
        with _lock:
            if callback in _watchers:
                _watchers.remove(callback)

    return stop


def notify(cassette: Any) -> None:
    with _lock:
        watchers = list(_watchers)
    for callback in watchers:
        callback(cassette)
