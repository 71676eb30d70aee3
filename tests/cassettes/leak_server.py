"""A loopback server whose answer each test writes: the odd placements of a leaked key.

The fake provider answers like a provider; this one answers whatever the test's ``reply``
returns for the request it received: the key echoed in JSON, split across SSE events, in a
``location`` header, inside a binary or gzip body. Stdlib only, 127.0.0.1 only.

Usage::

    with LeakServer() as server:
        server.reply = lambda request: Answer(200, {"content-type": "application/json"}, b"{}")
        requests.get(server.url + "/anything")
        assert server.requests[0].path == "/anything"
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["Answer", "LeakServer", "Received"]


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})
    #: The body, sent in these chunks (an SSE stream: one event per chunk).
    chunks: tuple[bytes, ...] = (b"{}",)


def _default(_: Received) -> Answer:
    return Answer()


class LeakServer:
    def __init__(self) -> None:
        self.reply: Callable[[Received], Answer] = _default
        self.requests: list[Received] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                received = Received(
                    self.command,
                    parts.path,
                    parts.query,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                server.requests.append(received)
                answer = server.reply(received)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                streamed = answer.headers.get("content-type", "").startswith("text/event-stream")
                if streamed:
                    self.send_header("transfer-encoding", "chunked")
                else:
                    self.send_header("content-length", str(sum(len(c) for c in answer.chunks)))
                self.end_headers()
                if self.command == "HEAD":  # the headers of the answer, and no body
                    return
                for chunk in answer.chunks:
                    if streamed:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    else:
                        self.wfile.write(chunk)
                    self.wfile.flush()
                if streamed:
                    self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> LeakServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
