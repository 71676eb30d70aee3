"""A websocket session that ends in any way but the usual replays as it ended live: the same
close code and reason on both sides, no frame the live client never received, never a hang.
Each case is recorded from tests/realtime_server.py and replayed with the server stopped,
through the real websockets clients (threads and asyncio)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from realtime_server import RealtimeServer
from websockets.asyncio.client import connect as async_connect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from promptvcr import use_cassette

CASES = ["close", "nostatus", "violation", "reserved", "rsv1", "abrupt", "going"]


def _closed(error: ConnectionClosed) -> tuple[Any, ...]:
    def close(frame: Any) -> Any:
        return None if frame is None else (frame.code, frame.reason)

    return ("closed", type(error).__name__, close(error.rcvd), close(error.sent))


def session(url: str, how: str) -> list[Any]:
    """Everything the client sees: messages, how the connection ended, a send after it."""
    seen: list[Any] = []
    with connect(f"{url}/cut?how={how}", close_timeout=3) as ws:
        ws.send("go")
        try:
            while True:
                seen.append(ws.recv(timeout=5))
        except ConnectionClosed as closed:
            seen.append(_closed(closed))
        except TimeoutError:
            seen.append("hang: nothing came in 5 s")
        try:
            ws.send("more")
            seen.append("sent after the end")
        except ConnectionClosed as closed:
            seen.append(("send refused", *_closed(closed)))
        seen.append((ws.close_code, ws.close_reason))
    return seen


async def session_async(url: str, how: str) -> list[Any]:
    seen: list[Any] = []
    async with async_connect(f"{url}/cut?how={how}", close_timeout=3) as ws:
        await ws.send("go")
        try:
            while True:
                seen.append(await asyncio.wait_for(ws.recv(), 5))
        except ConnectionClosed as closed:
            seen.append(_closed(closed))
        except TimeoutError:
            seen.append("hang: nothing came in 5 s")
        seen.append((ws.close_code, ws.close_reason))
    return seen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict[str, list[Any]]]:
    folder = tmp_path_factory.mktemp("cut")
    live: dict[str, list[Any]] = {}
    with RealtimeServer() as server:
        url = server.url
        for how in CASES:
            with use_cassette(folder / f"{how}.yaml", record_mode="rewrite"):
                live[how] = session(url, how)
            with use_cassette(folder / f"{how}_async.yaml", record_mode="rewrite"):
                live[f"{how}_async"] = asyncio.run(session_async(url, how))
    return url, folder, live


@pytest.mark.parametrize("how", CASES)
def test_a_session_ended_any_way_replays_as_it_ended_live(
    recorded: tuple[str, Path, dict[str, list[Any]]], how: str
) -> None:
    url, folder, live = recorded
    assert not any("hang" in str(item) for item in live[how])  # the live client saw an end
    with use_cassette(folder / f"{how}.yaml"):
        assert session(url, how) == live[how]


@pytest.mark.parametrize("how", CASES)
def test_the_asyncio_client_sees_the_same_end(
    recorded: tuple[str, Path, dict[str, list[Any]]], how: str
) -> None:
    url, folder, live = recorded
    with use_cassette(folder / f"{how}_async.yaml"):
        assert asyncio.run(session_async(url, how)) == live[f"{how}_async"]


def test_the_live_ends_differ_as_the_cases_say(recorded: tuple[str, Path, dict[str, list[Any]]]) -> None:
    _, _, live = recorded
    assert live["close"][-1] == (1011, "internal error")
    assert live["nostatus"][-1] == (1005, "")
    assert live["violation"][-1][0] == 1006 and live["violation"][2][3][0] == 1007  # the client failed it
    assert live["abrupt"][-1] == (1006, "")
    for illegal in ("reserved", "rsv1"):  # the client failed it: a protocol error (issue 54)
        assert live[illegal][2][3][0] == 1002, live[illegal]
    assert live["going"][:1] == [("closed", "ConnectionClosedOK", (1001, "going away"), (1001, "going away"))]
