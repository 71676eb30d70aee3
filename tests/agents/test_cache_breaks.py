"""Where a prompt cache breaks: a timestamp in the system prompt, found at its byte, per SDK.

Real SDKs (anthropic with ``cache_control``, openai chat, google-genai) run a three-request
agent loop against FakeProvider on 127.0.0.1 with its prompt cache on (it answers cached-token
counts as the providers do). A loop whose system prompt carries a timestamp that changes each
request breaks the cache at that timestamp's byte; the same loop saying a time that does not
change is no break. The readout (:mod:`promptvcr.readouts.cachebreaks`) and ``promptvcr cache``
report it with the cached-token counts the provider answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from fake_provider import FakeProvider
from google import genai
from google.genai import types as genai_types

import promptvcr
from promptvcr.cli import main
from promptvcr.files import guarded
from promptvcr.readouts.cachebreaks import conversations

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
CHANGING = ["2026-12-07T10:00:01Z", "2026-12-07T10:00:02Z", "2026-12-07T10:00:03Z"]
STEADY = ["2026-12-07T10:00:00Z"] * 3
SAME_UNTIL = "10:00:0"  # the stamps differ in the character after this


def system_text(stamp: str) -> str:
    return f"You are a weather agent. Now: {stamp}. Answer briefly."


def anthropic_loop(base: str, stamps: list[str]) -> None:
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=base, max_retries=0)
    tools: Any = [{"name": "get_weather", "description": "the weather", "input_schema": SCHEMA}]
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for stamp in stamps:
        system: Any = [{"type": "text", "text": system_text(stamp), "cache_control": {"type": "ephemeral"}}]
        reply = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=64, system=system, tools=tools, messages=messages
        )
        messages.append(
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
        )
        if reply.stop_reason == "tool_use":
            result = {"type": "tool_result", "tool_use_id": reply.content[0].id, "content": "sunny"}  # type: ignore[union-attr]
            messages.append({"role": "user", "content": [result]})
        else:
            messages.append({"role": "user", "content": "And tomorrow?"})


def openai_loop(base: str, stamps: list[str]) -> None:
    client = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0)
    tools: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    for stamp in stamps:
        sent = [{"role": "system", "content": system_text(stamp)}, *messages]
        message = (
            client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=tools).choices[0].message
        )
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
        if not message.tool_calls:
            messages.append({"role": "user", "content": "And tomorrow?"})


def gemini_loop(base: str, stamps: list[str]) -> None:
    options = genai_types.HttpOptions(base_url=base, api_version="v1beta")
    client = genai.Client(api_key="g-test", http_options=options)
    declaration = genai_types.FunctionDeclaration(name="get_weather", parameters_json_schema=SCHEMA)
    contents: list[Any] = [
        genai_types.Content(role="user", parts=[genai_types.Part(text="Weather in Paris?")])
    ]
    for stamp in stamps:
        config = genai_types.GenerateContentConfig(
            system_instruction=system_text(stamp),
            tools=[genai_types.Tool(function_declarations=[declaration])],
            automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
        )
        reply = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=config)
        contents.append(reply.candidates[0].content)  # type: ignore[index]
        if reply.function_calls:
            part = genai_types.Part.from_function_response(name="get_weather", response={"result": "sunny"})
        else:
            part = genai_types.Part(text="And tomorrow?")
        contents.append(genai_types.Content(role="user", parts=[part]))


#: Each SDK's loop, the body field of its system prompt, and where its answer counts cached tokens.
SDKS: dict[str, tuple[Callable[[str, list[str]], None], str, Callable[[dict[str, Any]], int]]] = {
    "anthropic": (anthropic_loop, "system", lambda answer: answer["usage"]["cache_read_input_tokens"]),
    "openai": (
        openai_loop,
        "messages",
        lambda answer: answer["usage"]["prompt_tokens_details"]["cached_tokens"],
    ),
    "gemini": (
        gemini_loop,
        "systemInstruction",
        lambda answer: answer["usageMetadata"]["cachedContentTokenCount"],
    ),
}
WHERE = {
    "anthropic": "system[0].text",
    "openai": "messages[0].content",
    "gemini": "systemInstruction.parts[0].text",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Each SDK's loop recorded twice: a timestamp that changes each request, and one that does not."""
    folder = tmp_path_factory.mktemp("cache")
    paths = {}
    for name, (loop, _, _) in SDKS.items():
        for kind, stamps in (("changing", CHANGING), ("steady", STEADY)):
            paths[name, kind] = path = folder / f"{name}-{kind}.yaml"
            with FakeProvider(prompt_cache=True) as fake, promptvcr.use_cassette(path, record_mode="record"):
                loop(fake.base_url, stamps)
    return paths


