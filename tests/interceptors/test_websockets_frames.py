"""The websockets library on its own (threads and asyncio): text, JSON and binary messages
stored as the schema says, the server's close replayed, record mode unbuffered, pass-through."""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from realtime_server import RealtimeServer
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosedOK
from websockets.sync.client import connect

from promptvcr import CassetteMiss, use_cassette

AUDIO = bytes(range(256)) * 8  # a binary message: not UTF-8, stored as base64 with its digest


def converse(url: str) -> list[Any]:
    """Each answer is needed before the next message goes: a recorder that held frames back
    would hang here."""
    got: list[Any] = []
    with connect(f"{url}/echo?room=1") as ws:
        for message in ("hello", json.dumps({"type": "ping", "n": 1}), AUDIO):
            ws.send(message)
            got.append(ws.recv())
        ws.send("bye")
        with pytest.raises(ConnectionClosedOK):
            ws.recv()
        got.append((ws.close_code, ws.close_reason))
    return got


async def converse_async(url: str) -> list[Any]:
    got: list[Any] = []
    async with async_connect(f"{url}/echo?room=2") as ws:
        for message in ("hello", json.dumps({"type": "ping", "n": 1}), AUDIO):
            await ws.send(message)
            got.append(await ws.recv())
        await ws.send("bye")
        with pytest.raises(ConnectionClosedOK):
            await ws.recv()
        got.append((ws.close_code, ws.close_reason))
    return got


def _schema_errors(path: Path) -> list[str]:
    text = (resources.files("promptvcr") / "cassettes" / "cassette.schema.json").read_text(encoding="utf-8")
    validator = jsonschema.Draft202012Validator(json.loads(text))
    return [error.message for error in validator.iter_errors(yaml.safe_load(path.read_text()))]


def test_sync_messages_of_every_kind_are_stored_readably_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "echo.yaml"
    with RealtimeServer() as server:
        url = server.url
        with use_cassette(path, record_mode="rewrite"):
            live = converse(url)
    assert live == ["hello", '{"type": "ping", "n": 1}', AUDIO, (1000, "done")]

    assert _schema_errors(path) == []
    frames = yaml.safe_load(path.read_text())["interactions"][0]["response"]["websocket"]["frames"]
    assert frames[0] == {"from": "client", "at": frames[0]["at"], "text": "hello"}
    assert frames[2]["json"] == {"type": "ping", "n": 1}
    assert frames[2]["style"] == {"separators": [", ", ": "]}
    audio = frames[4]
    assert audio["digest"] == "sha256:" + hashlib.sha256(AUDIO).hexdigest()
    assert frames[-1] == {"from": "server", "at": frames[-1]["at"], "close": {"code": 1000, "reason": "done"}}

    with use_cassette(path) as cassette:
        assert converse(url) == live
    assert cassette.all_played


async def test_async_messages_replay_the_same(tmp_path: Path) -> None:
    path = tmp_path / "echo.json"  # and the JSON cassette format
    with RealtimeServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await converse_async(url)
    assert live[-1] == (1000, "done")
    async with use_cassette(path):
        assert await converse_async(url) == live


@pytest.mark.parametrize("changed", [json.dumps({"type": "ping", "n": 2}), AUDIO[:-1] + b"\x00"])
def test_a_changed_message_is_a_miss_raised_by_send(tmp_path: Path, changed: str | bytes) -> None:
    path = tmp_path / "echo.yaml"
    with RealtimeServer() as server:
        url = server.url
        with use_cassette(path, record_mode="rewrite"):
            converse(url)
    with pytest.raises(CassetteMiss) as caught, use_cassette(path), connect(f"{url}/echo?room=1") as ws:
        ws.send("hello")
        assert ws.recv() == "hello"
        if isinstance(changed, bytes):
            ws.send(json.dumps({"type": "ping", "n": 1}))
            assert ws.recv() == '{"type": "ping", "n": 1}'
        ws.send(changed)
    if isinstance(changed, bytes):
        assert "client frame 3 is not the recorded one" in str(caught.value)
        assert "<2048 bytes, sha256:" in str(caught.value)  # a digest, never the bytes
    else:
        assert "client frame 2 is not the recorded one" in str(caught.value)
        assert "n: 1 -> 2" in str(caught.value)


def test_an_unknown_handshake_is_a_miss_and_passthrough_records_nothing(tmp_path: Path) -> None:
    path = tmp_path / "echo.yaml"
    with RealtimeServer() as server:
        url = server.url
        with use_cassette(path, record_mode="rewrite"):
            converse(url)
        with use_cassette(path, record_mode="passthrough") as cassette:
            assert converse(url)[0] == "hello"
        assert [play.outcome for play in cassette.played] == ["passthrough"]
    with pytest.raises(CassetteMiss), use_cassette(path):
        connect(f"{url}/echo?room=other")
