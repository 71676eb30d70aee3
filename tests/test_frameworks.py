"""The frameworks on top of the SDKs, each recorded against a loopback server and replayed
with that server stopped and every socket refused: nothing any of them sends gets past the
cassette, and an unrecorded request fails loudly instead of reaching the network."""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no model-cost download at import

import anthropic
import boto3
import openai
import pytest
from botocore.config import Config
from fake_bedrock import FakeBedrock
from fake_provider import FakeProvider
from google import genai
from google.genai import types
from network_guard import no_network

import promptvcr

OFFLINE = "http://127.0.0.1:9"
MESSAGES = [{"role": "user", "content": "hello there"}]


#: The frameworks only this module drives: imported by the worker that runs its tests (a module
#: fixture, before any cassette), not at collection by every worker (about 6 s of CPU each).
FRAMEWORK_MODULES = ("litellm", "langchain_openai", "huggingface_hub")


@pytest.fixture(scope="module", autouse=True)
def _frameworks_imported() -> None:
    for name in FRAMEWORK_MODULES:
        importlib.import_module(name)


def get_weather(city: str) -> str:
    """Weather in a city."""
    return "sunny"


def litellm_calls(base: str) -> list[Any]:
    import litellm

    api = {"api_base": f"{base}/v1", "api_key": "sk-test-litellm"}
    answer = litellm.completion(model="openai/gpt-4o-mini", messages=MESSAGES, **api)
    stream = litellm.completion(model="openai/gpt-4o-mini", messages=MESSAGES, stream=True, **api)
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)

    async def in_async() -> str:
        chunks = await litellm.acompletion(model="openai/gpt-4o-mini", messages=MESSAGES, stream=True, **api)
        return "".join([chunk.choices[0].delta.content or "" async for chunk in chunks])

    return [answer.choices[0].message.content, streamed, asyncio.run(in_async())]


def langchain_calls(base: str) -> list[Any]:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="gpt-4o-mini", base_url=f"{base}/v1", api_key="sk-test-langchain")  # type: ignore[arg-type]
    tool_call = llm.bind_tools([get_weather]).invoke("weather in Paris?").tool_calls[0]  # type: ignore[attr-defined]
    return [
        llm.invoke("hi").content,
        "".join(str(c.content) for c in llm.stream("hi stream")),
        tool_call["name"],
    ]


def genai_calls(base: str) -> list[Any]:
    client = genai.Client(
        api_key="gk-test", http_options=types.HttpOptions(base_url=base, api_version="v1beta")
    )
    model = "gemini-2.0-flash"
    seen = [client.models.generate_content(model=model, contents="hi").text]
    seen.append(
        "".join(
            c.text or "" for c in client.models.generate_content_stream(model=model, contents="hi stream")
        )
    )

    async def in_async() -> list[Any]:
        answer = await client.aio.models.generate_content(model=model, contents="hi async")
        stream = await client.aio.models.generate_content_stream(model=model, contents="hi async stream")
        return [answer.text, "".join([c.text or "" async for c in stream])]

    return seen + asyncio.run(in_async())


def huggingface_calls(base: str) -> list[Any]:
    from huggingface_hub import AsyncInferenceClient, InferenceClient

    client = InferenceClient(base_url=f"{base}/v1", api_key="hf_test")
    answer = client.chat_completion(messages=MESSAGES, model="tgi")
    stream = client.chat_completion(messages=MESSAGES, model="tgi", stream=True)
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream)

    async def in_async() -> str | None:
        reply = await AsyncInferenceClient(base_url=f"{base}/v1", api_key="hf_test").chat_completion(
            messages=MESSAGES
        )
        return reply.choices[0].message.content

    return [answer.choices[0].message.content, streamed, asyncio.run(in_async())]


def aiohttp_sdk_calls(base: str) -> list[Any]:
    async def calls() -> list[Any]:
        async with openai.AsyncOpenAI(
            api_key="sk-t", base_url=f"{base}/v1", http_client=openai.DefaultAioHttpClient()
        ) as oai:
            first = await oai.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        async with (
            anthropic.AsyncAnthropic(
                api_key="sk-a", base_url=base, http_client=anthropic.DefaultAioHttpClient()
            ) as ant,
            ant.messages.stream(model="m", max_tokens=9, messages=MESSAGES) as stream,
        ):  # type: ignore[arg-type]
            second = "".join([text async for text in stream.text_stream])
        return [first.choices[0].message.content, second]

    return asyncio.run(calls())


def bedrock_calls(base: str) -> list[Any]:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=base,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="SECRET-aws-0123456789",
        config=Config(retries={"max_attempts": 1}),
    )
    messages = [{"role": "user", "content": [{"text": "hello there"}]}]
    answer = client.converse(modelId="us.amazon.nova-micro-v1:0", messages=messages)
    events = client.converse_stream(modelId="us.amazon.nova-micro-v1:0", messages=messages)["stream"]
    text = "".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e)
    return [answer["output"]["message"]["content"][0]["text"], text]


FRAMEWORKS: dict[str, tuple[Callable[[str], list[Any]], int]] = {
    "litellm": (litellm_calls, 3),
    "langchain-openai": (langchain_calls, 3),
    "google-genai": (genai_calls, 4),
    "huggingface_hub": (huggingface_calls, 3),
    "openai+anthropic aiohttp": (aiohttp_sdk_calls, 2),
    "boto3 bedrock-runtime": (bedrock_calls, 2),
}


@pytest.fixture(autouse=True)
def _aws_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_records_then_replays_with_the_network_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, count = FRAMEWORKS[name]
    path = tmp_path / "c.yaml"
    server = FakeBedrock() if name.startswith("boto3") else FakeProvider()
    with server, promptvcr.use_cassette(path, record_mode="record") as recording:
        recorded = calls(server.base_url)
    assert len(server.requests) == len(recording.played) == count  # each request on the wire, once
    assert all(
        (isinstance(text, str) and text.startswith("echo ")) or text == "get_weather" for text in recorded
    )
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        assert calls(OFFLINE) == recorded
    assert attempts == []
    assert [p.outcome for p in replay.played] == ["replayed"] * count


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_an_unrecorded_request_fails_closed(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, _ = FRAMEWORKS[name]
    empty = promptvcr.use_cassette(tmp_path / "empty.yaml")
    with no_network(monkeypatch) as attempts, pytest.raises(promptvcr.CassetteMiss), empty as cassette:
        calls(OFFLINE)
    assert attempts == [] and len(cassette.missed) == 1
