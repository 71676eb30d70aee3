"""Concurrent MCP calls (``asyncio.gather`` of ``call_tool``) replay in whatever order the code
writes them: recorded in one order, with the server answering in yet another (its ``add``
tool waits ``delay_ms``), and replayed with the calls written in the reverse order. Over stdio
(the server's script gone at replay) and over streamable HTTP (the server stopped)."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp_server import McpServer

import promptvcr
from promptvcr import CassetteMiss, use_cassette
from promptvcr.interceptors.stdiosession import STALL

SERVER = Path(__file__).resolve().parent.parent / "mcp_stdio_server.py"

#: name -> (tool, arguments): ``slow`` answers last, ``quick`` first while recording.
CALLS: dict[str, tuple[str, dict[str, int]]] = {
    "slow": ("add", {"a": 1, "b": 1, "delay_ms": 600}),
    "quick": ("add", {"a": 2, "b": 2}),
    "counted": ("count", {"n": 3}),
    "middle": ("add", {"a": 3, "b": 3, "delay_ms": 300}),
}
RECORDED_ORDER = ["slow", "quick", "counted", "middle"]
REPLAYED_ORDER = RECORDED_ORDER[::-1]

Call = Callable[[str, dict[str, int], Any], Awaitable[Any]]


async def _gathered(
    call: Call, order: list[str], changed: dict[str, int] | None = None, one_by_one: bool = False
) -> dict[str, Any]:
    """The calls of ``order``, started in that order (the SDK writes each as its task starts);
    ``one_by_one``: each awaited before the next is made."""
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    def arguments(name: str) -> dict[str, int]:
        return {**CALLS[name][1], **(changed or {})} if name == "quick" else CALLS[name][1]

    calls = [
        functools.partial(call, CALLS[name][0], arguments(name), on_progress if name == "counted" else None)
        for name in order
    ]
    results = [await c() for c in calls] if one_by_one else await asyncio.gather(*(c() for c in calls))
    texts = {name: result.content[0].text for name, result in zip(order, results, strict=True)}
    return {"results": texts, "progress": progress}


async def stdio_calls(
    script: Path,
    order: list[str],
    changed: dict[str, int] | None = None,
    wrapper: Path | None = None,
    one_by_one: bool = False,
    listings_after: int = 0,
) -> dict[str, Any]:
    """The calls to the server ``script`` started by ``stdio_client``, or (``wrapper``: a
    cassette) through ``promptvcr mcp --cassette wrapper -- <the server's command>``; then
    ``listings_after`` times ``tools/list`` (under ``listed``)."""
    command = [sys.executable, str(script)]
    if wrapper is not None:
        command = [sys.executable, "-m", "promptvcr", "mcp", "--cassette", str(wrapper), "--", *command]
    env = {"PYTHONPATH": str(Path(promptvcr.__file__).resolve().parent.parent)}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()

        def call(tool: str, arguments: dict[str, int], on_progress: Any) -> Awaitable[Any]:
            return client.call_tool(tool, arguments, progress_callback=on_progress)

        result = await _gathered(call, order, changed, one_by_one)
        for _ in range(listings_after):
            result.setdefault("listed", []).append(sorted(t.name for t in (await client.list_tools()).tools))
        return result


async def http_calls(url: str, order: list[str], list_first: bool = False) -> dict[str, Any]:
    async with Client(url, mode="legacy") as client:
        if list_first:
            await client.list_tools()

        def call(tool: str, arguments: dict[str, int], on_progress: Any) -> Awaitable[Any]:
            return client.call_tool(tool, arguments, progress_callback=on_progress)

        return await _gathered(call, order)


LIVE = {
    "results": {"slow": "2", "quick": "4", "counted": "counted to 3", "middle": "6"},
    "progress": [1, 2, 3],
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The calls recorded live in :data:`RECORDED_ORDER` (once: a server takes seconds to start),
    then the server's script moved away."""
    tmp_path = tmp_path_factory.mktemp("concurrent")
    script = tmp_path / "server.py"
    shutil.copy(SERVER, script)
    path = tmp_path / "stdio.yaml"

    async def record() -> dict[str, Any]:
        async with use_cassette(path, record_mode="rewrite"):
            return await asyncio.wait_for(stdio_calls(script, RECORDED_ORDER), 60)

    assert asyncio.run(record()) == LIVE
    script.rename(tmp_path / "moved-away.py")
    return path, script


