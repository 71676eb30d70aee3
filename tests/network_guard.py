"""Proof that replay stays off the network: every socket connect and name lookup is refused
and remembered, for whatever library and thread makes it (urllib3, aiohttp, httpx, ...)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["NetworkAttempts", "no_network"]


class NetworkAttempts(list[Any]):
    """The addresses something tried to connect to or resolve while the guard was on."""


@contextmanager
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[NetworkAttempts]:
    attempts = NetworkAttempts()

    def refuse_connect(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise ConnectionRefusedError(f"test guard: connect to {address!r} refused")

    def refuse_connect_ex(self: socket.socket, address: Any) -> int:
        attempts.append(address)
        return 111

    def refuse_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        attempts.append(host)
        raise socket.gaierror(f"test guard: lookup of {host!r} refused")

    with monkeypatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse_connect)
        patch.setattr(socket.socket, "connect_ex", refuse_connect_ex)
        patch.setattr(socket, "getaddrinfo", refuse_lookup)
        yield attempts
