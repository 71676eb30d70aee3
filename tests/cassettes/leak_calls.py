"""Real clients (openai, anthropic, google-genai, requests, aiohttp) placing a key where real
code and real providers put one, and provider-shaped answers for the leak server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import anthropic
import openai
import requests
from google import genai
from google.genai import types as genai_types
from leak_server import Answer

JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}
FAKE_OPENAI = "sk-test-SECRET-openai-0123456789"
FAKE_ANTHROPIC = "sk-ant-test-SECRET-anthropic-0123"


def chat(content: str) -> Answer:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Answer(200, JSON, (json.dumps(body).encode(),))


def chat_stream(pieces: list[str]) -> Answer:
    events = [
        b"data: "
        + json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "gpt-4o",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
        ).encode()
        + b"\n\n"
        for piece in pieces
    ]
    return Answer(200, SSE, (*events, b"data: [DONE]\n\n"))


def message(text: str, status: int = 200) -> Answer:
    if status != 200:
        error = {"type": "error", "error": {"type": "authentication_error", "message": text}}
        return Answer(status, JSON, (json.dumps(error).encode(),))
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return Answer(200, JSON, (json.dumps(body).encode(),))


def gemini(text: str) -> Answer:
    body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
    return Answer(200, JSON, (json.dumps(body).encode(),))


def call_openai(
    url: str,
    *,
    api_key: str = FAKE_OPENAI,
    stream: bool = False,
    extra_body: dict[str, Any] | None = None,
    **client: Any,
) -> str:
    with openai.OpenAI(api_key=api_key, base_url=f"{url}/v1", max_retries=0, **client) as sdk:
        messages: Any = [{"role": "user", "content": "hi"}]
        if stream:
            chunks = sdk.chat.completions.create(model="gpt-4o", messages=messages, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        answer = sdk.chat.completions.create(model="gpt-4o", messages=messages, extra_body=extra_body)
        return answer.choices[0].message.content or ""


def call_anthropic(
    url: str, *, api_key: str = FAKE_ANTHROPIC, extra_body: dict[str, Any] | None = None
) -> str:
    with anthropic.Anthropic(api_key=api_key, base_url=url, max_retries=0) as sdk:
        try:
            answer = sdk.messages.create(
                model="claude-x",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                extra_body=extra_body,
            )
        except anthropic.AuthenticationError as error:
            return str(error)
        block = answer.content[0]
        return block.text if block.type == "text" else ""


def call_genai(url: str, *, api_key: str = "gk-test") -> str:
    options = genai_types.HttpOptions(base_url=url, api_version="v1beta")
    client = genai.Client(api_key=api_key, http_options=options)
    try:
        return client.models.generate_content(model="gemini-2.0-flash", contents="hi").text or ""
    finally:
        client.close()


def call_requests(method: str, url: str, **kwargs: Any) -> bytes:
    response = requests.request(method, url, timeout=10, **kwargs)
    return response.content


def call_aiohttp(method: str, url: str, **kwargs: Any) -> bytes:
    async def run() -> bytes:
        async with aiohttp.ClientSession() as session, session.request(method, url, **kwargs) as response:
            return await response.read()

    return asyncio.run(run())