def _calls_and_answers(path: Path) -> tuple[list[int], list[int]]:
    """The ids of the ``tools/call`` requests as the client wrote them, and of the answers as
    the server wrote them."""
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    messages = [(f["from"], f["json"]) for f in interaction["response"]["stdio"]["frames"] if "json" in f]
    calls = [m["id"] for sender, m in messages if sender == "client" and m.get("method") == "tools/call"]
    answers = [m["id"] for sender, m in messages if sender == "server" and m.get("id") in calls]
    return calls, answers


def test_concurrent_stdio_calls_replay_in_another_order_with_the_server_gone(
    recorded: tuple[Path, Path],
) -> None:
    path, script = recorded
    calls, answers = _calls_and_answers(path)
    assert answers != calls  # the server answered out of the order it was asked in
    assert answers[-1] == calls[0]  # ``slow``

    async def replay() -> tuple[dict[str, Any], Any]:
        async with use_cassette(path) as cassette:
            return await asyncio.wait_for(stdio_calls(script, REPLAYED_ORDER), 10), cassette

    replayed, cassette = asyncio.run(replay())
    assert replayed == LIVE  # each answer reached its own call, progress the call that asked for it
    assert [play.outcome for play in cassette.played] == ["replayed"]


def test_a_changed_call_among_concurrent_ones_still_misses_naming_the_field(
    recorded: tuple[Path, Path],
) -> None:
    path, script = recorded

    async def changed() -> None:
        async with use_cassette(path):
            await asyncio.wait_for(stdio_calls(script, REPLAYED_ORDER, changed={"b": 5}), 10)

    with pytest.raises(CassetteMiss) as caught:
        asyncio.run(changed())
    message = str(caught.value)
    assert "params.arguments.b: 2 -> 5" in message  # compared with the nearest call not yet answered
    assert "MCP stdio stdio:python server.py" in message


def test_the_wrapper_replays_concurrent_calls_in_another_order(recorded: tuple[Path, Path]) -> None:
    """``promptvcr mcp --``, as clients in other languages start it, plays the same file."""
    path, script = recorded
    replayed = asyncio.run(asyncio.wait_for(stdio_calls(script, REPLAYED_ORDER, wrapper=path), 30))
    assert replayed == LIVE


@pytest.mark.parametrize("through", ["stdio_client", "wrapper"])
def test_a_stdio_client_that_lists_its_tools_more_times_than_recorded_replays(
    recorded: tuple[Path, Path], through: str
) -> None:
    """``tools/list`` is a read: asked again, the replayed server answers it again the same
    way, with the live id, as a live server would (any other call asked again still misses)."""
    path, script = recorded
    wrapper = path if through == "wrapper" else None

    async def replay() -> dict[str, Any]:
        calls = stdio_calls(script, REPLAYED_ORDER, wrapper=wrapper, listings_after=2)
        if wrapper is not None:
            return await asyncio.wait_for(calls, 30)
        async with use_cassette(path):
            return await asyncio.wait_for(calls, 10)

    assert asyncio.run(replay()) == {**LIVE, "listed": [["add", "count"]] * 2}


@pytest.mark.parametrize("through", ["stdio_client", "wrapper"])
def test_calls_recorded_concurrently_replay_awaited_one_by_one(
    recorded: tuple[Path, Path], through: str
) -> None:
    """A changed program: each call now awaited before the next is made, in another order.
    The first call's answer is held behind answers whose calls do not come (the server gave
    them first); once the client has waited a second (``STALL``) it gets it anyway, and the
    others follow as their calls come. No hang, no miss: about a second slower."""
    path, script = recorded
    wrapper = path if through == "wrapper" else None

    async def replay() -> dict[str, Any]:
        calls = stdio_calls(script, REPLAYED_ORDER, wrapper=wrapper, one_by_one=True)
        if wrapper is not None:  # the wrapper's own cassette
            return await asyncio.wait_for(calls, 30)
        async with use_cassette(path):
            return await asyncio.wait_for(calls, 30)

    started = time.monotonic()
    assert asyncio.run(replay()) == LIVE
    assert time.monotonic() - started >= STALL  # it did wait for the stall: the path under test


