"""MCP sessions with the real ``mcp`` SDK, client and server library: streamable HTTP (the
POST per message, the GET stream, the ``Mcp-Session-Id`` the server invents, the DELETE at
the end) and the older SSE transport (answers on the GET stream, ``202`` to each POST),
recorded on loopback and replayed with the server stopped."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, ClientSession
from mcp.client.sse import sse_client
from mcp_server import McpServer

from promptvcr import CassetteMiss, use_cassette


async def streamable_session(url: str, b: int = 3, mode: Any = "legacy") -> dict[str, Any]:
    """initialize, tools/list, tools/call, and a notification that arrives on the GET stream."""
    notifications: list[str] = []

    async def on_message(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            notifications.append(method)

    async with Client(url, mode=mode, message_handler=on_message) as client:
        tools = await client.list_tools()
        added = await client.call_tool("add", {"a": 2, "b": b})
        announced = await client.call_tool("announce", {})
        for _ in range(250 if mode == "legacy" else 0):  # the GET stream is read by a task of its own
            if notifications:
                break
            await asyncio.sleep(0.02)
    return {
        "tools": sorted(tool.name for tool in tools.tools),
        "added": added.content[0].text,  # type: ignore[union-attr]
        "announced": announced.content[0].text,  # type: ignore[union-attr]
        "notifications": notifications,
    }


async def sse_session(url: str) -> dict[str, Any]:
    async with sse_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("add", {"a": 20, "b": 22})
    return {"tools": sorted(tool.name for tool in tools.tools), "added": added.content[0].text}  # type: ignore[union-attr]


async def test_a_streamable_http_session_replays_with_the_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(streamable_session(url), 30)
    assert live == {
        "tools": ["add", "announce"],
        "added": "5",
        "announced": "announced",
        "notifications": ["notifications/tools/list_changed"],
    }

    async with use_cassette(path) as cassette:
        replayed = await asyncio.wait_for(streamable_session(url), 30)
    assert replayed == live
    outcomes = {(play.request.method, play.outcome) for play in cassette.played}
    assert outcomes == {("POST", "replayed"), ("GET", "replayed"), ("DELETE", "replayed")}
    assert cassette.all_played


async def test_the_current_protocol_without_a_session_replays_too(tmp_path: Path) -> None:
    """``mode="auto"``: ``server/discover`` first; no session id, no GET stream."""
    path = tmp_path / "mcp_auto.yaml"
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(streamable_session(url, mode="auto"), 30)
    assert (live["added"], live["announced"]) == ("5", "announced")
    async with use_cassette(path) as cassette:
        assert await asyncio.wait_for(streamable_session(url, mode="auto"), 30) == live
    assert {play.outcome for play in cassette.played} == {"replayed"}
    assert cassette.all_played


async def test_the_stored_session_keeps_the_session_id_and_the_messages(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    with McpServer() as server:
        async with use_cassette(path, record_mode="rewrite"):
            await asyncio.wait_for(streamable_session(server.url), 30)
    interactions = yaml.safe_load(path.read_text())["interactions"]
    methods = [
        i["request"].get("json", {}).get("method") for i in interactions if i["request"]["method"] == "POST"
    ]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert {"tools/list", "tools/call"} <= set(methods)
    session_ids = {i["response"].get("headers", {}).get("mcp-session-id") for i in interactions}
    assert len(session_ids - {None}) == 1  # the id the server invented, which the client sends back
    (get,) = [i for i in interactions if i["request"]["method"] == "GET"]
    # A long-lived stream: closed by the client, or ended by the server at the DELETE.
    assert get["response"].get("end", "complete") in ("closed", "complete")
    assert "notifications/tools/list_changed" in str(get["response"]["events"])


async def test_a_changed_tool_call_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            await asyncio.wait_for(streamable_session(url), 30)
    with pytest.raises(BaseException) as caught:  # the SDK's task group wraps it
        async with use_cassette(path):
            await asyncio.wait_for(streamable_session(url, b=4), 30)
    assert "params.arguments.b: 3 -> 4" in str(_miss(caught.value))


def _miss(error: BaseException) -> CassetteMiss:
    if isinstance(error, CassetteMiss):
        return error
    for inner in [*getattr(error, "exceptions", ()), error.__cause__, error.__context__]:
        if inner is not None and (found := _miss(inner)) is not None:
            return found
    raise AssertionError(f"no CassetteMiss in {error!r}")


async def test_an_sse_transport_session_replays_with_the_server_stopped(tmp_path: Path) -> None:
    path = tmp_path / "mcp_sse.yaml"
    with McpServer(transport="sse") as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(sse_session(url), 30)
    assert live == {"tools": ["add", "announce"], "added": "42"}
    interactions = yaml.safe_load(path.read_text())["interactions"]
    assert {i["response"]["status"] for i in interactions if i["request"]["method"] == "POST"} == {202}

    for timing in ("none", "recorded"):  # answers wait on the GET stream for their request
        async with use_cassette(path, timing=timing) as cassette:
            assert await asyncio.wait_for(sse_session(url), 30) == live
        assert cassette.all_played


def test_the_sse_transport_session_id_is_not_part_of_the_key() -> None:
    from promptvcr.cassettes.models import Request
    from promptvcr.matching.key import request_key
    from promptvcr.matching.rules import default_rules

    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    keys = {
        request_key(
            Request("POST", f"http://127.0.0.1:8000/messages/?session_id={sid}", {}, body), default_rules()
        )
        for sid in ("7dcaf4d4b0c24452", "0a1b2c3d4e5f6071")
    }
    assert len(keys) == 1
    other = Request("POST", "http://127.0.0.1:8000/search?session_id=1", {}, b'{"q": "x"}')
    assert request_key(other, default_rules()) != request_key(
        Request("POST", "http://127.0.0.1:8000/search?session_id=2", {}, b'{"q": "x"}'), default_rules()
    )
