"""Agent suites: a replay that diverges only in a tool result says "tool drift", and may replay.

Real SDKs and two agent frameworks (pydantic-ai on chat completions, openai-agents on the
Responses API, whose loops run a turn's tool calls concurrently) against FakeProvider on
127.0.0.1: recorded once per module, then replayed
offline with the tools returning something new (tool drift), the prompt changed (never tool
drift), and the parallel results of one turn sent in every order (a set keyed by call id) or
under each other's ids (a wrong pairing, which misses).
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from fake_provider import FakeProvider
from google import genai
from google.genai import types as genai_types
from openai import AsyncOpenAI

import promptvcr
from promptvcr import CassetteMiss
from promptvcr.server import serve

#: The two agent frameworks: imported by the worker that runs this module's tests (a module
#: fixture, before any cassette), not at collection by every worker (seconds of CPU each).
FRAMEWORK_MODULES = ("agents", "pydantic_ai.models.openai")


@pytest.fixture(scope="module", autouse=True)
def _frameworks_imported() -> None:
    for name in FRAMEWORK_MODULES:
        importlib.import_module(name)
    from agents import set_tracing_disabled

    set_tracing_disabled(True)


OFFLINE = "http://127.0.0.1:9"  # nothing listens: a replay that tried the network would fail
TOOLS = ("get_weather", "get_time", "get_news")
RESULTS = {"get_weather": "sunny, 21 C", "get_time": "10:00", "get_news": "no news"}
ASK = "PARALLEL weather time and news in Paris"


# OpenAI chat completions ---------------------------------------------------------------------


def _openai_tools() -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    return [{"type": "function", "function": {"name": n, "parameters": schema}} for n in TOOLS]


def chat_turn(
    base: str, results: dict[str, str], order: tuple[int, ...], ids: tuple[int, ...] | None = None
) -> str:
    """One model turn calling three tools, their results sent in ``order`` (each under the id of
    call ``ids[i]``), and the model's answer to them."""
    client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=_openai_tools())
    calls = first.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == list(TOOLS)  # type: ignore[union-attr]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    for i in order:
        call_id = calls[(ids or order)[order.index(i)] if ids else i].id
        messages.append({"role": "tool", "tool_call_id": call_id, "content": results[TOOLS[i]]})
    second = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=_openai_tools())
    return second.choices[0].message.content or ""


@pytest.fixture(scope="module")
def chat_cassette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("chat") / "chat.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        answer = chat_turn(fake.base_url, RESULTS, (0, 1, 2))
    return path, answer


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_parallel_results_in_any_order_replay(
    chat_cassette: tuple[Path, str], order: tuple[int, ...]
) -> None:
    path, recorded = chat_cassette
    with promptvcr.use_cassette(path) as cassette:
        assert chat_turn(OFFLINE, RESULTS, order) == recorded
    assert [play.outcome for play in cassette.played] == ["replayed", "replayed"]


def test_results_under_other_calls_ids_miss(chat_cassette: tuple[Path, str]) -> None:
    path, _ = chat_cassette
    for on_tool_drift in ("miss", "replay"):  # a wrong pairing is never tool drift
        with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path, on_tool_drift=on_tool_drift):  # type: ignore[arg-type]
            chat_turn(OFFLINE, RESULTS, (0, 1, 2), ids=(1, 0, 2))
        assert "tool results were sent under other calls' ids" in str(miss.value)
        assert "tool drift" not in str(miss.value)


def test_chat_tool_drift_names_tool_and_call_then_replays(chat_cassette: tuple[Path, str]) -> None:
    path, recorded = chat_cassette
    drifted = {**RESULTS, "get_time": "11:30"}
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path):
        chat_turn(OFFLINE, drifted, (2, 0, 1))
    text = str(miss.value)
    assert "Why it missed: tool drift" in text
    assert 'get_time (call call_fake_1_1): "10:00" -> "11:30"' in text
    assert "get_weather" not in text.split("Why it missed")[1].split("Nearest")[0]  # only what changed

    with promptvcr.use_cassette(path, on_tool_drift="replay") as cassette:
        assert chat_turn(OFFLINE, drifted, (2, 0, 1)) == recorded
    plays = cassette.played
    assert [play.outcome for play in plays] == ["replayed", "tool-drift"]
    assert plays[1].tool_drift == ('get_time (call call_fake_1_1): "10:00" -> "11:30"',)
    assert cassette.all_played


