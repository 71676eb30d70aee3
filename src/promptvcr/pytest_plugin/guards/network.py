"""Keeping tests off the network: every connection outside loopback fails, naming its host.

A replaying test that still reaches a provider is not testing the recording, and in CI it
spends money or hangs on a firewall. The block patches the three places a Python program
reaches another host through: name resolution (``socket.getaddrinfo``, so a blocked name
is not even looked up) and ``socket.socket.connect``/``connect_ex``. Loopback
(127.0.0.0/8, ::1, ``localhost``) always goes through, so tests keep their local servers.

:class:`NetworkBlocked` is a ``BaseException`` for the reason :class:`~promptvcr.CassetteMiss`
is one: SDKs turn every ``Exception`` of a transport into their own connection error and
retry it, which would hide the message behind seconds of back-off.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from ...policies.modes import record_flag

__all__ = ["NetworkBlocked", "blocked", "is_loopback"]

#: Names of this machine; "" is what ``connect(("", port))`` sends to the local host.
_LOOPBACK_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


class NetworkBlocked(BaseException):
    """A test tried to connect to a host outside loopback while the network was blocked."""

    def __init__(self, host: str, port: object, reason: str) -> None:
        self.host = host
        self.port = port
        self.message = (
            f"promptvcr blocked a network connection to {host}"
            + (f" (port {port})" if port not in (None, 0, "") else "")
            + f": {reason}.\n"
            f"To let this host through, run pytest with --allowed-hosts={host}; "
            f"to reach the real provider and record, run pytest with {record_flag()}=record."
        )
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


@functools.lru_cache(maxsize=1024)
def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an address, or ``None`` for a name. Remembered: every test's guard parses the
    same allowed hosts, and a name costs a raised ``ValueError`` (issue 22)."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    name = host.lower().rstrip(".")
    if name in _LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    address = _ip(name)
    if address is None:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    # 0.0.0.0 and :: as a destination mean this machine too.
    return address.is_loopback or address.is_unspecified or (mapped is not None and mapped.is_loopback)


class _Policy:
    """Which hosts may be reached; addresses of allowed names are learnt as they resolve."""

    def __init__(self, allowed_hosts: Iterable[str], reason: str) -> None:
        self.reason = reason
        self._names = {h.lower().rstrip(".") for h in allowed_hosts if h}
        self._addresses = {a for a in (_ip(h) for h in self._names) if a is not None}
        self._lock = threading.Lock()

    def allows(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        if is_loopback(name) or any(name == known or name.endswith(f".{known}") for known in self._names):
            return True
        address = _ip(host)
        with self._lock:
            return address is not None and address in self._addresses

    def learn(self, results: list[Any]) -> None:
        """Remember the addresses an allowed name resolved to, so connecting to them is allowed."""
        with self._lock:
            for *_, sockaddr in results:
                if isinstance(sockaddr, tuple) and sockaddr and isinstance(sockaddr[0], str):
                    address = _ip(sockaddr[0])
                    if address is not None:
                        self._addresses.add(address)


def _host_text(host: object) -> str | None:
    if isinstance(host, bytes):
        return host.decode("idna", "replace")
    return host if isinstance(host, str) else None


@contextlib.contextmanager
def blocked(allowed_hosts: Iterable[str] = (), *, reason: str) -> Iterator[None]:
    """Within the block, connecting outside loopback and ``allowed_hosts`` raises :class:`NetworkBlocked`.

    An allowed name allows its subdomains too. ``reason`` completes the message: why this
    test may not use the network.
    """
    policy = _Policy(allowed_hosts, reason)
    original_getaddrinfo = socket.getaddrinfo
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def check(address: Any) -> None:
        if isinstance(address, tuple) and len(address) >= 2:
            host = _host_text(address[0])
            if host is not None and not policy.allows(host):
                raise NetworkBlocked(host, address[1], policy.reason)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = _host_text(host)
        if name is not None and not policy.allows(name):
            raise NetworkBlocked(name, port, policy.reason)
        results = original_getaddrinfo(host, port, *args, **kwargs)
        if name is not None and not is_loopback(name):
            policy.learn(results)
        return results

    def connect(self: socket.socket, address: Any) -> None:
        check(address)
        original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(address)
        return original_connect_ex(self, address)

    socket.getaddrinfo = getaddrinfo
    socket.socket.connect = connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        socket.getaddrinfo = original_getaddrinfo
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]
