"""A plain HTTP server on 127.0.0.1 for the length of a block, and a process's memory as Linux
counts it: what the tests of large bodies (and ``benchmarks/bench_serve.py``) measure with.

The server is the standard library's, threaded: the test's handler class says what it answers
(a sink that reads a request a megabyte at a time, a stream written event by event), and
nothing of the HTTP stacks under test is in it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

__all__ = ["process_memory", "serving"]


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a server answering with ``handler`` until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def process_memory(pid: int) -> dict[str, int]:
    """A process's resident memory now (``VmRSS``) and at its peak (``VmHWM``), in bytes."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found
