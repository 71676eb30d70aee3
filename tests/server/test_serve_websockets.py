"""Realtime websocket sessions through ``promptvcr serve``: the openai SDK's realtime client in
this process, its base URL pointed at the server, recorded from a loopback realtime server,
then replayed with that server stopped; a changed message is a miss the report counts."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import openai
import pytest
import websockets
from realtime_server import RealtimeServer
from websockets.exceptions import ConnectionClosed

from promptvcr.server import serve

AUDIO = "AAAA" * 64


def _talk(base_url: str, instructions: str = "Be brief.") -> list[str]:
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    seen: list[str] = []
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={"type": "realtime", "instructions": instructions})
        conn.input_audio_buffer.append(audio=AUDIO, event_id=f"evt_{uuid.uuid4().hex}")
        conn.input_audio_buffer.commit()
        conn.response.create()
        for event in conn:
            seen.append(event.type + (f":{event.delta}" if event.type.endswith("transcript.delta") else ""))
            if event.type == "response.done":
                break
    return seen


def test_openai_realtime_through_serve_records_then_replays_without_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "realtime.yaml"
    with RealtimeServer() as live:
        upstream = live.url.replace("ws://", "http://")
        with serve(cassette, record_mode="record", upstreams={"rt": upstream}) as server:
            recorded = _talk(f"{server.url}/rt/v1")
    assert recorded[0] == "session.created" and recorded[-1] == "response.done"
    assert "response.output_audio_transcript.delta:I heard " in recorded
    assert server.report["cassettes"][0]["outcomes"] == {"recorded": 1}
    assert "from: client" in cassette.read_text() and "rt=" + upstream in cassette.read_text()

    with serve(cassette, record_mode="replay") as server:  # the upstream remembered, the server gone
        replayed = _talk(f"{server.url}/rt/v1")
    assert replayed == recorded
    entry = server.report["cassettes"][0]
    assert entry["outcomes"] == {"replayed": 1} and entry["missed"] == []
    assert server.process.returncode == 0


def test_a_changed_message_is_a_miss_that_fails_the_run(tmp_path: Path) -> None:
    cassette = tmp_path / "changed.yaml"
    with RealtimeServer() as live:
        upstream = live.url.replace("ws://", "http://")
        with serve(cassette, record_mode="record", upstreams={"rt": upstream}) as server:
            _talk(f"{server.url}/rt/v1")
    with serve(cassette, record_mode="replay", options=["--allow-playback-repeats"]) as server:
        with pytest.raises(Exception) as raised:
            _talk(f"{server.url}/rt/v1", instructions="Be long.")
        closed = _closed(f"{server.url.replace('http://', 'ws://')}/rt/v1/realtime?model=gpt-realtime")
    assert "1008" in str(raised.value) or isinstance(raised.value, ConnectionClosed), raised.value
    assert closed[0] == 1008 and "not the recorded one" in closed[1]
    entry = server.report["cassettes"][0]
    assert len(entry["missed"]) == 2 and "instructions" in entry["misses"][0]["message"]
    assert server.process.returncode == 1


def _closed(url: str) -> tuple[int, str]:
    """A plain websockets client sending a message the recording does not hold: the close it gets."""

    async def main() -> tuple[int, str]:
        async with websockets.connect(url, open_timeout=10) as ws:
            await ws.send('{"type": "response.cancel"}')  # not the recorded first client message
            try:
                while True:
                    await ws.recv()  # what the recording sent before its first client frame, if any
            except ConnectionClosed as closed:
                assert closed.rcvd is not None
                return closed.rcvd.code, closed.rcvd.reason
        return 0, ""

    return asyncio.run(asyncio.wait_for(main(), 20))


def test_a_session_recorded_through_serve_spends_from_the_run_s_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``promptvcr serve`` started by a run counts in the run's ledger: the session as a request,
    its ``response.done`` tokens as they pass; the next session is refused before it is sent."""
    from promptvcr.policies import budget

    ledger = budget.start_run()
    monkeypatch.setenv(budget.ENV_BUDGET_DIR, str(ledger.folder))
    monkeypatch.setenv(budget.ENV_MAX_RECORD_TOKENS, "10")
    try:
        with RealtimeServer() as live:
            upstream = live.url.replace("ws://", "http://")
            with serve(tmp_path / "budget.yaml", record_mode="record", upstreams={"rt": upstream}) as server:
                assert _talk(f"{server.url}/rt/v1")[-1] == "response.done"
                with pytest.raises(Exception):  # noqa: B017  (refused: the SDK's own handshake error)
                    _talk(f"{server.url}/rt/v1")
            assert len(live.paths) == 1
        spent = ledger.read()
    finally:
        ledger.remove()
    assert (spent.requests, spent.input, spent.output, spent.refused) == (1, 12, 7, 1)


@pytest.mark.parametrize("how", ["reserved", "rsv1", "violation"])
def test_a_session_with_an_illegal_frame_replays_through_serve_as_it_ended_live(
    tmp_path: Path, how: str
) -> None:
    """Issue 54, scenario 8: the upstream sends a frame of a reserved opcode, one with RSV1 and
    no extension, or text that is not UTF-8. Through serve, the client sees the end serve gave
    it live; replayed with the upstream gone, the same end, never a hang. In-process, the same
    cases replay the client's own protocol failure (tests/interceptors/test_websockets_cut.py);
    a cassette recorded there replays through serve too."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interceptors"))
    from test_websockets_cut import session

    from promptvcr import use_cassette

    cassette = tmp_path / f"{how}.yaml"
    with RealtimeServer() as live:
        upstream = live.url.replace("ws://", "http://")
        with serve(cassette, record_mode="record", upstreams={"rt": upstream}) as server:
            recorded = session(f"{server.url.replace('http://', 'ws://')}/rt", how)
        in_process = tmp_path / f"{how}-in-process.yaml"
        with use_cassette(in_process, record_mode="rewrite"):
            live_in_process = session(live.url, how)
    assert not any("hang" in str(item) for item in recorded)
    with serve(cassette, record_mode="replay") as server:
        replayed = session(f"{server.url.replace('http://', 'ws://')}/rt", how)
    assert replayed == recorded
    with serve(in_process, record_mode="replay", options=["--upstream", f"rt={upstream}"]) as server:
        through_serve = session(f"{server.url.replace('http://', 'ws://')}/rt", how)
    assert not any("hang" in str(item) for item in through_serve)
    assert through_serve[:2] == live_in_process[:2]  # the two messages, then the end