async def test_concurrent_streamable_http_calls_replay_in_another_order(tmp_path: Path) -> None:
    """Each message is a POST of its own, keyed without its id: the order never mattered.
    (This server has no ``count`` tool: the ``add`` calls only.)

    One thing differs from stdio: the SDK lists the tools when a call's answer comes and it
    knows none yet, once per answer that comes before the listing's. Live, the answers came
    apart; replayed, they come together, and it may list them more times than recorded:
    ``tools/list`` is a read, which a live server answers again the same way, and so does the
    cassette (no miss, no option needed)."""
    path = tmp_path / "mcp.yaml"
    adds = [name for name in RECORDED_ORDER if CALLS[name][0] == "add"]
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(http_calls(url, adds), 30)
    assert live == {"results": {"slow": "2", "quick": "4", "middle": "6"}, "progress": []}
    listings = [
        i for i in yaml.safe_load(path.read_text())["interactions"] if "tools/list" in str(i["request"])
    ]
    assert len(listings) == 1

    for _ in range(3):  # however the answers' tasks run
        async with use_cassette(path) as cassette:
            assert await asyncio.wait_for(http_calls(url, adds[::-1]), 10) == live
        assert {play.outcome for play in cassette.played} == {"replayed"}
        assert cassette.all_played
    async with use_cassette(path, timing="recorded") as cassette:  # the answers apart, as live
        assert await asyncio.wait_for(http_calls(url, adds[::-1]), 10) == live
    assert cassette.all_played


async def sse_calls(url: str, order: list[str]) -> dict[str, Any]:
    async with sse_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        def call(tool: str, arguments: dict[str, int], on_progress: Any) -> Awaitable[Any]:
            return session.call_tool(tool, arguments, progress_callback=on_progress)

        return await _gathered(call, order)


async def test_concurrent_sse_transport_calls_replay_in_another_order(tmp_path: Path) -> None:
    """The older SSE transport: each POST gets ``202`` and every answer (and progress
    notification) comes on the GET stream, where the replay sends it once the request it was
    recorded for has come, with the live id (and progress token), in recorded order: the
    client lists its tools as many times as it did live (once or twice, as the answers of
    ``quick`` and ``counted`` came: both before the listing's, or one after it)."""
    path = tmp_path / "mcp_sse.yaml"
    with McpServer(transport="sse", counting=True) as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(sse_calls(url, RECORDED_ORDER), 30)
    assert live == LIVE
    async with use_cassette(path) as cassette:
        assert await asyncio.wait_for(sse_calls(url, REPLAYED_ORDER), 10) == live
    assert {play.outcome for play in cassette.played} == {"replayed"}
    assert cassette.all_played
    sent = [
        json.loads(play.request.content).get("method") for play in cassette.played if play.request.content
    ]
    stored = yaml.safe_load(path.read_text())["interactions"]
    recorded = [i["request"].get("json", {}).get("method") for i in stored]
    assert sent.count("tools/list") == recorded.count("tools/list")  # as many times as live


async def test_concurrent_http_calls_of_a_client_that_lists_its_tools_first_replay_as_they_are(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.yaml"
    adds = [name for name in RECORDED_ORDER if CALLS[name][0] == "add"]
    with McpServer() as server:
        url = server.url
        async with use_cassette(path, record_mode="rewrite"):
            live = await asyncio.wait_for(http_calls(url, adds, list_first=True), 30)
    async with use_cassette(path) as cassette:
        assert await asyncio.wait_for(http_calls(url, adds[::-1], list_first=True), 10) == live
    assert cassette.all_played
