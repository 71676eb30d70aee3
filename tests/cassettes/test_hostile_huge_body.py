"""A 48 MB response streamed through record mode by the real httpx2 client (12 times the 4 MiB
spool threshold: 100 MB cost two minutes of a loaded CI machine and proved nothing more).

While the code under test reads the stream, the recorder keeps the body once (its
chunks) and nothing else: the peak stays well below twice the body. Saving it writes the
stored text from those chunks slice by slice (see ``promptvcr.cassettes.largebody``), so
the save holds only a slice at a time, never the body again.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx2
import pytest
from tests.loopback import serving

import promptvcr
from promptvcr.files import fileformat

SIZE = 48 * 1024 * 1024
CHUNK = b"y" * 65535 + b"\n"


class _Huge(BaseHTTPRequestHandler):
    """Streams SIZE bytes of text, generated chunk by chunk: the server holds one chunk."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(SIZE))
        self.end_headers()
        for _ in range(SIZE // len(CHUNK)):
            self.wfile.write(CHUNK)


@pytest.fixture
def huge_url() -> Iterator[str]:
    with serving(_Huge) as url:
        yield f"{url}/huge"


class _Stop(Exception):
    """Leaves a rewrite-mode cassette without saving (rewrite never saves a failed body)."""


def _stream(url: str) -> int:
    with httpx2.Client() as client, client.stream("GET", url) as response:
        return sum(len(chunk) for chunk in response.iter_bytes())


def test_a_48mb_stream_is_held_once_while_it_is_recorded(tmp_path: Path, huge_url: str) -> None:
    path = tmp_path / "huge.yaml"
    tracemalloc.start()
    try:
        with pytest.raises(_Stop), promptvcr.use_cassette(path, record_mode="rewrite") as cassette:
            assert _stream(huge_url) == SIZE
            peak = tracemalloc.get_traced_memory()[1]
            raise _Stop
    finally:
        tracemalloc.stop()
    assert sum(len(c) for c in cassette.played[0].response.chunks) == SIZE  # recorded whole
    assert peak < 1.5 * SIZE, f"peak {peak / 2**20:.0f} MB while streaming {SIZE / 2**20:.0f} MB"
    assert not path.exists()


def test_saving_a_48mb_recording_never_holds_it_again(tmp_path: Path, huge_url: str) -> None:
    path = tmp_path / "huge.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        assert _stream(huge_url) == SIZE
        tracemalloc.start()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert path.stat().st_size < 4096  # the body in a file beside it (cassettes.bodyfiles)
    assert [body.stat().st_size for body in (tmp_path / "bodies").iterdir()] == [SIZE]
    assert peak < SIZE / 20, f"peak {peak / 2**20:.0f} MB saving {SIZE / 2**20:.0f} MB"
    (interaction,) = fileformat.loads(path.read_text(encoding="utf-8"), path)
    assert interaction.response.content == CHUNK * (SIZE // len(CHUNK))
