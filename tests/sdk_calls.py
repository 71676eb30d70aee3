"""The SDK calls the core tests record and then replay, written once for both phases.

Each function drives a real provider SDK through its default HTTP client and returns a
plain value describing what the application saw, so a test compares the value from
recording with the value from replay.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types as genai_types

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
ANTHROPIC_TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]
OFFLINE = "http://127.0.0.1:9"  # nothing listens here: replay must not need a server


def openai_client(base_url: str, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test-SECRET-openai-0123456789", base_url=f"{base_url}/v1", **kwargs)


def openai_async(base_url: str, **kwargs: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="sk-test-SECRET-openai-0123456789", base_url=f"{base_url}/v1", **kwargs)


def anthropic_client(base_url: str, **kwargs: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test-SECRET-anthropic-0123", base_url=base_url, **kwargs)


def anthropic_async(base_url: str, **kwargs: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="sk-ant-test-SECRET-anthropic-0123", base_url=base_url, **kwargs)


def openai_chat(base_url: str) -> list[Any]:
    client = openai_client(base_url)
    plain = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hello"}])
    tool = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=TOOLS
    )
    call = tool.choices[0].message.tool_calls[0]
    stream = client.chat.completions.create(
        model="gpt-4o",
        messages=[{"role": "user", "content": "Tell me a story"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces = [chunk.choices[0].delta.content for chunk in stream if chunk.choices]
    return [
        plain.choices[0].message.content,
        plain.usage.total_tokens,
        call.function.name,
        call.function.arguments,
        pieces,
    ]


async def openai_chat_async(base_url: str) -> list[Any]:
    client = openai_async(base_url)
    plain = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Hi async"}]
    )
    stream = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=TOOLS, stream=True
    )
    arguments = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.tool_calls:
            arguments.append(chunk.choices[0].delta.tool_calls[0].function.arguments)
    await client.close()
    return [plain.choices[0].message.content, arguments]


def anthropic_messages(base_url: str) -> list[Any]:
    client = anthropic_client(base_url)
    plain = client.messages.create(
        model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "Hello"}]
    )
    tool = client.messages.create(
        model="claude-x",
        max_tokens=50,
        tools=ANTHROPIC_TOOLS,
        messages=[{"role": "user", "content": "Weather in Rome?"}],
    )
    with client.messages.stream(
        model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "Stream a poem"}]
    ) as stream:
        streamed = list(stream.text_stream)
        final = stream.get_final_message()
    tool_use = next(block for block in tool.content if block.type == "tool_use")
    return [
        plain.content[0].text,
        plain.usage.output_tokens,
        tool_use.name,
        tool_use.input,
        streamed,
        final.usage.output_tokens,
    ]


async def anthropic_messages_async(base_url: str) -> list[Any]:
    client = anthropic_async(base_url)
    plain = await client.messages.create(
        model="claude-x", max_tokens=50, messages=[{"role": "user", "content": "Hi async"}]
    )
    stream = await client.messages.create(
        model="claude-x",
        max_tokens=50,
        tools=ANTHROPIC_TOOLS,
        messages=[{"role": "user", "content": "Weather in Lima?"}],
        stream=True,
    )
    events = [event.type async for event in stream]
    await client.close()
    return [plain.content[0].text, events]


def gemini_client(base_url: str) -> genai.Client:
    options = genai_types.HttpOptions(base_url=base_url, api_version="v1beta")
    return genai.Client(api_key="test-SECRET-gemini-0123456789", http_options=options)


def gemini_generate(base_url: str) -> list[Any]:
    client = gemini_client(base_url)
    try:
        plain = client.models.generate_content(model="gemini-2.5-flash", contents="Hello")
        stream = client.models.generate_content_stream(model="gemini-2.5-flash", contents="Tell me a story")
        pieces = [chunk.text for chunk in stream]
    finally:
        client.close()
    return [plain.text, pieces]


async def gemini_generate_async(base_url: str) -> list[Any]:
    client = gemini_client(base_url).aio
    try:
        plain = await client.models.generate_content(model="gemini-2.5-flash", contents="Hi async")
        stream = await client.models.generate_content_stream(model="gemini-2.5-flash", contents="A poem")
        pieces = [chunk.text async for chunk in stream]
    finally:
        await client.aclose()
    return [plain.text, pieces]
