"""``RecordMode.verify`` on sessions: a realtime websocket session (the OpenAI SDK's
``client.realtime``) is compared by its event types and their shapes, as an SSE stream is,
and MCP results by their structure, typed by the method they answer (over stdio: see
tests/mcp/test_mcp_stdio.py). Texts, ids and audio that differ from run to run are never drift."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_server import McpServer
from realtime_server import RealtimeServer

from promptvcr import use_cassette

sys.path.insert(0, str(Path(__file__).resolve().parent / "interceptors"))
from test_websockets_realtime import _openai, talk


def _verified(path: Path, drift: str) -> list[str]:
    warned = pytest.warns() if drift else contextlib.nullcontext()
    with RealtimeServer(drift=drift) as server, warned, use_cassette(path, record_mode="verify") as cassette:
        talk(_openai(server.url))
    assert [play.outcome for play in cassette.played] == ["verified"]
    return [line for found in cassette.drift for line in found.differences]


@pytest.fixture(scope="module")
def realtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("verify") / "realtime.yaml"
    with RealtimeServer() as server, use_cassette(path, record_mode="rewrite"):
        talk(_openai(server.url))
    return path


def test_an_unchanged_realtime_server_is_no_drift(realtime: Path) -> None:
    assert _verified(realtime, "") == []


def test_a_new_realtime_event_is_drift(realtime: Path) -> None:
    (line,) = _verified(realtime, "event")
    assert line.startswith("stream events: were session.created, session.updated")
    assert "response.created, rate_limits.updated, response.output_audio_transcript.delta" in line


def test_a_new_field_in_a_realtime_event_is_drift(realtime: Path) -> None:
    assert _verified(realtime, "field") == ["event response.done: new field 'item_id'"]


def test_mcp_over_http_results_are_compared_by_structure(tmp_path: Path) -> None:
    path = tmp_path / "mcp.yaml"
    sys.path.insert(0, str(Path(__file__).resolve().parent / "mcp"))
    from test_mcp_ids import calls

    async def run(server: McpServer, mode: str) -> Any:
        async with use_cassette(path, record_mode=mode) as cassette:
            await asyncio.wait_for(calls(server.url, listings=1), 30)
        return cassette

    with McpServer() as server:
        asyncio.run(run(server, "rewrite"))
        assert asyncio.run(run(server, "verify")).drift == []  # new session id, same structure
    with McpServer(title="Adder") as server, pytest.warns(UserWarning, match="differ from the recording"):
        cassette = asyncio.run(run(server, "verify"))
    assert [d.differences for d in cassette.drift] == [
        ("event tools/list result.result.tools[]: new field 'title'",)
    ]
