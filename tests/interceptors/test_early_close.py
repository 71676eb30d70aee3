"""Closing a stream early while recording returns at once, records what arrived, and replays
exactly as far as it was recorded; a stream the server cuts is recorded and replayed cut.
Real SDKs (openai sync, anthropic async) against a scripted loopback server."""

from __future__ import annotations

import asyncio
import json
import time
import warnings
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
import yaml
from misbehaving_server import misbehaving
from network_guard import no_network
from scripted_server import Script, scripted

import promptvcr
from promptvcr.cassettes.playback import StreamNotRecorded
from promptvcr.files import fileformat

OFFLINE = "http://127.0.0.1:9"
REST = 3.0  # seconds the slow stream waits after its first event


def _chunk(text: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": finish}
    payload = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"


SLOW = Script(
    "text/event-stream",
    [
        (0.0, _chunk("first")),
        (REST, _chunk(" second")),
        (0.0, _chunk("", "stop")),
        (0.0, b"data: [DONE]\n\n"),
    ],
)


def _first_then_close(base: str) -> tuple[str, float]:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    first = next(iter(stream)).choices[0].delta.content or ""
    started = time.perf_counter()
    stream.close()
    return first, time.perf_counter() - started


def _read_all(base: str) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream)


def test_closing_a_stream_early_while_recording_returns_at_once_and_replays_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "early.yaml"
    with scripted() as server:
        url = server.add("slow", SLOW)
        bare_first, bare = _first_then_close(url)
        with promptvcr.use_cassette(path, record_mode="record") as cassette:
            recorded_first, recording = _first_then_close(url)
    # Without promptvcr close() is immediate; recording it now is too (it waited the whole
    # stream, REST seconds, before). Generous for a loaded machine: 20x, or 0.5 s.
    assert recorded_first == bare_first == "first"
    assert recording < max(20 * bare, 0.5) < REST, (recording, bare)
    assert [p.outcome for p in cassette.played] == ["recorded"]
    stored = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert stored["end"] == "closed" and len(stored["events"]) == 1

    with no_network(monkeypatch) as attempts:
        with promptvcr.use_cassette(path):
            assert _first_then_close(OFFLINE + "/slow")[0] == "first"
        with pytest.raises(StreamNotRecorded) as raised, promptvcr.use_cassette(path):
            _read_all(OFFLINE + "/slow")
    assert attempts == []
    print(f"close() while recording: {recording:.4f} s; without promptvcr: {bare:.4f} s")
    message = str(raised.value)
    assert message.startswith("promptvcr:") and str(path) in message and "1 chunk(s)" in message


FOREVER_EVENTS = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n',
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"again "}}\n\n',
]


async def _two_deltas(base: str) -> tuple[list[str], float]:
    client = anthropic.AsyncAnthropic(api_key="sk-test", base_url=base, max_retries=0)
    stream = await client.messages.create(
        model="claude", max_tokens=10, messages=[{"role": "user", "content": "hi"}], stream=True
    )
    seen: list[str] = []
    async for event in stream:
        seen.append(event.type)
        if len(seen) == 4:
            break
    started = time.perf_counter()
    await stream.close()
    return seen, time.perf_counter() - started


def test_a_never_ending_stream_closed_early_is_recorded_and_the_connection_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "forever.yaml"
    script = Script(
        "text/event-stream", [(0.0, e) for e in FOREVER_EVENTS[:-1]] + [(0.05, FOREVER_EVENTS[-1])]
    )
    script.forever = True
    with scripted() as server:
        url = server.add("bare", script)
        bare_seen, bare = asyncio.run(_two_deltas(url))
        assert server.hung_up["bare"].wait(10)
        url = server.add("forever", script)
        with promptvcr.use_cassette(path, record_mode="record") as cassette:
            seen, recording = asyncio.run(_two_deltas(url))
        # The provider stops sending (and billing) as it does without promptvcr.
        assert server.hung_up["forever"].wait(10)
    assert (
        seen
        == bare_seen
        == ["message_start", "content_block_start", "content_block_delta", "content_block_delta"]
    )
    assert recording < max(20 * bare, 0.5), (recording, bare)
    (play,) = cassette.played
    assert play.response is not None and play.response.end == "closed"

    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path):
        assert asyncio.run(_two_deltas(OFFLINE + "/forever"))[0] == seen
    assert attempts == []


def _attempt(base: str) -> tuple[str, type[BaseException] | None]:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    text = ""
    try:
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        for chunk in stream:
            text += chunk.choices[0].delta.content or ""
    except Exception as error:
        return text, type(error)
    return text, None


def test_a_stream_cut_by_the_server_is_recorded_cut_and_replays_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cut.yaml"
    with misbehaving("cut", [_chunk("first"), _chunk(" second")]) as base:
        live = _attempt(base)
        with (
            warnings.catch_warnings(record=True) as warned,
            promptvcr.use_cassette(path, record_mode="record"),
        ):
            warnings.simplefilter("always")
            recorded = _attempt(base)
    assert live == recorded == ("first second", live[1]) and live[1] is not None
    assert not [w for w in warned if "promptvcr" in str(w.message)]  # recorded, so nothing unfinished
    stored: Any = yaml.safe_load(path.read_text())["interactions"][0]["response"]
    assert stored["end"] == "disconnect" and len(stored["events"]) == 2
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path):
        assert _attempt(OFFLINE) == live  # the same chunks, then the same error type
    assert attempts == []


def test_a_response_neither_read_nor_closed_is_recorded_as_far_as_it_arrived(tmp_path: Path) -> None:
    """Issue 42: it was paid for, so it is written (``end: closed``) rather than only reported."""
    import requests

    path = tmp_path / "open.yaml"
    with scripted() as server:
        url = server.add("open", SLOW)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            with promptvcr.use_cassette(path, record_mode="record") as cassette:
                response = requests.post(url + "/chat/completions", json={}, stream=True)  # urllib3
                assert response.status_code == 200
        response.close()
    assert [play.outcome for play in cassette.played] == ["recorded"]
    (written,) = fileformat.loads(path.read_text(), path)
    assert written.response.end == "closed"
