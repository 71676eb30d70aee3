"""A large request through ``promptvcr serve`` (issue 54): spooled as it arrives, keyed and
stored as its document with a stand-in for each long string, sent upstream as received.

Before, the server read the body whole and held it several times over while it keyed,
relayed and stored it (a 300 MB request peaked 2.1 GB above idle; ``bench_serve.py --only
request-memory``). The real openai SDK sends a picture as a base64 data URL, the common way a
request gets that large, to a provider on 127.0.0.1; the answers are compared with the live
ones, through the server and in-process, both ways, with the provider stopped.
"""

from __future__ import annotations

import base64
import http.client
import json
import random
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

import openai
import pytest
import yaml
from tests.fake_provider import FakeProvider
from tests.loopback import process_memory, serving

from promptvcr import use_cassette
from promptvcr.cassettes.largebody import LARGE_BODY_BYTES
from promptvcr.cassettes.largejson import STAND_IN
from promptvcr.cli import main
from promptvcr.server import serve

MIB = 1024 * 1024
#: Shaped like a key: planted in a stored long string, ``promptvcr scan`` must find it.
PLANTED = "sk-proj-" + "P" * 24 + "plantedkey" + "p" * 24
#: A picture as the SDK sends it: about 6 MB of base64 in one string (letters and digits only:
#: no chance path or name of this machine in it, which the recording would replace).
_RANDOM = base64.b64encode(random.Random(54).randbytes(4_500_000)).decode()
PICTURE = "data:image/png;base64," + _RANDOM.translate(str.maketrans("+/", "AB"))
#: A log pasted into the prompt, long enough to stand in, naming this machine's home folder:
#: stored with ``<home>`` (promptvcr.identity), and matched on replay as the recording holds it.
LOG = f"Traceback in {Path.home()}/project/app.py, line 12\n" * 2_000


def _messages(picture: str) -> list[dict[str, object]]:
    parts = [
        {"type": "text", "text": "What is in this picture? The log:"},
        {"type": "text", "text": LOG},
        {"type": "image_url", "image_url": {"url": picture}},
    ]
    return [{"role": "user", "content": parts}]


def _ask(base_url: str, picture: str = PICTURE) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o", messages=_messages(picture))  # type: ignore[arg-type]
    return answer.choices[0].message.content or ""


def test_a_large_request_recorded_through_serve_replays_through_it_and_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served, in_process = tmp_path / "served.yaml", tmp_path / "in_process.yaml"
    with FakeProvider() as fake:
        with serve(served, record_mode="record", upstreams={"openai": fake.base_url}) as server:
            live = _ask(f"{server.url}/openai/v1")
        sent = fake.requests[-1]  # the provider got the body as the SDK sent it, not the document
        assert len(sent.body) > LARGE_BODY_BYTES
        assert sent.json()["messages"] == _messages(PICTURE)
        with use_cassette(in_process, record_mode="record"):
            live_in_process = _ask(fake.openai_base_url)
        upstream = fake.base_url

    for path in (served, in_process):  # the cassette holds the document; the picture is beside it
        text = path.read_text(encoding="utf-8")
        assert len(text) < 256 * 1024 and PICTURE[:200] not in text  # the answer echoes the log
        content = yaml.safe_load(text)["interactions"][0]["request"]["json"]["messages"][0]["content"]
        log, picture = content[1:]
        found = STAND_IN.fullmatch(picture["image_url"]["url"])
        assert found is not None and int(found.group(1)) == len(PICTURE)
        picture_file = tmp_path / "bodies" / f"sha256-{found.group(2)}"
        assert picture_file.read_bytes() == PICTURE.encode()
        found = STAND_IN.fullmatch(log["text"])
        assert found is not None
        stored_log = (tmp_path / "bodies" / f"sha256-{found.group(2)}").read_text(encoding="utf-8")
        assert stored_log == LOG.replace(str(Path.home()), "<home>")
    assert len(list((tmp_path / "bodies").iterdir())) == 2  # one picture, one log: a file each

    # the provider is gone: each cassette replays through the server and in-process
    for path, answer in ((served, live), (in_process, live_in_process)):
        with serve(path, record_mode="replay", upstreams={"openai": upstream}) as server:
            assert _ask(f"{server.url}/openai/v1") == answer
            with pytest.raises(openai.APIStatusError) as missed:  # another picture: a miss, not a match
                _ask(f"{server.url}/openai/v1", PICTURE[:-8] + "AAAAAAAA")
            assert "promptvcr" in str(missed.value)
        with use_cassette(path, record_mode="replay"):
            assert _ask(f"{upstream}/v1") == answer

    # scan reads the long strings beside the cassettes: a key planted in the picture is found
    assert main(["scan", str(tmp_path)]) == 0
    with picture_file.open("r+b") as file:
        file.seek(len(PICTURE) // 2)
        file.write(PLANTED.encode())
    assert main(["scan", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "messages[0].content[2]" in out and PLANTED not in out


class _Sink(BaseHTTPRequestHandler):
    """Reads the request a megabyte at a time and answers a small JSON."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        left = int(self.headers.get("content-length", 0))
        while left:
            left -= len(self.rfile.read(min(left, MIB)))
        body = b'{"id": "x", "choices": [{"message": {"role": "assistant", "content": "ok"}}]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def sink() -> Iterator[str]:
    with serving(_Sink) as url:
        yield url


def _post(url: str, body: bytes) -> int:
    connection = http.client.HTTPConnection(urlsplit(url).netloc, timeout=120)
    connection.request("POST", "/openai/v1/chat/completions", body, {"content-type": "application/json"})
    status = connection.getresponse().status
    connection.close()
    return status


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM from /proc (Linux)")
def test_serve_holds_a_fraction_of_a_large_request_recording_and_replaying_it(
    tmp_path: Path, sink: str
) -> None:
    prompt = "word " * (40 * MIB // 5)  # one long user message: a book pasted into a prompt
    body = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": prompt}]}).encode()
    del prompt
    warm = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "warm"}]}).encode()
    path = tmp_path / "large.yaml"
    for mode in ("record", "replay"):
        with serve(path, record_mode=mode, upstreams={"openai": sink}) as server:
            assert _post(server.url, warm) == 200  # what the first request loads is idle memory
            idle = process_memory(server.process.pid)["VmRSS"]
            assert _post(server.url, body) == 200
            grown = process_memory(server.process.pid)["VmHWM"] - idle
        assert grown < len(body) / 2, (
            f"{mode}: serve grew {grown / MIB:.0f} MB for a {len(body) / MIB:.0f} MB request"
        )
    assert server.report["cassettes"][0]["outcomes"] == {"replayed": 2}
