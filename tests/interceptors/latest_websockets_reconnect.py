"""websockets 17's threaded ``reconnect`` (``for ws in reconnect(uri): ...``), used directly as
a realtime client may: each connection it opens, every retry included, is recorded and
replayed like one of ``connect``'s, against the loopback realtime server, replayed with the
server stopped.

Not collected by the suite's own run (its websockets may predate ``reconnect``):
``test_websockets_latest.py`` runs it in a venv with the newest websockets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from realtime_server import RealtimeServer
from websockets.exceptions import ConnectionClosedError
from websockets.sync.client import reconnect

from promptvcr import use_cassette


def _fatal(error: Exception) -> Exception:
    """Every error ends the loop: a connection that reached no server fails the test at once
    instead of retrying for ever."""
    return error


def realtime_turn(url: str) -> list[str]:
    """A text turn of the OpenAI Realtime API's events, on the first connection of the loop."""
    types: list[str] = []
    uri = f"{url}/v1/realtime?model=gpt-realtime"
    headers = {"Authorization": "Bearer sk-test"}
    for ws in reconnect(uri, additional_headers=headers, process_exception=_fatal, open_timeout=5):
        ws.send(
            json.dumps({"type": "session.update", "session": {"type": "realtime", "instructions": "Hi."}})
        )
        ws.send(json.dumps({"type": "response.create"}))
        for message in ws:
            types.append(json.loads(message)["type"])
            if types[-1] == "response.done":
                break
        break
    return types


def cut_twice(url: str) -> list[Any]:
    """Two connections of one loop, each cut by the server (1011) after two frames: the loop
    connects again after the first, as it would after a dropped connection."""
    seen: list[Any] = []
    for ws in reconnect(f"{url}/cut?how=close", process_exception=_fatal, open_timeout=5):
        ws.send("go")
        try:
            for message in ws:
                seen.append(message)
        except ConnectionClosedError as closed:
            seen.append(("closed", closed.rcvd.code if closed.rcvd else None))
        if len(seen) >= 6:
            break
    return seen


def _record(path: Path, run: Any) -> tuple[Any, str]:
    with RealtimeServer() as server:
        with use_cassette(path, record_mode="rewrite") as cassette:
            live = run(server.url)
        assert {play.outcome for play in cassette.played} == {"recorded"}
        return live, server.url


def test_a_realtime_turn_through_reconnect_records_and_replays_with_the_server_stopped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "reconnect.yaml"
    live, url = _record(path, realtime_turn)
    assert live[0] == "session.created" and live[-1] == "response.done"
    with use_cassette(path) as cassette:
        assert realtime_turn(url) == live
    assert [play.outcome for play in cassette.played] == ["replayed"]
    assert cassette.all_played


def test_each_connection_of_the_loop_is_recorded_and_replayed_in_order(tmp_path: Path) -> None:
    path = tmp_path / "reconnect_cut.yaml"
    live, url = _record(path, cut_twice)
    assert live == ["partial 1", live[1], ("closed", 1011)] * 2
    with use_cassette(path) as cassette:
        assert cut_twice(url) == live
    assert [play.outcome for play in cassette.played] == ["replayed", "replayed"]
    assert cassette.all_played