def test_a_changed_prompt_is_never_tool_drift(chat_cassette: tuple[Path, str]) -> None:
    path, _ = chat_cassette
    client = openai.OpenAI(api_key="sk-test", base_url=f"{OFFLINE}/v1", max_retries=0)
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path, on_tool_drift="replay"):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": ASK + " today"}], tools=_openai_tools()
        )  # type: ignore[call-overload]
    assert "Why it missed: the prompt changed (system, user or assistant text): messages[0].content" in str(
        miss.value
    )
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path, on_tool_drift="replay"):
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": ASK}],
            tools=_openai_tools(),
            temperature=0.2,
        )
    assert "Why it missed: parameters changed: temperature" in str(miss.value)


# Agent frameworks' loops: pydantic-ai (chat), openai-agents (Responses) ---------------------


def run_agent(base: str, weather: Callable[[], str]) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=f"{base}/v1", api_key="sk-test"))
    agent = Agent(model)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return weather()

    @agent.tool_plain
    def get_time(city: str) -> str:
        return "10:00"

    return agent.run_sync("PARALLEL weather and time in Paris").output


@pytest.fixture(scope="module")
def agent_cassette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("agent") / "agent.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        output = run_agent(fake.base_url, lambda: "sunny")
    return path, output


def test_agent_replays_as_recorded(agent_cassette: tuple[Path, str]) -> None:
    path, output = agent_cassette
    with promptvcr.use_cassette(path) as cassette:
        assert run_agent(OFFLINE, lambda: "sunny") == output
    assert [play.outcome for play in cassette.played] == ["replayed", "replayed"]


def test_agent_tool_returning_a_new_value_is_tool_drift(agent_cassette: tuple[Path, str]) -> None:
    path, output = agent_cassette
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path):
        run_agent(OFFLINE, lambda: "rain")
    assert "tool drift" in str(miss.value)
    assert 'get_weather (call call_fake_1): "sunny" -> "rain"' in str(miss.value)

    with promptvcr.use_cassette(path, on_tool_drift="replay") as cassette:
        assert run_agent(OFFLINE, lambda: "rain") == output
    drifted = [play for play in cassette.played if play.outcome == "tool-drift"]
    assert [play.tool_drift for play in drifted] == [('get_weather (call call_fake_1): "sunny" -> "rain"',)]


def run_openai_agent(base: str, weather: str) -> str:
    """openai-agents on the Responses API: the model calls both tools in one turn."""
    from agents import Agent as AgentsAgent
    from agents import OpenAIResponsesModel, Runner, function_tool

    @function_tool
    def get_weather(city: str) -> str:
        return weather

    @function_tool
    def get_time(city: str) -> str:
        return "10:00"

    client = AsyncOpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    model = OpenAIResponsesModel("gpt-4.1-mini", client)
    agent = AgentsAgent(name="weather", instructions="Be brief.", tools=[get_weather, get_time], model=model)
    return str(Runner.run_sync(agent, "PARALLEL weather and time in Paris").final_output)


def test_openai_agents_responses_loop_tool_drift(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        output = run_openai_agent(fake.base_url, "sunny")
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path):
        run_openai_agent(OFFLINE, "rain")
    assert "Why it missed: tool drift" in str(miss.value)
    assert 'get_weather (call call_fake_1_0): "sunny" -> "rain"' in str(miss.value)
    with promptvcr.use_cassette(path, on_tool_drift="replay") as cassette:
        assert run_openai_agent(OFFLINE, "rain") == output
    assert [play.outcome for play in cassette.played] == ["replayed", "tool-drift"]


# Anthropic tool_result blocks, Gemini functionResponse parts, Responses function_call_output ---


def anthropic_turn(base: str, results: dict[str, str], order: tuple[int, ...]) -> str:
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=base, max_retries=0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools: Any = [{"name": n, "description": n, "input_schema": schema} for n in TOOLS]
    messages: list[Any] = [{"role": "user", "content": ASK}]
    first = client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=messages, tools=tools)
    uses = [block for block in first.content if block.type == "tool_use"]
    messages.append({"role": "assistant", "content": [block.model_dump() for block in first.content]})
    blocks = [{"type": "tool_result", "tool_use_id": uses[i].id, "content": results[TOOLS[i]]} for i in order]
    messages.append({"role": "user", "content": blocks})
    second = client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=messages, tools=tools)
    return "".join(block.text for block in second.content if block.type == "text")


