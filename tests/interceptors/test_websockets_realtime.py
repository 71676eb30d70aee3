"""Realtime websocket sessions with the real SDKs: the OpenAI Realtime API (threads and
asyncio) and the Gemini Live API, recorded against a loopback websockets server, then
replayed with the server stopped; a changed client frame is a miss; timing and faults."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import sys
import time
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest
import yaml
from google import genai
from realtime_server import AUDIO_OUT, RealtimeServer
from websockets.exceptions import ConnectionClosedError

from promptvcr import CassetteMiss, use_cassette
from promptvcr.faults import cut_stream

#: 100 ms of 16-bit audio the code sends.
AUDIO_IN = base64.b64encode(bytes(range(256)) * 12 + b"\x00" * 128).decode()


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", websocket_base_url=f"{url}/v1")


def _async_openai(url: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="sk-test", base_url="http://127.0.0.1:9/v1", websocket_base_url=f"{url}/v1"
    )


def talk(client: openai.OpenAI, instructions: str = "Be brief.") -> dict[str, Any]:
    """A voice turn: configure, send audio (a fresh event_id each run), ask for a response."""
    seen: dict[str, Any] = {"types": [], "transcript": "", "audio": b""}
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={"type": "realtime", "instructions": instructions})
        conn.input_audio_buffer.append(audio=AUDIO_IN, event_id=f"evt_{uuid.uuid4().hex}")
        conn.input_audio_buffer.commit()
        conn.response.create()
        for event in conn:
            seen["types"].append(event.type)
            if event.type == "response.output_audio_transcript.delta":
                seen["transcript"] += event.delta
            elif event.type == "response.output_audio.delta":
                seen["audio"] += base64.b64decode(event.delta)
            elif event.type == "response.done":
                break
    return seen


async def talk_async(client: openai.AsyncOpenAI) -> dict[str, Any]:
    seen: dict[str, Any] = {"types": [], "transcript": "", "audio": b""}
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await conn.session.update(session={"type": "realtime", "instructions": "Be brief."})
        await conn.input_audio_buffer.append(audio=AUDIO_IN, event_id=f"evt_{uuid.uuid4().hex}")
        await conn.input_audio_buffer.commit()
        await conn.response.create()
        async for event in conn:
            seen["types"].append(event.type)
            if event.type == "response.output_audio_transcript.delta":
                seen["transcript"] += event.delta
            elif event.type == "response.output_audio.delta":
                seen["audio"] += base64.b64decode(event.delta)
            elif event.type == "response.done":
                break
    return seen


EXPECTED_TYPES = [
    "session.created",
    "session.updated",
    "input_audio_buffer.committed",
    "response.created",
    *["response.output_audio_transcript.delta"] * 3,
    "response.output_audio.delta",
    "response.output_audio.done",
    "response.done",
]


def _record(path: Path, run: Any) -> tuple[Any, str]:
    with RealtimeServer() as server:
        with use_cassette(path, record_mode="rewrite") as cassette:
            live = run(server.url)
        assert [play.outcome for play in cassette.played] == ["recorded"]
        return live, server.url


def test_openai_realtime_sync_records_then_replays_with_the_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "realtime.yaml"
    live, url = _record(path, lambda url: talk(_openai(url)))
    assert live["types"] == EXPECTED_TYPES
    assert live["transcript"] == f"I heard {len(base64.b64decode(AUDIO_IN))} bytes."
    assert live["audio"] == base64.b64decode(AUDIO_OUT)

    with use_cassette(path) as cassette:  # the server is gone: only the cassette answers
        replayed = talk(_openai(url))
    assert replayed == live
    assert [play.outcome for play in cassette.played] == ["replayed"]
    assert cassette.all_played


def test_the_stored_session_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "realtime.yaml"
    _record(path, lambda url: talk(_openai(url)))
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    assert interaction["request"]["method"] == "GET"
    assert interaction["request"]["url"].endswith("/v1/realtime?model=gpt-realtime")
    assert "authorization" not in interaction["request"].get("headers", {})
    assert "sk-test" not in path.read_text()
    response = interaction["response"]
    assert response["status"] == 101
    frames = response["websocket"]["frames"]
    sent = [f["json"]["type"] for f in frames if f["from"] == "client" and "json" in f]
    assert sent == [
        "session.update",
        "input_audio_buffer.append",
        "input_audio_buffer.commit",
        "response.create",
    ]
    received = [f["json"]["type"] for f in frames if f["from"] == "server" and "json" in f]
    assert received == EXPECTED_TYPES
    assert [f["close"]["code"] for f in frames if "close" in f] == [1000, 1000]
    (append,) = [f for f in frames if f.get("json", {}).get("type") == "input_audio_buffer.append"]
    assert append["json"]["audio"] == AUDIO_IN  # the bytes, base64, as sent
    assert append["digests"] == {"audio": "sha256:" + hashlib.sha256(base64.b64decode(AUDIO_IN)).hexdigest()}
    assert "event_id" in append["json"]  # stored as sent; ignored when matching
    schema = json.loads((resources.files("promptvcr") / "cassettes" / "cassette.schema.json").read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text()))) == []
    times = [f["at"] for f in frames]
    assert times == sorted(times)


async def test_openai_realtime_async_records_then_replays_with_the_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "realtime_async.yaml"
    with RealtimeServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await talk_async(_async_openai(url))
    assert live["types"] == EXPECTED_TYPES

    async with use_cassette(path) as cassette:
        replayed = await talk_async(_async_openai(url))
    assert replayed == live
    assert [play.outcome for play in cassette.played] == ["replayed"]


def test_a_changed_client_frame_is_a_miss_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "realtime.yaml"
    _, url = _record(path, lambda url: talk(_openai(url)))

    with pytest.raises(CassetteMiss) as caught, use_cassette(path) as cassette:
        talk(_openai(url), instructions="Be verbose.")
    message = str(caught.value)
    assert "client frame 1 is not the recorded one" in message
    assert 'session.instructions: "Be brief." -> "Be verbose."' in message
    assert "event_id" not in message  # a volatile field, by rule
    assert len(cassette.missed) == 1


def test_a_swallowed_frame_miss_fails_the_block_as_it_exits(tmp_path: Path) -> None:
    path = tmp_path / "realtime.yaml"
    _, url = _record(path, lambda url: talk(_openai(url)))
    with pytest.raises(CassetteMiss), use_cassette(path), contextlib.suppress(CassetteMiss):
        talk(_openai(url), instructions="Something else.")  # the miss is swallowed by the code


def _peer_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the replaying peer (``promptvcr.interceptors.wspeer``) asks ``time.sleep``
    for, as they happen; they are still slept. Counted, not timed: a loaded host makes a
    replay slow, never makes it wait for a recorded gap."""
    waits: list[float] = []
    sleep = time.sleep

    def counting(seconds: float) -> None:
        if sys._getframe(1).f_globals.get("__name__") == "promptvcr.interceptors.wspeer":
            waits.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", counting)
    return waits


