"""Identity in one process: what the marker restores, values a user adds, and turning it off.

The machine is the environment (HOME, USER, PROMPTVCR_HOSTNAME, PROMPTVCR_PROJECT_ROOT), read
when a cassette is entered; the real openai client talks to FakeProvider on 127.0.0.1, which
echoes the last user message.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from fake_provider import FakeProvider
from machines import ask, be

import promptvcr


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_only_the_placeholders_promptvcr_wrote_are_restored(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    cassette = tmp_path / "c.yaml"
    home = be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with promptvcr.use_cassette(cassette, record_mode="record"):
            ask(fake, f"read {home}/notes", stream=stream)  # written <home>: Bob's home at replay
            ask(fake, "is <home> a word? ask alicewonder", stream=stream)  # the prompt's own <home>
        with promptvcr.use_cassette(tmp_path / "both.yaml", record_mode="record"):
            ask(fake, f"is <home> in {home}/notes?", stream=stream)  # both: the home is kept here
    assert [w for w in caught if issubclass(w.category, promptvcr.MachineIdentityWarning)]
    text = cassette.read_text()
    assert "alicewonder" not in text and "<home>/notes" in text and "is <home> a word" in text
    assert f"is <home> in {home}/notes" in (tmp_path / "both.yaml").read_text()  # kept: never replayed wrong

    bob = be(monkeypatch, tmp_path / "b", "bobbuilder", "bob-desktop")
    with promptvcr.use_cassette(cassette, record_mode="replay"):
        assert ask(fake, f"read {bob}/notes", stream=stream).endswith(f"read {bob}/notes")
        assert ask(fake, "is <home> a word? ask bobbuilder", stream=stream).endswith(
            "is <home> a word? ask bobbuilder"
        )
    with (
        pytest.raises(promptvcr.CassetteMiss),
        promptvcr.use_cassette(tmp_path / "both.yaml", record_mode="replay"),
    ):
        ask(fake, f"is <home> in {bob}/notes?", stream=stream)  # recorded with Alice's home as it was


def test_values_a_user_adds_replay_as_the_replaying_run_gives_them(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "c.yaml"
    be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    with promptvcr.use_cassette(cassette, record_mode="record", identity={"email": "alice@example.com"}):
        ask(fake, "mail alice@example.com the report")
    assert "alice@example.com" not in cassette.read_text() and "<email>" in cassette.read_text()
    be(monkeypatch, tmp_path / "b", "bobbuilder", "bob-desktop")
    with promptvcr.use_cassette(cassette, identity={"email": "bob@example.org"}):
        assert ask(fake, "mail bob@example.org the report").endswith("mail bob@example.org the report")


def test_identity_off_keeps_the_values_and_such_a_cassette_still_replays_here(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "c.yaml"
    home = be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    with promptvcr.use_cassette(cassette, record_mode="record", identity=False):  # or recorded before
        ask(fake, f"{home}/notes for alicewonder")
    text = cassette.read_text()
    assert f"{home}/notes for alicewonder" in text and "identity:" not in text
    with promptvcr.use_cassette(cassette, record_mode="record"):  # one more, with placeholders
        ask(fake, f"{home}/todo for alicewonder")
    assert "<home>/todo for <user>" in cassette.read_text()
    with promptvcr.use_cassette(cassette) as replayed:  # both, on the machine that recorded them
        assert ask(fake, f"{home}/notes for alicewonder").endswith(f"{home}/notes for alicewonder")
        assert ask(fake, f"{home}/todo for alicewonder").endswith(f"{home}/todo for alicewonder")
    assert [play.outcome for play in replayed.played] == ["replayed", "replayed"]


def test_a_bad_extra_name_says_what_to_use() -> None:
    with pytest.raises(ValueError, match="cannot name a value to replace"):
        promptvcr.use_cassette("x.yaml", identity={"home": "/somewhere"})
    with pytest.raises(TypeError, match="expected True"):
        promptvcr.use_cassette("x.yaml", identity=3)  # type: ignore[arg-type]


def test_a_websocket_session_replays_with_this_machines_values_on_both_sides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from realtime_server import RealtimeServer
    from websockets.sync.client import connect

    def session(url: str, home: Path) -> str:
        with connect(f"{url}/echo?room=58") as ws:  # the server sends back what the client sent
            ws.send(
                json.dumps({"type": "session.update", "session": {"instructions": f"work in {home}/app"}})
            )
            echoed = str(ws.recv())
            ws.send("bye")
        return str(json.loads(echoed)["session"]["instructions"])

    cassette = tmp_path / "ws.yaml"
    alice = be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    with RealtimeServer() as server:
        url = server.url
        with promptvcr.use_cassette(cassette, record_mode="record"):
            assert session(url, alice) == f"work in {alice}/app"
    assert str(alice) not in cassette.read_text() and "work in <project>" in cassette.read_text()
    bob = be(monkeypatch, tmp_path / "b", "bobbuilder", "bob-desktop")
    with promptvcr.use_cassette(cassette):  # the server is gone: Bob's frames match, his path comes back
        assert session(url, bob) == f"work in {bob}/app"


def test_the_per_value_report_says_what_each_placeholder_stood_for(
    fake: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = be(monkeypatch, tmp_path / "a", "alicewonder", "alice-laptop")
    options = promptvcr.IdentityOptions(extra={"org": "org-4f2a9c"}, report=True)
    cassette = promptvcr.use_cassette(tmp_path / "c.yaml", record_mode="record", identity=options)
    with pytest.warns(promptvcr.MachineIdentityWarning) as caught, cassette:
        ask(fake, f"{home}/notes of org-4f2a9c")
    said = str(caught[0].message)
    assert "<org> x2" in said and "<org> stands for 'org-4f2a9c'" in said
    assert f"<project> stands for '{home / 'app'}'" not in said  # only the ones it used
    assert f"<home> stands for '{home}'" in said


@pytest.mark.parametrize("size", [4_000, 5 * 1024 * 1024], ids=["inline", "body-file"])
def test_a_binary_answer_replays_as_the_provider_sent_it_whatever_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """A download (audio, a zip) is bytes, not the machine's text: where it happens to hold the
    recording machine's path or host name, it still replays, on another machine, byte for byte."""
    import hashlib
    import http.server
    import threading

    import httpx

    home = be(monkeypatch, tmp_path / "a", "alicewonder", "vm")
    noise = hashlib.shake_256(b"audio").digest(size)
    body = noise[:1000] + f"\x00{home}/app\x00/vm/\x00alicewonder\xff".encode() + noise[1000:]

    class Blob(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/octet-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blob)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/files/file-1/content"
    cassette = tmp_path / "c.yaml"
    try:
        with promptvcr.use_cassette(cassette, record_mode="record"):
            assert httpx.get(url).content == body
    finally:
        server.shutdown()
        server.server_close()
    be(monkeypatch, tmp_path / "b", "bobbuilder", "bob-desktop")
    with promptvcr.use_cassette(cassette, record_mode="replay") as replayed:
        assert httpx.get(url).content == body
    assert [play.outcome for play in replayed.played] == ["replayed"]
