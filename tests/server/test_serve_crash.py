"""A real ``promptvcr serve`` killed while recording: SIGKILL loses at most the request in
flight (each recording is written as it completes), and SIGTERM with a stream under way
writes that stream as far as it arrived (``end: closed``) and exits non-zero."""

from __future__ import annotations

import http.client
import json
import signal
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from fake_provider import FakeProvider

from promptvcr.server import serve

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _chat(url: str, text: str, stream: bool = False) -> http.client.HTTPResponse:
    parts = urlsplit(f"{url}/openai/v1/chat/completions")
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}], "stream": stream}
    connection = http.client.HTTPConnection(parts.netloc, timeout=30)
    connection.request("POST", parts.path, json.dumps(body), {"content-type": "application/json"})
    return connection.getresponse()


def _stored(path: Path) -> list[dict[str, object]]:
    interactions: list[dict[str, object]] = yaml.safe_load(path.read_text())["interactions"]
    return interactions


def test_sigkill_keeps_every_recording_that_completed(tmp_path: Path) -> None:
    cassette = tmp_path / "killed.yaml"
    with (
        FakeProvider() as fake,
        serve(cassette, record_mode="record", upstreams={"openai": fake.base_url}) as server,
    ):
        for text in ("one", "two", "three"):
            assert _chat(server.url, text).read()
        assert _chat(server.url, "four", stream=True).read().endswith(b"data: [DONE]\n\n")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    assert server.process.returncode == -signal.SIGKILL
    stored = _stored(cassette)
    assert [i["response"]["status"] for i in stored] == [200, 200, 200, 200]  # type: ignore[index]
    assert "four" in cassette.read_text()


def test_sigterm_writes_the_stream_in_flight_as_far_as_it_arrived(tmp_path: Path) -> None:
    cassette = tmp_path / "terminated.yaml"
    with FakeProvider() as fake:
        fake.hold_stream = threading.Event()  # the stream sends its first event, then waits
        with serve(
            cassette, record_mode="record", upstreams={"openai": fake.base_url}, options=["--grace", "0.5"]
        ) as server:
            assert _chat(server.url, "done before").read()
            response = _chat(server.url, "under way", stream=True)
            first = response.read1(65536)
            server.process.send_signal(signal.SIGTERM)
            server.process.wait(timeout=20)
            fake.hold_stream.set()
    assert first.startswith(b"data: ")
    assert server.process.returncode == 1
    assert "stopped while 1 response(s) were arriving" in server.log_text and "end: closed" in server.log_text
    stored = _stored(cassette)
    assert len(stored) == 2
    streamed = stored[1]["response"]
    assert streamed["end"] == "closed" and len(streamed["events"]) == 1  # type: ignore[index]
