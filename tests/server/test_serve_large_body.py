"""A large stream recorded through ``promptvcr serve``: the server holds a few megabytes, not
the body, and the cassette replays it byte for byte, through the server and in-process.

Before issue 48 the server held the body about five times over while it saved it (a 300 MB
stream peaked 1.5 GB above idle): the recording kept every chunk, and the stream was joined,
decoded and parsed into events to be stored, scanned and counted. Now a body past the spool
threshold waits in a temporary file (``promptvcr.cassettes.spool``) and is read back a slice at
a time. Measured here as the server process's peak resident memory (``VmHWM``) above idle.
"""

from __future__ import annotations

import hashlib
import http.client
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from tests.loopback import process_memory, serving

from promptvcr import use_cassette
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES
from promptvcr.server import serve

MIB = 1024 * 1024
#: A stream of about 48 MB, in events of about 64 KiB, each different.
EVENTS = 768
REQUEST = {"model": "gpt-4o", "messages": [{"role": "user", "content": "a long answer"}], "stream": True}
#: The server's growth allowed while it records the stream: less than the body itself.
BOUND = 40 * MIB


def _event(index: int) -> bytes:
    text = f"{index:08d} " * 7000  # digits: the credential searches over it stay quick
    end = b"\r\n\r\n" if index % 5 == 0 else b"\n\n"  # the line ends as sent, kept
    return b"data: " + json.dumps({"index": index, "delta": text, "note": "é"}).encode() + end


class _Upstream(BaseHTTPRequestHandler):
    """Streams the events one write each, as a provider streams an answer."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for index in range(EVENTS):
            event = _event(index)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def upstream() -> Iterator[str]:
    with serving(_Upstream) as url:
        yield url


def _read_through(url: str) -> tuple[int, str]:
    """The stream's request through the server: the bytes received and their SHA-256."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=120)
    connection.request(
        "POST", "/openai/v1/chat/completions", json.dumps(REQUEST), {"content-type": "application/json"}
    )
    response = connection.getresponse()
    assert response.status == 200
    size, digest = 0, hashlib.sha256()
    while chunk := response.read1(1 << 16):
        size += len(chunk)
        digest.update(chunk)
    connection.close()
    return size, digest.hexdigest()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
def test_a_large_stream_recorded_through_serve_is_never_held_and_replays_byte_for_byte(
    tmp_path: Path, upstream: str
) -> None:
    sent = b"".join(_event(index) for index in range(EVENTS))
    assert len(sent) > 10 * LARGE_BODY_BYTES and len(sent) > BOUND
    expected = (len(sent), hashlib.sha256(sent).hexdigest())
    del sent
    path = tmp_path / "large.yaml"
    with serve(path, record_mode="record", upstreams={"openai": upstream}) as server:
        idle = process_memory(server.process.pid)["VmRSS"]
        assert _read_through(server.url) == expected
        grown = process_memory(server.process.pid)["VmHWM"] - idle  # the save ran before the body's end
    assert grown < BOUND, f"serve grew {grown / MIB:.0f} MB recording a {expected[0] / MIB:.0f} MB stream"
    text = path.read_text(encoding="utf-8")  # the body beside it, as received: no event layout that large
    assert "\n    file:\n      path: bodies/sha256-" in text and "events:" not in text and len(text) < 8192
    assert [body.stat().st_size for body in (tmp_path / "bodies").iterdir()] == [expected[0]]

    with serve(path, record_mode="replay") as server:
        assert _read_through(server.url) == expected
    with use_cassette(path, record_mode="replay"), httpx2.Client() as client:
        replayed = client.post(f"{upstream}/v1/chat/completions", json=REQUEST).content
    assert (len(replayed), hashlib.sha256(replayed).hexdigest()) == expected


class _Sized(BaseHTTPRequestHandler):
    """Answers 24 MB of text with its ``content-length``: a client knows it has the whole answer
    as soon as the last byte arrives, before the server has written the recording."""

    protocol_version = "HTTP/1.1"
    body = b"".join(b"%08d line of a large download\n" % index for index in range(24 * MIB // 36))

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)


def test_a_rewrite_stopped_as_soon_as_its_large_answer_arrived_holds_it(tmp_path: Path) -> None:
    """The client has every byte before the recording is written (in a thread, so the server
    answers the others meanwhile: ``server.relay``). A stop that comes at once waits for that
    write: left before it, the rewrite would be merged without it, an empty cassette."""
    path = tmp_path / "rewritten.yaml"
    with (
        serving(_Sized) as upstream,
        serve(f"{tmp_path}/", record_mode="replay", upstreams={"openai": upstream}) as server,
    ):
        status, _ = server.admin("start", {"cassette": str(path), "record_mode": "rewrite"})
        assert status == 200
        connection = http.client.HTTPConnection(urlsplit(server.url).netloc, timeout=120)
        connection.request("POST", "/openai/v1/files", b"{}", {"content-type": "application/json"})
        response = connection.getresponse()
        assert response.status == 200 and len(response.read()) == len(_Sized.body)
        connection.close()
        status, report = server.admin("stop", {"cassette": str(path)})
    assert status == 200 and report["ok"] and report["outcomes"] == {"recorded": 1}
    assert "path: bodies/sha256-" in path.read_text(encoding="utf-8")
    assert [body.stat().st_size for body in (tmp_path / "bodies").iterdir()] == [len(_Sized.body)]