def _expected_byte(body: dict[str, Any], field: str) -> int:
    """The byte of the first changing character, counted over the tools then the system prompt as sent."""
    tools = b"".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")).encode() for t in body["tools"])
    system = body[field][0] if isinstance(body[field], list) else body[field]
    system = {k: v for k, v in system.items() if k != "cache_control"}
    text = json.dumps(system, ensure_ascii=False, separators=(",", ":"))
    return len(tools) + len(text[: text.index(SAME_UNTIL) + len(SAME_UNTIL)].encode())


@pytest.mark.parametrize("name", sorted(SDKS))
def test_a_changing_timestamp_breaks_the_cache_at_its_byte(
    recorded: dict[tuple[str, str], Path], name: str
) -> None:
    _, field, cached_of = SDKS[name]
    interactions = guarded.read_interactions(recorded[name, "changing"]) or []
    [conversation] = conversations(interactions)
    assert [turn.position for turn in conversation.breaks] == [1, 2]
    for turn in conversation.breaks:
        body = json.loads(interactions[turn.position].request.content)
        assert turn.break_at == _expected_byte(body, field)
        assert (
            turn.where
            == f"{WHERE[name]}, character {system_text(CHANGING[0]).index(SAME_UNTIL) + len(SAME_UNTIL)}"
        )
        assert turn.change.startswith("a timestamp changed: ")
        answer = json.loads(interactions[turn.position].response.content)
        assert turn.cache.read == cached_of(answer)  # the counts the provider answered, as recorded


@pytest.mark.parametrize("name", sorted(SDKS))
def test_a_timestamp_that_does_not_change_is_no_break(
    recorded: dict[tuple[str, str], Path], name: str
) -> None:
    interactions = guarded.read_interactions(recorded[name, "steady"]) or []
    [conversation] = conversations(interactions)
    assert len(conversation.turns) == 3
    assert conversation.breaks == []
    assert all(turn.shared > 0 and turn.shared >= turn.cacheable for turn in conversation.turns[1:])
    assert all((turn.cache.read or 0) > 0 for turn in conversation.turns[1:])


