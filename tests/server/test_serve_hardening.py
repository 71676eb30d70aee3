"""``promptvcr serve`` under clients that misbehave or wait: a header or body that never
comes, more requests than it takes at once, a gzip body, an injected timeout with a client
that would wait for minutes. Raw sockets, http.client and curl against the real command."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from fake_provider import FakeProvider

from promptvcr.server import serve

STREAM = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "held"}], "stream": True}


def _address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 80


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closed ``sock`` (reading nothing or a reply), None if it did not."""
    sock.settimeout(seconds)
    started = time.monotonic()
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def test_a_client_that_never_finishes_its_headers_or_body_is_cut_off(tmp_path: Path) -> None:
    options = ["--header-timeout", "1", "--body-timeout", "1"]
    with serve(tmp_path / "slow.yaml", record_mode="replay", options=options) as server:
        slow = socket.create_connection(_address(server.url))
        slow.sendall(b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: ")
        body = socket.create_connection(_address(server.url))
        body.sendall(
            b"POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model": '
        )
        body.settimeout(5)
        answer = body.recv(65536)
        headers_cut = _closed_within(slow, 5)
        slow.close()
        body.close()
    assert headers_cut is not None and headers_cut < 4
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer


def test_more_requests_than_the_limit_get_a_clear_503(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.hold_stream = release = threading.Event()
        options = ["--max-concurrent", "2"]
        with serve(
            tmp_path / "busy.yaml", record_mode="record", upstreams={"openai": fake.base_url}, options=options
        ) as server:
            url = urlsplit(f"{server.url}/openai/v1/chat/completions")
            held = []
            for _ in range(2):
                connection = http.client.HTTPConnection(url.netloc, timeout=30)
                connection.request("POST", url.path, json.dumps(STREAM), {"content-type": "application/json"})
                response = connection.getresponse()
                response.read1(65536)  # the first event: the stream is under way, and held
                held.append(response)
            third = http.client.HTTPConnection(url.netloc, timeout=30)
            third.request("POST", url.path, json.dumps(STREAM), {"content-type": "application/json"})
            busy = third.getresponse()
            error = json.loads(busy.read())["error"]
            release.set()
            for response in held:
                response.read()
    assert busy.status == 503 and busy.headers["retry-after"] == "1"
    assert "--max-concurrent 2" in error["message"] and error["code"] == "promptvcr_busy"
    assert server.report["cassettes"][0]["outcomes"] == {"recorded": 2}


def test_a_gzip_body_goes_upstream_as_received(tmp_path: Path) -> None:
    payload = gzip.compress(json.dumps({"input": "compressed"}).encode(), mtime=0)
    with FakeProvider() as fake:
        with serve(tmp_path / "gzip.yaml", record_mode="record", upstreams={"raw": fake.base_url}) as server:
            url = urlsplit(f"{server.url}/raw/raw/echo")
            connection = http.client.HTTPConnection(url.netloc, timeout=30)
            connection.request(
                "POST", url.path, payload, {"content-type": "application/json", "content-encoding": "gzip"}
            )
            answer = connection.getresponse()
            echoed = answer.read()
        received = fake.requests[0]
    assert answer.status == 200
    assert received.headers["content-encoding"] == "gzip" and received.body == payload
    assert echoed == payload


def test_an_injected_timeout_hangs_up_after_the_configured_silence(tmp_path: Path) -> None:
    cassette = tmp_path / "timeout.yaml"
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        url = urlsplit(f"{server.url}/openai/v1/chat/completions")
        connection = http.client.HTTPConnection(url.netloc, timeout=30)
        connection.request("POST", url.path, json.dumps(STREAM), {"content-type": "application/json"})
        connection.getresponse().read()
    options = [
        "--fault",
        "read_timeout,after_events=1",
        "--fault",
        "read_timeout,nth=2",
        "--fault-silence",
        "1",
    ]
    with serve(cassette, record_mode="replay", options=options) as server:
        url = urlsplit(f"{server.url}/openai/v1/chat/completions")
        waits = []
        for _ in range(2):  # a client that would wait 20 s: cut mid-stream, then before the headers
            connection = http.client.HTTPConnection(url.netloc, timeout=20)
            started = time.monotonic()
            try:
                connection.request("POST", url.path, json.dumps(STREAM), {"content-type": "application/json"})
                connection.getresponse().read()
            except (http.client.HTTPException, ConnectionError):
                pass
            waits.append(time.monotonic() - started)
    assert all(0.9 <= wait < 6 for wait in waits), waits
    assert server.report["cassettes"][0]["outcomes"] == {"fault": 2}
