"""Loopback servers that fail the way real ones do, so injected faults can be compared with them.

Each reads one whole request per connection and then misbehaves:

* ``cut``: sends a chunked response with the given events, then hangs up mid-body;
* ``stall``: sends the same, then goes quiet with the connection open (a read timeout);
* ``silent``: never answers at all (a read timeout before the headers).

:func:`unreachable` is a listening socket whose accept queue is full: the kernel drops
further connection attempts, so a client's connect times out, as against a dead host.

Stdlib only: the servers must not depend on the HTTP stacks under test.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Literal

__all__ = ["misbehaving", "unreachable"]

Mode = Literal["cut", "stall", "silent"]

HOLD = 5.0  # longest a stalled or silent connection stays open, so a broken test cannot hang


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        received = conn.recv(65536)
        if not received:
            return
        data += received
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        received = conn.recv(65536)
        if not received:
            return
        body += received


def _answer(
    conn: socket.socket, mode: Mode, events: Sequence[bytes], content_type: str, stop: threading.Event
) -> None:
    with conn:
        _read_request(conn)
        if mode != "silent":
            head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
            conn.sendall(head.encode() + b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events))
        if mode != "cut":
            stop.wait(HOLD)


@contextlib.contextmanager
def misbehaving(
    mode: Mode, events: Sequence[bytes] = (), content_type: str = "text/event-stream"
) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:<port>``) of a server that misbehaves as ``mode`` says."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    workers: list[threading.Thread] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            worker = threading.Thread(
                target=_answer, args=(conn, mode, events, content_type, stop), daemon=True
            )
            worker.start()
            workers.append(worker)

    acceptor = threading.Thread(target=serve, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept(); close() alone does not
        listener.close()
        acceptor.join(timeout=5)
        for worker in workers:
            worker.join(timeout=5)


@contextlib.contextmanager
def unreachable() -> Iterator[str]:
    """The base URL of a listener that never accepts, with its queue full: connects time out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):  # more than the backlog holds, whatever the kernel rounds 0 up to
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
