"""Sessions and the recording budget: a realtime websocket session opened live is a request
and the tokens of each ``response.done`` count as it arrives; MCP sessions are not counted
(a test's own tool servers, not a provider), so an agent's tool calls leave its model calls
their budget."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider
from mcp import Client
from mcp_server import McpServer
from realtime_server import RealtimeServer

from promptvcr import use_cassette
from promptvcr.policies import budget


@pytest.fixture
def fresh_budget(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A budget of this test's own: counted from zero, its ledger taken back at the end."""
    monkeypatch.delenv(budget.ENV_BUDGET_DIR, raising=False)
    budget.reset()
    yield monkeypatch
    budget.reset()


def _realtime_turn(client: openai.OpenAI) -> budget.Spent:
    """One response over a live session; what the run spent once ``response.done`` arrived,
    the session still open."""
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.response.create()
        for event in conn:
            if event.type == "response.done":
                return budget.spent()
    raise AssertionError("the session ended without response.done")


def test_a_live_realtime_session_is_a_request_and_its_response_done_tokens_count(
    tmp_path: Path, fresh_budget: pytest.MonkeyPatch
) -> None:
    fresh_budget.setenv(budget.ENV_MAX_RECORD_TOKENS, "10")
    with RealtimeServer() as server:
        client = openai.OpenAI(
            api_key="sk-test", base_url="http://127.0.0.1:9/v1", websocket_base_url=f"{server.url}/v1"
        )
        spent_too_much = pytest.raises(
            budget.RecordBudgetSpent, match=r"19 tokens spent \(input 12, output 7\)"
        )
        with spent_too_much, use_cassette(tmp_path / "realtime.yaml", record_mode="record") as cassette:
            during = _realtime_turn(client)
            # counted as response.done arrived: 12 + 7 from the fake server, over the limit of 10
            assert (during.requests, during.input, during.output) == (1, 12, 7)
            _realtime_turn(client)  # refused before its handshake is sent
        assert len(server.paths) == 1
    assert [play.outcome for play in cassette.played] == ["recorded"]
    assert budget.refused() == 1


async def test_mcp_sessions_are_not_counted_so_the_model_calls_keep_their_budget(
    tmp_path: Path, provider: FakeProvider, fresh_budget: pytest.MonkeyPatch
) -> None:
    """A budget of one request: an MCP session over streamable HTTP (initialize, tools/list,
    tools/call, its GET stream and DELETE) and then one model call all record."""
    fresh_budget.setenv(budget.ENV_MAX_RECORD_REQUESTS, "1")
    model = openai.AsyncOpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=0)
    with McpServer() as server:
        async with use_cassette(tmp_path / "agent.yaml", record_mode="record") as cassette:
            async with Client(server.url, mode="legacy") as tools:
                added = await tools.call_tool("add", {"a": 2, "b": 3})
            text = f"the sum is {added.content[0].text}"  # type: ignore[union-attr]
            reply = await model.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
            )
    assert reply.choices[0].message.content
    assert len(provider.requests) == 1
    assert len([play for play in cassette.played if play.request.method == "POST"]) > 2  # MCP messages too
    assert budget.spent().requests == 1
