"""Replay gives the client the bytes it saw live: each case is read live, while recording and
on replay through the real SDKs (openai, anthropic), and all three must be the same, bytes
and what the SDK made of them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import openai_features
import pytest
import yaml
from network_guard import no_network
from scripted_server import Script, scripted

import promptvcr

OFFLINE = "http://127.0.0.1:9"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _chunk(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    payload = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode()


def _three_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, script: Script, read: Callable[[str], Any]
) -> tuple[Any, Any, Any, dict[str, Any]]:
    path = tmp_path / f"{name}.yaml"
    with scripted() as server:
        url = server.add(name, script)
        live = read(url)
        with promptvcr.use_cassette(path, record_mode="record"):
            recorded = read(url)
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as cassette:
        replayed = read(f"{OFFLINE}/{name}")
    assert attempts == [] and {p.outcome for p in cassette.played} == {"replayed"}
    stored = yaml.safe_load(path.read_text())["interactions"][-1]["response"]
    return live, recorded, replayed, stored


def _openai_stream(base: str) -> tuple[str, bytes]:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    text = "".join(
        c.choices[0].delta.content or "" for c in client.chat.completions.create(**CHAT, stream=True)
    )
    with client.chat.completions.with_streaming_response.create(**CHAT, stream=True) as response:
        raw = b"".join(response.iter_bytes())
    return text, raw


@pytest.mark.parametrize(
    ("name", "body", "text"),
    [
        # The server ends with an event and no blank line after it: the SDK drops it, live and replayed.
        ("unterminated", _chunk("a") + b"\n\n" + _chunk("b"), "a"),
        ("comment", b":408: 408 Request Timeout\n\n" + _chunk("a") + b"\n\ndata: [DONE]\n\n", "a"),
        ("crlf", _chunk("a") + b"\r\n\r\n" + _chunk("b") + b"\r\n\r\ndata: [DONE]\r\n\r\n", "ab"),
        (
            "spaced",
            b"data: " + json.dumps(json.loads(_chunk("a")[6:])).encode() + b"\n\ndata:[DONE]\n\n",
            "a",
        ),
    ],
)
def test_sse_edge_cases_replay_the_bytes_seen_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: bytes, text: str
) -> None:
    script = Script("text/event-stream", [(0.0, body)])
    live, recorded, replayed, stored = _three_ways(tmp_path, monkeypatch, name, script, _openai_stream)
    assert live == recorded == replayed == (text, body)
    assert not any("raw" in event for event in stored["events"])  # each written back by its style


ANTHROPIC_EVENTS = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message",'
    b'"role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":1,"output_tokens":1}}     }\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"thinking","thinking":"","signature":""}          }\n\n'
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0   }\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn",'
    b'"stop_sequence":null},"usage":{"output_tokens":2}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _anthropic_stream(base: str) -> tuple[list[str], bytes]:
    client = anthropic.Anthropic(api_key="sk-test", base_url=base, max_retries=0)
    request = {"model": "claude", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    types = [event.type for event in client.messages.create(**request, stream=True)]
    with client.messages.with_streaming_response.create(**request, stream=True) as response:
        raw = b"".join(response.iter_bytes())
    return types, raw


def test_anthropic_padding_and_spaced_ping_replay_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = Script("text/event-stream", [(0.0, ANTHROPIC_EVENTS)])
    live, recorded, replayed, stored = _three_ways(
        tmp_path, monkeypatch, "anthropic", script, _anthropic_stream
    )
    assert live == recorded == replayed and live[1] == ANTHROPIC_EVENTS
    assert stored["events"][1]["data"]["content_block"]["signature"] == ""  # still parsed for review
    assert stored["events"][1]["style"] == {"pad": "          "}
    assert stored["events"][2]["style"] == {"separators": [", ", ": "]}


def _openai_raw(base: str) -> tuple[bytes, str, str]:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    response = client.chat.completions.with_raw_response.create(**CHAT)
    return response.http_response.content, response.headers["content-length"], response.parse().id


def test_duplicate_json_keys_replay_as_received(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        b'{"id":"first","object":"chat.completion","id":"second","created":1,"model":"m",'
        b'"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}'
    )
    script = Script("application/json", [(0.0, body)], length=True)
    live, recorded, replayed, stored = _three_ways(tmp_path, monkeypatch, "dup", script, _openai_raw)
    assert live == recorded == replayed == (body, str(len(body)), "second")
    assert stored["json"]["id"] == "second" and stored["raw"] == body.decode()


def test_a_reviewer_edit_of_a_json_value_replays_edited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b'{"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": []}'
    script = Script("application/json", [(0.0, body)], length=True)
    live, _, replayed, stored = _three_ways(tmp_path, monkeypatch, "edit", script, _openai_raw)
    assert live == replayed and stored["style"] == {"separators": [", ", ": "]}
    path = tmp_path / "edit.yaml"
    path.write_text(path.read_text().replace("id: c1", "id: edited"))
    with no_network(monkeypatch), promptvcr.use_cassette(path):
        content, length, answer_id = _openai_raw(f"{OFFLINE}/edit")
    assert (
        answer_id == "edited"
        and content == body.replace(b'"c1"', b'"edited"')
        and length == str(len(content))
    )


def _plain(base: str) -> tuple[str, bytes, str]:
    client = openai.OpenAI(api_key="sk-test", base_url=base, max_retries=0)
    response = client.get("/plain", cast_to=openai_features.http_library().Response)
    return response.text, response.content, response.headers["content-length"]


def test_a_text_plain_body_keeps_its_whitespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = Script("text/plain", [(0.0, b"[1, 2,   3]")], length=True)
    live, recorded, replayed, stored = _three_ways(tmp_path, monkeypatch, "plain", script, _plain)
    assert live == recorded == replayed and live[1] == b"[1, 2,   3]"
    assert stored["text"] == "[1, 2,   3]"
