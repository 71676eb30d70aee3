"""``promptvcr show`` on sessions recorded through the real clients: a realtime session (the
OpenAI SDK's ``client.realtime``) and a websocket echo as messages in order with their
direction, deltas joined, audio and binary by size, the usage of ``response.done``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from realtime_server import AUDIO_OUT, RealtimeServer

from promptvcr import use_cassette
from promptvcr.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interceptors"))
from test_websockets_frames import converse
from test_websockets_realtime import AUDIO_IN, _openai, talk


def test_a_realtime_session_shows_as_a_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / "realtime.yaml"
    with RealtimeServer() as server, use_cassette(path, record_mode="rewrite"):
        talk(_openai(server.url))
        converse(server.url)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert "websocket session | status 101 | 16 messages (4 sent, 10 received) | tokens 12 in, 7 out" in lines
    assert any(line.startswith("← session.created:") for line in lines)  # sent as the update goes out
    order = [
        "→ session.update:",
        '→ input_audio_buffer.append: {"audio": "<binary 3,200 bytes>"}',
        "← response.output_audio_transcript.delta x3: I heard 3200 bytes.",
        "← response.output_audio.delta:",
        "← response.done: status completed; usage input 12, output 7",
        "→ close 1000",
    ]
    found = [next(i for i, line in enumerate(lines) if line.startswith(start)) for start in order]
    assert found == sorted(found)  # in the order they were sent
    assert '"delta": "<binary 1,024 bytes>"' in lines[found[3]]
    assert AUDIO_OUT not in out and AUDIO_IN not in out  # no base64 audio printed
    echo = lines[lines.index(next(line for line in lines if line.endswith("/echo?room=1"))) :]
    assert echo[2:10] == [
        "→ hello",
        "← hello",
        '→ ping: {"n": 1}',
        '← ping: {"n": 1}',
        "→ binary 2,048 bytes",
        "← binary 2,048 bytes",
        "→ bye",
        "← close 1000 done",
    ]