def gemini_turn(base: str, results: dict[str, str], order: tuple[int, ...]) -> str:
    options = genai_types.HttpOptions(base_url=base, api_version="v1beta")
    client = genai.Client(api_key="g-test", http_options=options)
    declarations = [
        genai_types.FunctionDeclaration(name=n, parameters_json_schema={"type": "object"}) for n in TOOLS
    ]
    config = genai_types.GenerateContentConfig(
        tools=[genai_types.Tool(function_declarations=declarations)],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents: list[Any] = [genai_types.Content(role="user", parts=[genai_types.Part(text=ASK)])]
    first = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    calls = first.function_calls or []
    contents.append(first.candidates[0].content)  # type: ignore[index]
    answer = genai_types.Part.from_function_response
    parts = [answer(name=calls[i].name or "", response={"result": results[TOOLS[i]]}) for i in order]
    contents.append(genai_types.Content(role="user", parts=parts))
    second = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
    return second.text or ""


def responses_turn(base: str, results: dict[str, str], order: tuple[int, ...]) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools: Any = [{"type": "function", "name": n, "parameters": schema, "strict": False} for n in TOOLS]
    items: list[Any] = [{"role": "user", "content": ASK}]
    first = client.responses.create(model="gpt-4.1-mini", input=items, tools=tools)
    calls = [item for item in first.output if item.type == "function_call"]
    items += [call.model_dump(exclude_none=True) for call in calls]
    items += [
        {"type": "function_call_output", "call_id": calls[i].call_id, "output": results[TOOLS[i]]}
        for i in order
    ]
    return client.responses.create(model="gpt-4.1-mini", input=items, tools=tools).output_text


TURNS = {"anthropic": anthropic_turn, "gemini": gemini_turn, "responses": responses_turn}
#: How each API shows the call id of ``get_time`` (Gemini's fake calls carry none).
TIME_CALL = {"anthropic": "toolu_fake_1_1", "gemini": "(no id)", "responses": "call_fake_1_1"}


@pytest.fixture(scope="module", params=sorted(TURNS))
def sdk_cassette(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path, str]]:
    name = request.param
    path = tmp_path_factory.mktemp(name) / f"{name}.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        answer = TURNS[name](fake.base_url, RESULTS, (0, 1, 2))
    yield name, path, answer


def test_sdk_parallel_results_and_tool_drift(sdk_cassette: tuple[str, Path, str]) -> None:
    name, path, recorded = sdk_cassette
    turn = TURNS[name]
    for order in ((2, 1, 0), (1, 2, 0)):  # every order: test_parallel_results_in_any_order_replay
        with promptvcr.use_cassette(path):
            assert turn(OFFLINE, RESULTS, order) == recorded
    drifted = {**RESULTS, "get_time": "11:30"}
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path):
        turn(OFFLINE, drifted, (1, 2, 0))
    assert "Why it missed: tool drift" in str(miss.value)
    assert f"get_time (call {TIME_CALL[name]}):" in str(miss.value)
    with promptvcr.use_cassette(path, on_tool_drift="replay") as cassette:
        assert turn(OFFLINE, drifted, (1, 2, 0)) == recorded
    assert [play.outcome for play in cassette.played] == ["replayed", "tool-drift"]


def test_serve_replays_tool_drift_when_asked_and_fails_on_it(chat_cassette: tuple[Path, str]) -> None:
    """``promptvcr serve --on-tool-drift replay``: the other process gets the recorded answer, and
    ``--fail-on-drift`` makes the server's exit status say so, naming the tool and the call id."""
    path, recorded = chat_cassette
    drifted = {**RESULTS, "get_news": "an election"}
    with serve(
        path, record_mode="replay", options=["--on-tool-drift", "replay", "--fail-on-drift"]
    ) as server:
        assert chat_turn(f"{server.url}/openai", drifted, (1, 0, 2)) == recorded
    assert server.process.returncode == 1
    assert f"tool drift (--fail-on-drift) in {path}: POST " in server.log_text
    assert 'get_news (call call_fake_1_2): "no news" -> "an election"' in server.log_text
    entry = server.report["cassettes"][0]
    assert entry["outcomes"] == {"replayed": 1, "tool-drift": 1}

    with serve(path.parent, record_mode="replay") as per_test:  # a test's own start may ask for it
        status, started = per_test.admin("start", {"cassette": path.name, "on_tool_drift": "replay"})
        assert status == 200, started
        assert chat_turn(f"{per_test.url}/openai", drifted, (0, 1, 2)) == recorded
        status, stopped = per_test.admin("stop", {})
    assert stopped["tool_drift"][0]["changes"] == [
        'get_news (call call_fake_1_2): "no news" -> "an election"'
    ]