def test_recorded_timing_paces_the_server_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "realtime.yaml"
    _, url = _record(path, lambda url: talk(_openai(url)))
    data = yaml.safe_load(path.read_text())
    frames = data["interactions"][0]["response"]["websocket"]["frames"]
    # Stretch the recorded answer: response.done 1.2 s after response.create.
    create = next(i for i, f in enumerate(frames) if f.get("json", {}).get("type") == "response.create")
    for frame in frames[create + 1 :]:
        frame["at"] = frames[create]["at"] + 1.2
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    waits = _peer_sleeps(monkeypatch)

    with use_cassette(path):
        fast = talk(_openai(url))
    assert waits == []  # unpaced: the peer never waits, however slow the host
    started = time.perf_counter()
    with use_cassette(path, timing="recorded"):
        paced = talk(_openai(url))
    assert waits and time.perf_counter() - started >= 1.18  # the gap, waited for
    assert paced == fast


def test_a_fault_closes_the_socket_after_frame_k(tmp_path: Path) -> None:
    path = tmp_path / "realtime.yaml"
    _, url = _record(path, lambda url: talk(_openai(url)))
    # The server sent session.created, session.updated, committed, response.created, then deltas.
    with use_cassette(path, faults=[cut_stream(after_events=5, path="/v1/realtime")]) as cassette:
        seen: list[str] = []
        with (
            pytest.raises(ConnectionClosedError),
            _openai(url).realtime.connect(model="gpt-realtime") as conn,
        ):
            conn.session.update(session={"type": "realtime", "instructions": "Be brief."})
            conn.input_audio_buffer.append(audio=AUDIO_IN)
            conn.input_audio_buffer.commit()
            conn.response.create()
            for event in conn:
                seen.append(event.type)
    assert seen == EXPECTED_TYPES[:5]
    assert len(cassette.faults_fired) == 1


async def _gemini_live(server: RealtimeServer, question: str) -> str:
    # The SDK turns the base URL into wss:// and passes its TLS context to websockets.
    http_options: Any = {
        "base_url": f"https://127.0.0.1:{server.port}",
        "async_client_args": {"ssl": server.client_ssl},
    }
    client = genai.Client(api_key="test-key", http_options=http_options)
    answer = ""
    config: Any = {"response_modalities": ["TEXT"]}
    async with client.aio.live.connect(model="gemini-live-2.5-flash", config=config) as session:
        await session.send_client_content(turns={"role": "user", "parts": [{"text": question}]})
        async for message in session.receive():
            if message.text:
                answer += message.text
    return answer


async def test_gemini_live_records_then_replays_with_the_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "live.yaml"
    with RealtimeServer(tls=True) as server:
        async with use_cassette(path, record_mode="rewrite"):
            live = await _gemini_live(server, "ping")
        assert "BidiGenerateContent" in server.paths[0]
    assert live == "Live answer to ping"
    assert "test-key" not in path.read_text()  # the key travels in the query string
    frames = yaml.safe_load(path.read_text())["interactions"][0]["response"]["websocket"]["frames"]
    assert any(f.get("binary") is True and "setupComplete" in f["json"] for f in frames)

    async with use_cassette(path) as cassette:
        replayed = await _gemini_live(server, "ping")
    assert replayed == live
    assert [play.outcome for play in cassette.played] == ["replayed"]

    with pytest.raises(CassetteMiss, match="turns"):
        async with use_cassette(path):
            await asyncio.wait_for(_gemini_live(server, "pong"), 10)
