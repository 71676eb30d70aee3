"""A body past the spool threshold, recorded by the real httpx2 client from a real server.

The recording holds a few megabytes at most: the rest of the body waits in a private
temporary file (``promptvcr.cassettes.spool``) that nothing names on disk, and that is gone
once the response holding it is. The credential searches and masking read the body a slice
at a time: a key cut in two by the slicing is still found and masked, never written (issue 48).
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import stat
import tempfile
import threading
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest
from heap import objects_so_far_frozen

import promptvcr
from promptvcr.cassettes.eventstream import encode_frame
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES
from promptvcr.cassettes.models import Response
from promptvcr.cassettes.spool import SpooledChunks
from promptvcr.cassettes.sse import parse_event_pieces, parse_events
from promptvcr.cassettes.tokens import Tokens, tokens_of
from promptvcr.files.redaction import SecretMaskedWarning
from promptvcr.policies import budget

MIB = 1024 * 1024
#: Sent by the request as its credential, and echoed back by the server inside the body.
SENT_KEY = "sk-proj-" + "S" * 24 + "sentkey" + "s" * 24
#: Shaped like a key, sent by nobody: found by its shape.
SHAPED_KEY = "sk-proj-" + "H" * 24 + "shapedk" + "h" * 24


def _body(size: int, keys: dict[int, str]) -> bytes:
    """An event stream of ``size`` bytes with each key written at its byte offset."""
    body = bytearray()
    index = 0
    while len(body) < size:
        body += b'data: {"index": %d, "text": "%s"}\n\n' % (
            index,
            b"abcdefgh"[index % 8 : index % 8 + 1] * 900,
        )
        index += 1
    for offset, key in keys.items():  # a word of its own, as a key stands in a text
        body[offset - 1 : offset + len(key) + 1] = f" {key} ".encode()
    return bytes(body)


class _Server(BaseHTTPRequestHandler):
    """Serves ``self.server.body`` as an event stream, in 64 KiB writes; ``cut`` stops halfway
    with the length of the whole announced (the client sees the connection drop)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body: bytes = self.server.body  # type: ignore[attr-defined]
        cut: bool = self.server.cut  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        end = len(body) // 2 if cut else len(body)
        for start in range(0, end, 65536):
            self.wfile.write(body[start : min(start + 65536, end)])
        if cut:
            self.close_connection = True


@pytest.fixture(scope="module", autouse=True)
def _worker_objects_frozen() -> Iterator[None]:
    """A test here collects so that an abandoned spool is freed: the worker's own objects are
    kept out of that collection (tests/heap.py)."""
    with objects_so_far_frozen():
        yield


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    httpd.cut = False  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1/chat/completions"


def _post(url: str) -> httpx2.Response:
    with httpx2.Client() as client:
        return client.post(
            url, json={"model": "m", "stream": True}, headers={"authorization": f"Bearer {SENT_KEY}"}
        )