def test_a_volatile_value_names_the_rule_that_absorbs_it(tmp_path: Path) -> None:
    """A timestamp in the system prompt: the miss says so and prints a rule; that rule replays it."""
    from promptvcr import default_rules
    from promptvcr.matching.rules.learned import mask_in_field

    def ask(base: str, stamp: str) -> str:
        client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
        system = {"role": "system", "content": f"Now: {stamp}. Be brief."}
        messages: Any = [system, {"role": "user", "content": "hi"}]
        return (
            client.chat.completions.create(model="gpt-4o-mini", messages=messages).choices[0].message.content
            or ""
        )

    path = tmp_path / "stamped.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        recorded = ask(fake.base_url, "2026-12-07T10:00:00Z")
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path, on_tool_drift="replay"):
        ask(OFFLINE, "2026-12-08T09:30:00Z")
    rule = "mask_in_field('messages[0].content', ['timestamp'])"
    assert (
        "Why it missed: a volatile value (timestamp) changed at messages[0].content; a rule absorbs it: "
        in str(miss.value)
    )
    assert f"rules=[*default_rules(), {rule}]" in str(miss.value)
    rules = [*default_rules(), mask_in_field("messages[0].content", ["timestamp"])]
    with promptvcr.use_cassette(path, rules=rules):
        assert ask(OFFLINE, "2026-12-08T09:30:00Z") == recorded


def test_a_clock_tool_returning_a_new_time_is_tool_drift(chat_cassette: tuple[Path, str]) -> None:
    """A timestamp a tool returned is tool drift (the clock is a tool), not a volatile value to mask."""
    path, _ = chat_cassette
    clocked = {**RESULTS, "get_time": "2026-12-07T10:00:00Z"}
    with FakeProvider() as fake:
        source = path.with_name("clock.yaml")
        with promptvcr.use_cassette(source, record_mode="record"):
            chat_turn(fake.base_url, clocked, (0, 1, 2))
    later = {**RESULTS, "get_time": "2026-12-07T11:15:00Z"}
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(source):
        chat_turn(OFFLINE, later, (0, 1, 2))
    assert "Why it missed: tool drift" in str(miss.value)
    assert "volatile" not in str(miss.value)
    with promptvcr.use_cassette(source, on_tool_drift="replay") as cassette:
        chat_turn(OFFLINE, later, (0, 1, 2))
    assert [play.outcome for play in cassette.played] == ["replayed", "tool-drift"]


def test_an_mcp_tool_result_that_changed_is_tool_drift(tmp_path: Path) -> None:
    """Anthropic's MCP connector: ``mcp_tool_use`` / ``mcp_tool_result`` blocks name the MCP tool."""

    def turn(base: str, result: str) -> str:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=base, max_retries=0)
        use = {
            "type": "mcp_tool_use",
            "id": "mcptoolu_01",
            "name": "search_docs",
            "server_name": "docs",
            "input": {},
        }
        answer = {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_01",
            "is_error": False,
            "content": result,
        }
        messages: Any = [
            {"role": "user", "content": "Find the install page"},
            {"role": "assistant", "content": [use, answer, {"type": "text", "text": "Found it."}]},
            {"role": "user", "content": "Thanks, and?"},
        ]
        reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=32, messages=messages)
        return "".join(block.text for block in reply.content if block.type == "text")

    path = tmp_path / "mcp.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        recorded = turn(fake.base_url, "install.md")
    with pytest.raises(CassetteMiss) as miss, promptvcr.use_cassette(path):
        turn(OFFLINE, "setup.md")
    assert 'search_docs (call mcptoolu_01): "install.md" -> "setup.md"' in str(miss.value)
    with promptvcr.use_cassette(path, on_tool_drift="replay") as cassette:
        assert turn(OFFLINE, "setup.md") == recorded
    assert [play.outcome for play in cassette.played] == ["tool-drift"]
