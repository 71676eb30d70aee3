"""``promptvcr mcp -- <server command>``: the stdio session of any server, for clients that
are not the Python SDK in-process: the official TypeScript SDK (node, installed by the test
from npm) and the Python SDK started against the wrapper as its server command. Recorded
live, replayed with the server's script gone; the same file replays in-process too."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import installs
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import promptvcr
from promptvcr import use_cassette
from promptvcr.cli import main

SERVER = Path(__file__).resolve().parent.parent / "mcp_stdio_server.py"
NODE_CLIENT = Path(__file__).resolve().parent / "node_client.mjs"
SRC = str(Path(promptvcr.__file__).resolve().parent.parent)


def wrapped(cassette: Path, script: Path, *mode: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "promptvcr",
        "mcp",
        "--cassette",
        str(cassette),
        *mode,
        "--",
        sys.executable,
        str(script),
    ]


async def python_client(command: list[str], b: int = 3) -> dict[str, Any]:
    env = {"PYTHONPATH": SRC}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = await client.list_tools()
        added = await client.call_tool("add", {"a": 2, "b": b})
    return {"tools": sorted(t.name for t in tools.tools), "added": added.content[0].text}  # type: ignore[union-attr]


def test_a_python_client_through_the_wrapper_records_and_replays_with_the_server_gone(tmp_path: Path) -> None:
    script, path = tmp_path / "server.py", tmp_path / "wrapped.yaml"
    shutil.copy(SERVER, script)
    live = asyncio.run(asyncio.wait_for(python_client(wrapped(path, script, "--record-mode", "rewrite")), 60))
    assert live == {"tools": ["add", "count"], "added": "5"}
    (interaction,) = yaml.safe_load(path.read_text())["interactions"]
    assert interaction["request"]["url"] == "stdio:python server.py"
    script.rename(tmp_path / "moved-away.py")

    assert asyncio.run(asyncio.wait_for(python_client(wrapped(path, script)), 30)) == live

    async def in_process() -> tuple[dict[str, Any], Any]:  # the same file, without the wrapper
        async with use_cassette(path) as cassette:
            return await asyncio.wait_for(python_client([sys.executable, str(script)]), 10), cassette

    replayed, cassette = asyncio.run(in_process())
    assert replayed == live and cassette.all_played

    with pytest.raises(BaseException) as caught:  # the SDK's task group wraps what the call raised
        asyncio.run(asyncio.wait_for(python_client(wrapped(path, script), b=4), 30))
    answered = _leaves(caught.value)  # a miss answers the request with a JSON-RPC error
    assert [type(error) for error in answered] == [MCPError]
    assert "params.arguments.b: 3 -> 4" in str(answered[0])


def _leaves(error: BaseException) -> list[BaseException]:
    inner = getattr(error, "exceptions", None)
    return [leaf for item in inner for leaf in _leaves(item)] if isinstance(inner, tuple) else [error]


def _node_sdk() -> Path:
    """The folder holding ``node_modules/@modelcontextprotocol/sdk`` and the node client."""
    try:
        folder = installs.mcp_node_sdk()
    except installs.Unavailable as why:
        pytest.skip(str(why))
    shutil.copy(NODE_CLIENT, folder / NODE_CLIENT.name)  # node resolves the SDK from the script's folder
    return folder


def node_client(folder: Path, command: list[str], *, silent_stdin: bool = False) -> dict[str, Any]:
    """The node client's result. Its stdin (the test's parent's, as a process started in the
    background has one) is ``/dev/null``, or with ``silent_stdin`` a pipe held open and never
    written: neither may change what the wrapper does (issue 54)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    with subprocess.Popen(
        ["node", str(folder / NODE_CLIENT.name), json.dumps(command)],
        stdin=subprocess.PIPE if silent_stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as node:
        try:
            stdout, stderr = node.communicate(timeout=90) if not silent_stdin else _held_open(node)
        finally:
            node.kill()
    assert node.returncode == 0, stderr
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def _held_open(node: subprocess.Popen[str]) -> tuple[str, str]:
    """Read the node client to its end while its stdin stays open (closed only after)."""
    assert node.stdout is not None and node.stderr is not None
    guard = threading.Timer(90, node.kill)  # a hang fails the test instead of stalling the run
    guard.start()
    try:
        stdout = node.stdout.read()  # until node exits: it never reads its stdin
        stderr = node.stderr.read()
        node.wait(timeout=90)
    finally:
        guard.cancel()
    return stdout, stderr


def test_the_typescript_sdk_through_the_wrapper_records_and_replays_with_the_server_gone(
    tmp_path: Path,
) -> None:
    folder = _node_sdk()
    script, path = tmp_path / "server.py", tmp_path / "node.yaml"
    shutil.copy(SERVER, script)
    live = node_client(folder, wrapped(path, script, "--record-mode", "rewrite"))
    assert live == {"tools": ["add", "count"], "added": "5", "counted": "counted to 3"}
    frames = yaml.safe_load(path.read_text())["interactions"][0]["response"]["stdio"]["frames"]
    assert frames[0]["json"]["params"]["clientInfo"]["name"] == "promptvcr-node-test"
    script.rename(tmp_path / "moved-away.py")
    assert node_client(folder, wrapped(path, script)) == live
    assert node_client(folder, wrapped(path, script), silent_stdin=True) == live


def test_the_wrapper_says_what_it_needs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROMPTVCR_CASSETTE", raising=False)
    assert main(["mcp", "--", "python", "server.py"]) == 2
    assert "needs a cassette (--cassette or $PROMPTVCR_CASSETTE)" in capsys.readouterr().err
    assert main(["mcp", "--cassette", "x.yaml"]) == 2
    assert "needs the server's command (after --)" in capsys.readouterr().err
