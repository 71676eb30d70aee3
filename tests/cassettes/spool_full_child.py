"""A child process for test_spool_full: records an 8 MiB stream through the real httpx2 client
while its temporary folder is full (a 1 MiB tmpfs as TMPDIR) or its files are limited to 1 MiB
(RLIMIT_FSIZE). Prints one JSON line: what the application read, what the cassette raised, and
what the file holds."""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2

import promptvcr

SIZE = 8 << 20
BODY = b"".join(b'data: {"i": %d, "t": "%s"}\n\n' % (i, b"x" * 1000) for i in range(SIZE // 1000))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        for start in range(0, len(BODY), 65536):
            self.wfile.write(BODY[start : start + 65536])


def main() -> None:
    cassette, how = Path(sys.argv[1]), sys.argv[2]
    if how == "fsize":  # the spool's writes fail with EFBIG past 1 MiB, as on a quota'd disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    read, raised = 0, ""
    try:
        with (
            promptvcr.use_cassette(cassette, record_mode="record"),
            httpx2.Client() as client,
            client.stream("POST", url, json={"stream": True}) as response,
        ):
            for chunk in response.iter_bytes():
                read += len(chunk)
    except Exception as error:  # what the test asserts on
        raised = f"{type(error).__name__}: {error}"
    text = cassette.read_text() if cassette.exists() else ""
    print(json.dumps({"read": read, "size": len(BODY), "raised": raised, "cassette": text[:2000]}))
    server.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