def _spool_files(folder: Path) -> list[tuple[str, int]]:
    """(link, mode) of each file this process holds open in ``folder``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
            if link.startswith(str(folder)):
                found.append((link, stat.S_IMODE(os.stat(f"/proc/self/fd/{fd}").st_mode)))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return found


_LINUX = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists open files in /proc (Linux)")


def _spools_named(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if "spool" in path.name]


@pytest.fixture
def spool_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "system-temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_keys_straddling_the_slices_of_a_large_body_never_reach_the_cassette(
    tmp_path: Path, server: ThreadingHTTPServer
) -> None:
    # Cut by the megabyte slices the searches and the masking read, and by a 64 KiB write.
    keys = {MIB - 20: SENT_KEY, 3 * MIB - 33: SHAPED_KEY, 5 * 65536 - 9: SHAPED_KEY}
    body = _body(LARGE_BODY_BYTES + 2 * MIB, keys)
    assert len(body) > LARGE_BODY_BYTES
    server.body = body  # type: ignore[attr-defined]
    path = tmp_path / "large.yaml"
    with pytest.warns(SecretMaskedWarning), promptvcr.use_cassette(path, record_mode="record") as cassette:
        assert _post(_url(server)).content == body  # the application got every byte as sent
        assert isinstance(cassette.played[0].response.chunks, SpooledChunks)
    text = path.read_text(encoding="utf-8")
    assert "sentkey" not in text and "shapedk" not in text
    masked = body.replace(SENT_KEY.encode(), b"<redacted:sent-credential>")
    masked = masked.replace(SHAPED_KEY.encode(), b"<redacted:openai-key>")
    with promptvcr.use_cassette(path, record_mode="replay"):
        assert _post(_url(server)).content == masked  # everything else kept, byte for byte


@_LINUX
def test_a_large_stream_replays_byte_for_byte_and_its_spool_leaves_nothing(
    tmp_path: Path, server: ThreadingHTTPServer, spool_folder: Path
) -> None:
    body = _body(LARGE_BODY_BYTES + MIB, {}).replace(b"\n\n", b"\r\n\r\n", 7)  # line ends kept as sent
    server.body = body  # type: ignore[attr-defined]
    path = tmp_path / "large.yaml"
    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        assert _post(_url(server)).content == body
        held = _spool_files(spool_folder)
    assert [mode for _, mode in held] == [0o600] and held[0][0].endswith("(deleted)")
    assert _spools_named(spool_folder) == []  # never a name on disk
    stored = cassette.played[0].response
    assert isinstance(stored.chunks, SpooledChunks) and stored.content == body
    del cassette, stored
    gc.collect()
    assert _spool_files(spool_folder) == []  # closed with the last response holding it
    with promptvcr.use_cassette(path, record_mode="replay"):
        assert _post(_url(server)).content == body


def _read_past(response: httpx2.Response, size: int) -> Iterator[bytes]:
    """Read more than ``size`` bytes of ``response``; the reader, to read on (or not)."""
    reader = response.iter_raw()
    received = 0
    while received <= size:
        received += len(next(reader))
    return reader


def _closed_early_cut_and_abandoned(path: Path, server: ThreadingHTTPServer, spool_folder: Path) -> list[str]:
    """Record a stream the application lets go of mid-way, one the server drops halfway, and one
    still open when the cassette exits; how each ended. Every object of the recordings is local
    here: gone on return."""
    with contextlib.ExitStack() as left_open, promptvcr.use_cassette(path, record_mode="record") as cassette:
        client = left_open.enter_context(httpx2.Client())
        with client.stream("POST", _url(server), json={"n": 1}) as response:
            _read_past(response, LARGE_BODY_BYTES * 2)  # closed here: ``end: closed``
        server.cut = True  # type: ignore[attr-defined]
        with pytest.raises(httpx2.RemoteProtocolError):
            client.post(_url(server), json={"n": 2})
        server.cut = False  # type: ignore[attr-defined]
        abandoned = left_open.enter_context(client.stream("POST", _url(server), json={"n": 3}))
        reader = _read_past(abandoned, LARGE_BODY_BYTES * 2)  # neither read to its end nor closed
        # the cassette exits first: the open one is recorded as far as it arrived, ``end: closed``
    del reader
    responses = [play.response for play in cassette.played if play.response]
    assert all(isinstance(response.chunks, SpooledChunks) for response in responses)
    assert len(_spool_files(spool_folder)) == 3  # each body in its own file while it is held
    return [response.end for response in responses]


@_LINUX
def test_a_recording_closed_early_cut_or_abandoned_leaves_no_spool(
    tmp_path: Path, server: ThreadingHTTPServer, spool_folder: Path
) -> None:
    server.body = _body(LARGE_BODY_BYTES * 3, {})  # type: ignore[attr-defined]
    path = tmp_path / "cut.yaml"
    assert _closed_early_cut_and_abandoned(path, server, spool_folder) == ["closed", "disconnect", "closed"]
    gc.collect()
    assert _spool_files(spool_folder) == [] and _spools_named(spool_folder) == []
    # each beside the cassette (cassettes.bodyfiles); two cut at the same byte are one file
    named = re.findall(r"path: (bodies/sha256-[0-9a-f]{64})", path.read_text())
    assert len(named) == 3 and {tmp_path / name for name in named} == set((tmp_path / "bodies").iterdir())
    assert sum((tmp_path / name).stat().st_size for name in named) > LARGE_BODY_BYTES * 5  # 2x, 2x, 1.5x 4 MB


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_events_read_in_pieces_are_the_events_of_the_whole(size: int) -> None:
    text = 'data: {"usage": 1}\r\n\r\n: comment\r\rdata: x\n\ndata: {"usage": 2}\r\nevent: e\n\n\ndata: usage'
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    assert list(parse_event_pieces(pieces, "usage")) == [e for e in parse_events(text) if "usage" in str(e)]


def test_the_usage_a_spooled_stream_reports_is_counted(
    tmp_path: Path, server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = b'data: {"choices": [], "usage": {"prompt_tokens": 1234, "completion_tokens": 5678}}\r\n\r\n'
    server.body = _body(LARGE_BODY_BYTES + MIB, {}) + usage + b"data: [DONE]\n\n"  # type: ignore[attr-defined]
    monkeypatch.setenv(budget.ENV_MAX_RECORD_TOKENS, "1000000")  # tokens are counted for a budget
    budget.reset()
    try:
        with promptvcr.use_cassette(tmp_path / "usage.yaml", record_mode="record") as cassette:
            _post(_url(server))
        assert isinstance(cassette.played[0].response.chunks, SpooledChunks)
        after = budget.spent()
    finally:
        budget.reset()
    assert (after.input, after.output) == (1234, 5678)


def test_a_spooled_bedrock_stream_is_counted_frame_by_frame() -> None:
    delta = {
        "headers": {":event-type": "contentBlockDelta", ":message-type": "event"},
        "json": {"delta": "x" * 900},
    }
    usage = {"inputTokens": 321, "outputTokens": 654}
    last = {"headers": {":event-type": "metadata", ":message-type": "event"}, "json": {"usage": usage}}
    frames = [encode_frame(delta)] * (LARGE_BODY_BYTES // 900 + 10) + [encode_frame(last)]
    headers = {"content-type": "application/vnd.amazon.eventstream"}
    spooled = Response(200, headers, SpooledChunks(frames))
    tracemalloc.start()
    try:
        counted = tokens_of(spooled)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counted == tokens_of(Response(200, headers, frames)) == Tokens(321, 654)
    assert peak < LARGE_BODY_BYTES / 4, f"counting held {peak / MIB:.1f} MB"  # never the body joined
