"""MCP over stdio with the official ``mcp`` client (``stdio_client``) and a server built with
the SDK's own server library, started by the test as a process: recorded, then replayed with
the server's script gone (no process is started)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from promptvcr import CassetteMiss, use_cassette

SERVER = Path(__file__).resolve().parent.parent / "mcp_stdio_server.py"


async def session(script: Path, b: int = 3, listings: int = 1) -> dict[str, Any]:
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = [sorted(t.name for t in (await client.list_tools()).tools) for _ in range(listings)]
        added = await client.call_tool("add", {"a": 2, "b": b})
        counted = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
        resource = await client.read_resource("note://greeting")
    return {
        "tools": tools,
        "added": added.content[0].text,  # type: ignore[union-attr]
        "counted": counted.content[0].text,  # type: ignore[union-attr]
        "progress": progress,
        "resource": resource.contents[0].text,  # type: ignore[union-attr]
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    """A session recorded live from the server script (once: a server takes seconds to start
    and stop), then the script moved away."""
    tmp_path = tmp_path_factory.mktemp("stdio")
    script = tmp_path / "server.py"
    shutil.copy(SERVER, script)
    path = tmp_path / "stdio.yaml"

    async def record() -> dict[str, Any]:
        async with use_cassette(path, record_mode="rewrite"):
            return await asyncio.wait_for(session(script), 60)

    live = asyncio.run(record())
    script.rename(tmp_path / "moved-away.py")
    return path, script, live


def test_a_stdio_session_replays_with_the_server_gone(recorded: tuple[Path, Path, dict[str, Any]]) -> None:
    path, script, live = recorded
    assert live == {
        "tools": [["add", "count"]],
        "added": "5",
        "counted": "counted to 3",
        "progress": [1.0, 2.0, 3.0],
        "resource": "hello from stdio",
    }
    assert not script.exists()

    async def replay() -> tuple[dict[str, Any], Any]:
        async with use_cassette(path) as cassette:
            return await asyncio.wait_for(session(script), 10), cassette

    replayed, cassette = asyncio.run(replay())
    assert replayed == live
    assert [(play.request.method, play.outcome) for play in cassette.played] == [("SPAWN", "replayed")]
    assert cassette.all_played


def test_the_session_is_stored_as_readable_json_rpc_messages(
    recorded: tuple[Path, Path, dict[str, Any]],
) -> None:
    path, _, _ = recorded
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    assert interaction["request"] == {"method": "SPAWN", "url": "stdio:python server.py"}
    frames = interaction["response"]["stdio"]["frames"]
    sent = [f["json"].get("method") for f in frames if f["from"] == "client" and "json" in f]
    assert sent[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert {"tools/call", "resources/read"} <= set(sent)
    progress = [f["json"] for f in frames if f["from"] == "server" and f.get("json", {}).get("method")]
    assert [p["params"]["progress"] for p in progress if p["method"] == "notifications/progress"] == [1, 2, 3]
    assert frames[-1]["from"] == "server" and frames[-1]["close"]["code"] is not None  # the exit status


def test_a_changed_call_is_a_miss_naming_the_field(
    recorded: tuple[Path, Path, dict[str, Any]],
) -> None:
    path, script, _ = recorded

    async def changed() -> None:
        async with use_cassette(path):
            await asyncio.wait_for(session(script, b=4), 10)

    with pytest.raises(CassetteMiss) as caught:
        asyncio.run(changed())
    assert "params.arguments.b: 3 -> 4" in str(caught.value)
    assert "MCP stdio stdio:python server.py: client frame 4" in str(caught.value)


def test_show_prints_the_session_as_calls_and_results(
    recorded: tuple[Path, Path, dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from promptvcr.cli import main

    monkeypatch.setenv("NO_COLOR", "1")
    path, _, _ = recorded
    assert main(["show", str(path)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    assert lines[1].startswith("MCP stdio session | ")
    assert lines[2].startswith("→ initialize (client mcp")
    assert lines[3].startswith("← initialize result: server promptvcr-stdio-test")
    assert lines[4:] == [
        "→ notifications/initialized",
        "→ tools/list",
        "← tools/list result: add, count",
        '→ tools/call add {"a": 2, "b": 3}',
        "← tools/call result: 5",
        '→ tools/call count {"n": 3}',
        "← notifications/progress 1/3",
        "← notifications/progress 2/3",
        "← notifications/progress 3/3",
        "← tools/call result: counted to 3",
        "→ resources/read note://greeting",
        "← resources/read result: hello from stdio",
        "→ closed stdin",
        lines[-1],
    ]
    assert lines[-1].startswith("← exited, status ")


def test_verify_compares_each_result_by_structure_named_by_its_method(
    recorded: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The same server (by name: ``python server.py``), its ``add`` tool now with a title."""
    path, _, _ = recorded
    cassette_path = tmp_path / "stdio.yaml"
    shutil.copy(path, cassette_path)
    script = tmp_path / "server.py"
    script.write_text(
        SERVER.read_text().replace(
            "@server.tool()\nasync def add", '@server.tool(title="Adder")\nasync def add'
        )
    )

    async def verify() -> Any:
        async with use_cassette(cassette_path, record_mode="verify") as cassette:
            await asyncio.wait_for(session(script), 60)
        return cassette

    with pytest.warns(UserWarning, match="differ from the recording"):
        cassette = asyncio.run(verify())
    assert [play.outcome for play in cassette.played] == ["verified"]
    (drift,) = cassette.drift
    assert (drift.method, drift.url) == ("SPAWN", "stdio:python server.py")
    assert drift.differences == ("event tools/list result.result.tools[]: new field 'title'",)


def test_recorded_timing_paces_the_server_lines(
    recorded: tuple[Path, Path, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``timing="recorded"``: each server line as long after the client line that caused it as
    it came live. The waits the replayed server asks for are counted, not timed: a loaded host
    makes a replay slow, never makes it wait for a recorded gap."""
    path, script, live = recorded
    data = yaml.safe_load(path.read_text())
    frames = data["interactions"][0]["response"]["stdio"]["frames"]
    # One gap in the recording: the count's progress and answer 0.6 s after its call, all else at once.
    call = next(i for i, f in enumerate(frames) if f.get("json", {}).get("params", {}).get("name") == "count")
    for index, frame in enumerate(frames):
        frame["at"] = 0.0 if index <= call else 0.6
    stretched = tmp_path / "stretched.yaml"
    stretched.write_text(yaml.safe_dump(data, sort_keys=False))
    waits: list[float] = []
    sleep = anyio.sleep

    async def counting(seconds: float) -> None:
        if sys._getframe(1).f_globals.get("__name__") == "promptvcr.interceptors.mcp_stdio":
            waits.append(seconds)
        await sleep(seconds)

    monkeypatch.setattr(anyio, "sleep", counting)

    async def replay(timing: str) -> dict[str, Any]:
        async with use_cassette(stretched, timing=timing):
            return await asyncio.wait_for(session(script), 10)

    assert asyncio.run(replay("none")) == live
    assert waits == []  # unpaced: the replayed server never waits
    assert asyncio.run(replay("recorded")) == live
    assert max(waits) > 0.5  # the stretched gap, asked for once
    assert sum(1 for wait in waits if wait > 0.5) == 1
