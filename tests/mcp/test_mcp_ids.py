"""JSON-RPC ids are not part of an MCP call's key: a call inserted or dropped before the
others shifts every later id, and the later calls still replay, their answers carrying the
live ids (the ``mcp`` client matches answers to requests by id: a recorded id would never
reach the call waiting for it). A miss inside the SDK's task group reaches the test as itself."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession
from mcp.client.sse import sse_client
from mcp_server import McpServer

from promptvcr import CassetteMiss, use_cassette


async def calls(url: str, listings: int, b: int = 3, adds: int = 1) -> dict[str, Any]:
    async with Client(url, mode="legacy") as client:
        tools = [sorted(t.name for t in (await client.list_tools()).tools) for _ in range(listings)]
        for _ in range(adds):
            added = await client.call_tool("add", {"a": 2, "b": b})
    return {"tools": tools, "added": added.content[0].text}  # type: ignore[union-attr]


async def sse_calls(url: str, listings: int, b: int = 3) -> dict[str, Any]:
    """The same over the older SSE transport: each POST gets ``202``, the answers come on the
    GET stream."""
    async with sse_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = [sorted(t.name for t in (await session.list_tools()).tools) for _ in range(listings)]
        added = await session.call_tool("add", {"a": 2, "b": b})
    return {"tools": tools, "added": added.content[0].text}  # type: ignore[union-attr]


async def _record(path: Path, listings: int) -> tuple[str, dict[str, Any]]:
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(calls(url, listings), 30)
    return url, live


async def test_a_call_dropped_before_the_others_shifts_their_ids_and_they_still_replay(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.yaml"
    url, live = await _record(path, listings=2)  # tools/call recorded as the 4th request
    async with use_cassette(path) as cassette:
        replayed = await asyncio.wait_for(calls(url, listings=1), 10)  # now sent as the 3rd
    assert replayed == {"tools": live["tools"][:1], "added": live["added"]}
    assert {play.outcome for play in cassette.played} == {"replayed"}
    assert len(cassette.unplayed) == 1  # the second tools/list


async def test_a_call_inserted_before_the_others_replays_them_with_the_live_ids(tmp_path: Path) -> None:
    """The inserted calls are ``tools/list``: a read, which a live server answers again the
    same way, so it replays its last recorded answer again (no ``allow_playback_repeats``).
    A ``tools/call`` asked more times than recorded still misses: a tool may act."""
    path = tmp_path / "mcp.yaml"
    url, live = await _record(path, listings=1)
    async with use_cassette(path) as cassette:
        replayed = await asyncio.wait_for(calls(url, listings=3), 10)
    assert replayed == {"tools": live["tools"] * 3, "added": live["added"]}
    assert {play.outcome for play in cassette.played} == {"replayed"}
    assert cassette.all_played

    with pytest.raises(CassetteMiss, match="tools/call"):
        async with use_cassette(path):
            await asyncio.wait_for(calls(url, listings=1, adds=2), 10)


async def test_a_changed_call_inside_the_sdks_task_group_raises_the_miss_itself(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    url, _ = await _record(path, listings=1)
    with pytest.raises(CassetteMiss) as caught:
        async with use_cassette(path):
            await asyncio.wait_for(calls(url, listings=1, b=4), 10)
    assert "params.arguments.b: 3 -> 4" in str(caught.value)


def test_the_key_ignores_the_id_and_progress_token_but_not_method_or_params() -> None:
    from promptvcr.cassettes.models import Request
    from promptvcr.matching.key import request_key
    from promptvcr.matching.rules import default_rules

    def key(body: str) -> str:
        return request_key(Request("POST", "http://127.0.0.1/mcp", {}, body.encode()), default_rules())

    call = (
        '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"add","_meta":{"progressToken":%s}}}'
    )
    assert key(call % (1, 1)) == key(call % (7, 7)) == key(call % ('"a"', '"a"'))
    assert key(call % (1, 1)) != key(call.replace('"add"', '"sub"') % (1, 1))
    assert key('{"jsonrpc":"2.0","id":1,"method":"ping"}') != key('{"jsonrpc":"2.0","method":"ping"}')
    assert key('{"id":1,"q":"x"}') != key('{"id":2,"q":"x"}')  # not JSON-RPC: its id means something
    old_transport = "http://127.0.0.1/messages/?session_id=%s"  # answers on the GET stream
    sse = [
        Request("POST", old_transport % sid, {}, (call % (n, n)).encode())
        for n, sid in ((1, "7d"), (2, "0a"))
    ]
    assert request_key(sse[0], default_rules()) == request_key(sse[1], default_rules())


def test_a_read_asked_again_replays_its_last_answer_and_nothing_else_does() -> None:
    from promptvcr.cassettes.models import Interaction, Request, Response
    from promptvcr.matching.key import request_key
    from promptvcr.matching.tape import Tape

    def message(method: str, id_: int, **params: Any) -> Request:
        body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        return Request(
            "POST", "http://127.0.0.1/mcp", {"content-type": "application/json"}, json.dumps(body).encode()
        )

    def answer(n: int) -> Response:
        return Response(
            200, {"content-type": "application/json"}, [b'{"jsonrpc":"2.0","id":%d,"result":{}}' % n]
        )

    recorded = [
        message("tools/list", 1),
        message("tools/list", 2),  # the list changed in between: a live server now lists the second
        message("resources/read", 3, uri="file:///a"),
        message("tools/call", 4, name="add"),
        message("initialize", 0),
    ]
    tape = Tape([Interaction(r, answer(n)) for n, r in enumerate(recorded)])
    asked = [("tools/list", {}), ("resources/read", {"uri": "file:///a"}), ("tools/call", {"name": "add"})]
    key = {
        method: request_key(message(method, 9, **params)) for method, params in [*asked, ("initialize", {})]
    }
    assert [tape.play(key["tools/list"]) for _ in range(4)] == [tape.interactions[i] for i in (0, 1, 1, 1)]
    assert [tape.play(key["resources/read"]) for _ in range(2)] == [tape.interactions[2]] * 2
    assert [tape.play(key["tools/call"]) for _ in range(2)] == [tape.interactions[3], None]  # a tool may act
    assert [tape.play(key["initialize"]) for _ in range(2)] == [tape.interactions[4], None]  # a new session
    other = Request(
        "POST", "http://127.0.0.1/rpc", {}, b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'
    )
    tape = Tape([Interaction(other, answer(1))])
    assert [tape.play(request_key(other)) for _ in range(2)] == [
        tape.interactions[0],
        None,
    ]  # not an MCP read


async def test_over_the_sse_transport_a_call_inserted_or_dropped_before_the_others_replays(
    tmp_path: Path,
) -> None:
    """The SSE transport's answers come on the GET stream, released once the request they were
    recorded for is answered, and given the live id there: ids are not in its keys either."""
    path = tmp_path / "mcp_sse.yaml"
    with McpServer(transport="sse") as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(sse_calls(url, listings=2), 30)  # tools/call: id 3
    assert live == {"tools": [["add", "announce"]] * 2, "added": "5"}
    async with use_cassette(path) as cassette:  # dropped: tools/call now id 2
        assert await asyncio.wait_for(sse_calls(url, listings=1), 10) == {**live, "tools": live["tools"][:1]}
    assert len(cassette.unplayed) == 1  # the second tools/list
    async with use_cassette(path) as cassette:  # inserted: tools/call now id 5, two answers given again
        assert await asyncio.wait_for(sse_calls(url, listings=4), 10) == {**live, "tools": live["tools"] * 2}
    assert {play.outcome for play in cassette.played} == {"replayed"}
    assert cassette.all_played


async def test_two_sse_sessions_in_one_cassette_never_release_each_others_answers(tmp_path: Path) -> None:
    """Both number their calls from 0: each GET stream counts only the messages posted to its
    own session (the ``session_id`` of its ``endpoint`` event)."""
    path = tmp_path / "mcp_sse.yaml"
    with McpServer(transport="sse") as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = [await asyncio.wait_for(sse_calls(url, listings=1, b=b), 30) for b in (3, 4)]
    assert [session["added"] for session in live] == ["5", "6"]
    async with use_cassette(path) as cassette:
        assert [await asyncio.wait_for(sse_calls(url, listings=1, b=b), 10) for b in (3, 4)] == live
    assert cassette.all_played


async def test_show_prints_mcp_over_http_as_calls_and_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptvcr.cli import main

    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / "mcp.yaml"
    await _record(path, listings=1)
    assert main(["show", str(path)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert "→ tools/list" in lines and "← tools/list result: add, announce" in lines
    call = lines.index('→ tools/call add {"a": 2, "b": 3}')
    assert lines[call + 1] == "← tools/call result: 5"
    assert lines[call - 1].startswith("MCP over HTTP | status 200")
    assert not any('"jsonrpc"' in line for line in lines)