def test_the_cache_command_names_the_break_and_fails(
    recorded: dict[tuple[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cache", str(recorded["anthropic", "changing"])]) == 1
    out = capsys.readouterr().out
    assert "POST /v1/messages  claude-sonnet-4-5 (anthropic), cached by cache_control breakpoints" in out
    assert "CACHE BREAK at byte " in out and "system[0].text, character 48: a timestamp changed" in out
    assert "2 cache break(s)." in out
    assert main(["cache", str(recorded["anthropic", "steady"]), str(recorded["openai", "steady"])]) == 0
    out = capsys.readouterr().out
    assert "CACHE BREAK" not in out and "0 cache break(s)." in out
    assert "cached tokens: " in out


LOOP_MODULE = """
import openai

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]


def loop(base_url, stamps):
    client = openai.OpenAI(api_key="sk-test-key-for-replay-0000", base_url=base_url, max_retries=0)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    for stamp in stamps:
        system = {"role": "system", "content": f"You are a weather agent. Now: {stamp}. Answer briefly."}
        sent = [system, *messages]
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=sent, tools=TOOLS)
        message = answer.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
        if not message.tool_calls:
            messages.append({"role": "user", "content": "And tomorrow?"})
"""

LOOP_SUITE = f"""
import os
import pytest
from agentloop import loop

UPSTREAM = os.environ.get("UPSTREAM", "http://127.0.0.1:9/v1")

@pytest.mark.promptvcr
def test_changing():
    loop(UPSTREAM, {CHANGING!r})

@pytest.mark.promptvcr
def test_steady():
    loop(UPSTREAM, {STEADY!r})
"""


def test_fail_on_cache_break_fails_a_replaying_run_that_breaks_its_cache(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plugin_suites import make_suite, run

    make_suite(pytester, agentloop=LOOP_MODULE, test_app=LOOP_SUITE)
    with FakeProvider(prompt_cache=True) as fake:
        monkeypatch.setenv("UPSTREAM", fake.openai_base_url)
        run(pytester, "--record-mode=record").assert_outcomes(passed=2)
    monkeypatch.delenv("UPSTREAM")

    assert run(pytester).ret == 0  # replayed, and without the option nothing is judged
    gated = run(pytester, "--fail-on-cache-break")
    gated.assert_outcomes(passed=2)
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    gated.stdout.fnmatch_lines(
        [
            "*promptvcr --fail-on-cache-break*",
            "FAILED: 2 request(s) break their prompt cache:",
            "*test_app.py::test_changing  cassette cassettes/test_app/test_changing.yaml",
            "*POST /v1/chat/completions (gpt-4o-mini), request 2: at byte 200 of the 266 B that should have "
            "been cached: messages?0?.content, character 48: a timestamp changed*",
        ]
    )
    assert "test_steady  cassette" not in gated.stdout.str()
    assert run(pytester, "--fail-on-cache-break", "-k", "steady").ret == 0


def test_the_html_report_has_a_cache_break_section(
    recorded: dict[tuple[str, str], Path], tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    assert (
        main(
            [
                "report",
                str(recorded["gemini", "changing"]),
                str(recorded["gemini", "steady"]),
                "--html",
                str(page),
            ]
        )
        == 0
    )
    html = page.read_text()
    assert html.count("prompt cache</h3>") == 1  # the changing cassette only
    assert "interactions[1] POST /v1beta/models/gemini-2.5-flash:generateContent (gemini-2.5-flash)" in html
    assert "systemInstruction.parts[0].text, character 48: a timestamp changed" in html


def test_two_questions_under_one_system_prompt_are_two_conversations(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    with FakeProvider(prompt_cache=True) as fake, promptvcr.use_cassette(path, record_mode="record"):
        client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_base_url, max_retries=0)
        for question in ("Weather in Paris?", "Weather in Lima?"):
            messages: Any = [
                {"role": "system", "content": system_text(STEADY[0])},
                {"role": "user", "content": question},
            ]
            client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    found = conversations(guarded.read_interactions(path) or [])
    assert [[turn.position for turn in c.turns] for c in found] == [[0], [1]]
    assert not any(c.breaks for c in found)


def test_tools_or_keys_in_another_order_break_the_cache(tmp_path: Path) -> None:
    """Equal as values, different as bytes: tools reordered, a message's keys reordered."""
    path = tmp_path / "reordered.yaml"
    tools: Any = [
        {"type": "function", "function": {"name": name, "parameters": SCHEMA}}
        for name in ("get_weather", "get_time")
    ]
    question = {"role": "user", "content": "Weather in Paris?"}
    system = {"role": "system", "content": system_text(STEADY[0])}
    flipped = {"content": system_text(STEADY[0]), "role": "system"}
    with FakeProvider(prompt_cache=True) as fake, promptvcr.use_cassette(path, record_mode="record"):
        client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_base_url, max_retries=0)
        for sent_tools, sent_system in ((tools, system), (tools[::-1], system), (tools[::-1], flipped)):
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[sent_system, question], tools=sent_tools
            )
    [conversation] = conversations(guarded.read_interactions(path) or [])
    first, second = conversation.breaks
    assert (first.position, first.where, first.change) == (1, "tools", "the same tools in another order")
    assert first.break_at == len(b'{"type":"function","function":{"name":"get_')
    assert (second.position, second.where) == (2, "messages[0]")
    assert second.change == "the same keys in another order: ['role', 'content'] -> ['content', 'role']"
