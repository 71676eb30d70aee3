"""JSON-RPC ids are not part of an MCP call's key: a call inserted or dropped before the
others shifts every later id, and the later calls still replay, their answers carrying the
live ids (the ``mcp`` client matches answers to requests by id: a recorded id would never
reach the call waiting for it). A miss inside the SDK's task group reaches the test as itself."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_server import McpServer

from promptvcr import CassetteMiss, use_cassette


async def calls(url: str, listings: int, b: int = 3) -> dict[str, Any]:
    async with Client(url, mode="legacy") as client:
        tools = [sorted(t.name for t in (await client.list_tools()).tools) for _ in range(listings)]
        added = await client.call_tool("add", {"a": 2, "b": b})
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
    path = tmp_path / "mcp.yaml"
    url, live = await _record(path, listings=1)
    async with use_cassette(path, allow_playback_repeats=True) as cassette:
        replayed = await asyncio.wait_for(calls(url, listings=3), 10)
    assert replayed == {"tools": live["tools"] * 3, "added": live["added"]}
    assert {play.outcome for play in cassette.played} == {"replayed"}


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
    old_transport = "http://127.0.0.1/messages/?session_id=7dcaf4d4"  # answers on the GET stream, by id
    sse = [Request("POST", old_transport, {}, (call % (n, n)).encode()) for n in (1, 2)]
    assert request_key(sse[0], default_rules()) != request_key(sse[1], default_rules())


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
