"""A loopback server that answers each path with bytes scripted by the test, exactly.

``/<name>/...`` serves the script registered under ``name``: a content type and a list of
``(delay, bytes)`` parts sent with chunked framing (one HTTP chunk per part), or, for
``length=True``, one body with a ``content-length``. A script with ``forever`` repeats its
last part every ``delay`` seconds until the client hangs up; ``hung_up[name]`` is then set.
Stdlib only, so it does not depend on the HTTP stacks under test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Script:
    content_type: str
    parts: Sequence[tuple[float, bytes]]
    length: bool = False
    forever: bool = False
    status: int = 200


@dataclass
class Scripted:
    base: str
    scripts: dict[str, Script] = field(default_factory=dict)
    hung_up: dict[str, threading.Event] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)

    def add(self, name: str, script: Script) -> str:
        self.scripts[name] = script
        self.hung_up[name] = threading.Event()
        return f"{self.base}/{name}"


@contextmanager
def scripted() -> Iterator[Scripted]:
    state = Scripted(base="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            name = self.path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
            state.queries.append(self.path)
            script = state.scripts[name]
            self.send_response(script.status)
            self.send_header("content-type", script.content_type)
            if script.length:
                body = b"".join(part for _, part in script.parts)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            try:
                parts = list(script.parts)
                while parts:
                    delay, data = parts.pop(0)
                    time.sleep(delay)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                    state.sent[name] = state.sent.get(name, 0) + 1
                    if script.forever and not parts:
                        parts = [(delay, data)]
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                state.hung_up[name].set()
            self.close_connection = True

        do_GET = do_POST = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
