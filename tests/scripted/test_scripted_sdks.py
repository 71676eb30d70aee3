"""Scripted replies parsed by the real SDKs, sync, async and streamed: openai (chat completions
and Responses), anthropic and google-genai, each with thinking, text and tool calls.

No server: every request is answered by the script, so the clients point at the providers'
real hosts and never reach them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
from google import genai

import promptvcr
from promptvcr import reply, script

THINKING = "The user wants the weather, so I call the tool."
TEXT = "Let me check the weather in Paris and Rome."
CALLS = [("get_weather", {"city": "Paris", "units": "metric"}), ("get_weather", {"city": "Rome"})]
FULL = reply(TEXT, tool_calls=CALLS, thinking=THINKING, usage=(42, 17))
PLAIN = reply("Bonjour!")
MESSAGES: list[Any] = [{"role": "user", "content": "Weather in Paris and Rome?"}]


def oai() -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", max_retries=0)


def aoai() -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="sk-test", max_retries=0)


# OpenAI chat completions --------------------------------------------------------------------


def check_chat_message(message: Any) -> None:
    assert message.content == TEXT
    assert message.role == "assistant"
    assert message.model_extra["reasoning_content"] == THINKING
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert calls == [(name, dict(args)) for name, args in CALLS]
    assert len({c.id for c in message.tool_calls}) == 2


def test_openai_chat_sync() -> None:
    with script(FULL, PLAIN) as cassette:
        first = oai().chat.completions.create(model="gpt-4o", messages=MESSAGES)
        second = oai().chat.completions.create(model="gpt-4o", messages=MESSAGES)
    check_chat_message(first.choices[0].message)
    assert first.choices[0].finish_reason == "tool_calls"
    assert first.model == "gpt-4o"
    assert first.usage is not None and (first.usage.prompt_tokens, first.usage.completion_tokens) == (42, 17)
    assert second.choices[0].message.content == "Bonjour!" and second.choices[0].finish_reason == "stop"
    assert first.id != second.id and first.created < second.created
    assert [play.outcome for play in cassette.played] == ["replayed", "replayed"]


async def test_openai_chat_async_stream() -> None:
    async with script(FULL):
        stream = await aoai().chat.completions.create(
            model="gpt-4o", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    thinking = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content", "") for c in chunks if c.choices
    )
    arguments: dict[int, str] = {}
    names: dict[int, str] = {}
    for chunk in chunks:
        for call in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            arguments[call.index] = arguments.get(call.index, "") + (call.function.arguments or "")
            if call.function.name:
                names[call.index] = call.function.name
    assert (text, thinking) == (TEXT, THINKING)
    assert [(names[i], json.loads(arguments[i])) for i in sorted(names)] == [(n, dict(a)) for n, a in CALLS]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 59


def test_openai_chat_stream_helper_accumulates_the_tool_calls() -> None:
    with script(FULL), oai().chat.completions.stream(model="gpt-4o", messages=MESSAGES) as stream:
        final = stream.get_final_completion()
    check_chat_message(final.choices[0].message)


async def test_openai_chat_async() -> None:
    async with script(reply(refusal="I can't help with that.")):
        completion = await aoai().chat.completions.create(model="gpt-4o", messages=MESSAGES)
    message = completion.choices[0].message
    assert (message.refusal, message.content) == ("I can't help with that.", None)


# OpenAI Responses ---------------------------------------------------------------------------


def check_response(response: Any) -> None:
    assert [item.type for item in response.output] == [
        "reasoning",
        "message",
        "function_call",
        "function_call",
    ]
    assert response.output[0].summary[0].text == THINKING
    assert response.output_text == TEXT
    calls = [(item.name, json.loads(item.arguments)) for item in response.output[2:]]
    assert calls == [(name, dict(args)) for name, args in CALLS]
    assert response.status == "completed"
    assert response.usage.input_tokens == 42 and response.usage.output_tokens == 17


def test_openai_responses_sync() -> None:
    with script(FULL):
        response = oai().responses.create(model="gpt-5", input="Weather in Paris and Rome?")
    check_response(response)


async def test_openai_responses_async() -> None:
    async with script(FULL):
        response = await aoai().responses.create(model="gpt-5", input="Weather in Paris and Rome?")
    check_response(response)


def test_openai_responses_stream() -> None:
    with script(FULL), oai().responses.stream(model="gpt-5", input="Weather?") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == TEXT and len(deltas) > 1
    check_response(final)


async def test_openai_responses_async_stream_cut_by_length() -> None:
    async with script(reply("Once upon a", finish="length")):
        stream = await aoai().responses.create(model="gpt-5", input="A story", stream=True)
        events = [event async for event in stream]
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"
    assert [e.sequence_number for e in events] == list(range(len(events)))


# Anthropic ----------------------------------------------------------------------------------


def check_message(message: Any) -> None:
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert message.content[0].thinking == THINKING and message.content[0].signature
    assert message.content[1].text == TEXT
    assert [(b.name, b.input) for b in message.content[2:]] == [(name, dict(args)) for name, args in CALLS]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (42, 17)


def ask_claude(client: Any, **extra: Any) -> Any:
    return client.messages.create(model="claude-opus-4-5", max_tokens=1024, messages=MESSAGES, **extra)


def test_anthropic_sync() -> None:
    with script(FULL):
        check_message(ask_claude(anthropic.Anthropic(api_key="sk-ant-test", max_retries=0)))


async def test_anthropic_async() -> None:
    async with script(FULL):
        check_message(await ask_claude(anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0)))


def test_anthropic_stream() -> None:
    client = anthropic.Anthropic(api_key="sk-ant-test", max_retries=0)
    with (
        script(FULL),
        client.messages.stream(model="claude-opus-4-5", max_tokens=1024, messages=MESSAGES) as stream,
    ):
        thinking = [e.thinking for e in stream if e.type == "thinking"]
        final = stream.get_final_message()
    assert "".join(thinking) == THINKING
    check_message(final)


async def test_anthropic_async_stream_refusal() -> None:
    client = anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0)
    async with (
        script(reply(refusal="I won't do that.")),
        client.messages.stream(model="claude-opus-4-5", max_tokens=64, messages=MESSAGES) as stream,
    ):
        final = await stream.get_final_message()
    assert final.stop_reason == "refusal" and final.content[0].text == "I won't do that."


# Gemini -------------------------------------------------------------------------------------


def gemini() -> genai.Client:
    return genai.Client(api_key="gemini-test-key")


def check_parts(parts: list[Any]) -> None:
    assert "".join(p.text for p in parts if p.thought) == THINKING
    assert "".join(p.text for p in parts if p.text and not p.thought) == TEXT
    calls = [(p.function_call.name, p.function_call.args) for p in parts if p.function_call]
    assert calls == [(name, dict(args)) for name, args in CALLS]


def test_gemini_sync() -> None:
    client = gemini()  # kept: a client that is collected closes its connection pool
    with script(FULL):
        response = client.models.generate_content(model="gemini-2.5-flash", contents="Weather?")
    check_parts(response.candidates[0].content.parts)
    assert response.candidates[0].finish_reason == "STOP"
    assert response.usage_metadata.prompt_token_count == 42


async def test_gemini_async() -> None:
    async with script(FULL):
        response = await gemini().aio.models.generate_content(model="gemini-2.5-flash", contents="Weather?")
    check_parts(response.candidates[0].content.parts)
    assert response.model_version == "gemini-2.5-flash"


def test_gemini_stream() -> None:
    client = gemini()
    with script(FULL):
        chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="Weather?"))
    assert len(chunks) > 3
    check_parts([part for chunk in chunks for part in chunk.candidates[0].content.parts])
    assert chunks[-1].candidates[0].finish_reason == "STOP"
    assert chunks[-1].usage_metadata.total_token_count == 59


async def test_gemini_async_stream_max_tokens() -> None:
    async with script(reply("Cut sho", finish="length")):
        stream = await gemini().aio.models.generate_content_stream(model="gemini-2.5-flash", contents="Hi")
        chunks = [chunk async for chunk in stream]
    assert "".join(chunk.text or "" for chunk in chunks) == "Cut sho"
    assert chunks[-1].candidates[0].finish_reason == "MAX_TOKENS"


def test_the_same_script_renders_the_same_ids_on_every_run() -> None:
    def run() -> tuple[str, str]:
        with script(FULL, FULL):
            a = oai().chat.completions.create(model="gpt-4o", messages=MESSAGES)
            b = ask_claude(anthropic.Anthropic(api_key="sk-ant-test", max_retries=0))
        return a.id + a.choices[0].message.tool_calls[0].id, b.id + b.content[0].signature

    assert run() == run()
    assert promptvcr.reply is reply and promptvcr.script is script
