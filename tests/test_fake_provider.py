"""Prove the fake provider speaks the real wire formats by driving the real SDKs against it.

No promptvcr here: if these pass, a recording test that fails is failing because of the
recorder, not because the server answered something the SDKs would never see in production.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from fake_provider import FakeProvider
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

GPT = "gpt-4o-mini"
CLAUDE = "claude-fake"
GEMINI = "gemini-2.0-flash"
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
OPENAI_TOOLS: Any = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}}]
ANTHROPIC_TOOLS: Any = [{"name": "get_weather", "description": "Weather", "input_schema": WEATHER_SCHEMA}]


def user(text: str) -> Any:
    return [{"role": "user", "content": text}]


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def oai(fake: FakeProvider) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key="test-key", base_url=fake.openai_base_url, max_retries=0) as client:
        yield client


@pytest.fixture
async def aoai(fake: FakeProvider) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(api_key="test-key", base_url=fake.openai_base_url, max_retries=0) as client:
        yield client


@pytest.fixture
def claude(fake: FakeProvider) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=fake.base_url, max_retries=0) as client:
        yield client


@pytest.fixture
async def aclaude(fake: FakeProvider) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(api_key="test-key", base_url=fake.base_url, max_retries=0) as client:
        yield client


@pytest.fixture
def gem(fake: FakeProvider) -> Iterator[genai.Client]:
    options = genai_types.HttpOptions(base_url=fake.base_url, api_version="v1beta")
    client = genai.Client(api_key="test-key", http_options=options)
    yield client
    client.close()


@pytest.fixture
async def agem(gem: genai.Client) -> AsyncIterator[genai.client.AsyncClient]:
    yield gem.aio
    await gem.aio.aclose()


# --------------------------------------------------------------------------------------------
# OpenAI
# --------------------------------------------------------------------------------------------


def test_openai_chat_sync(fake: FakeProvider, oai: openai.OpenAI) -> None:
    completion = oai.chat.completions.create(model=GPT, messages=user("hello there"))

    assert completion.id == "chatcmpl-fake-1"
    assert completion.model == GPT
    assert completion.choices[0].message.content == "echo 1: hello there"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    usage = completion.usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    [request] = fake.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.json()["messages"] == user("hello there")


def test_identical_requests_get_distinguishable_answers(oai: openai.OpenAI) -> None:
    first, second = (oai.chat.completions.create(model=GPT, messages=user("same")) for _ in range(2))
    assert (first.id, second.id) == ("chatcmpl-fake-1", "chatcmpl-fake-2")
    assert first.choices[0].message.content != second.choices[0].message.content


async def test_openai_chat_async(aoai: openai.AsyncOpenAI) -> None:
    completion = await aoai.chat.completions.create(model=GPT, messages=user("async hi"))
    assert completion.choices[0].message.content == "echo 1: async hi"


def test_openai_stream_sync(oai: openai.OpenAI) -> None:
    raw = oai.chat.completions.with_raw_response.create(
        model=GPT, messages=user("stream me please"), stream=True, stream_options={"include_usage": True}
    )
    chunks = list(raw.parse())

    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.headers["transfer-encoding"] == "chunked"
    assert "content-encoding" not in raw.headers  # streams are never compressed
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 2
    assert "".join(pieces) == "echo 1: stream me please"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


async def test_openai_stream_async(aoai: openai.AsyncOpenAI) -> None:
    stream = await aoai.chat.completions.create(model=GPT, messages=user("async stream"), stream=True)
    pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
    assert "".join(pieces) == "echo 1: async stream"


def test_openai_tool_call_then_tool_result(oai: openai.OpenAI) -> None:
    completion = oai.chat.completions.create(model=GPT, messages=user("weather?"), tools=OPENAI_TOOLS)
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    [call] = message.tool_calls
    assert call.id == "call_fake_1"
    assert call.type == "function" and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "weather?", "days": 1}

    # The last message is a tool result, not a user message: the model answers with text.
    history: Any = [
        *user("weather?"),
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
    ]
    follow_up = oai.chat.completions.create(model=GPT, messages=history, tools=OPENAI_TOOLS)
    assert follow_up.choices[0].message.content == "echo 2: weather?"


def test_openai_streamed_tool_call(oai: openai.OpenAI) -> None:
    stream = oai.chat.completions.create(
        model=GPT, messages=user("weather?"), tools=OPENAI_TOOLS, stream=True
    )
    deltas = [c.choices[0] for c in stream]

    calls = [tc for d in deltas for tc in d.delta.tool_calls or []]
    assert calls[0].id == "call_fake_1" and calls[0].function and calls[0].function.name == "get_weather"
    arguments = "".join(tc.function.arguments or "" for tc in calls if tc.function)
    assert len(calls) > 2  # the arguments arrive in several fragments
    assert json.loads(arguments) == {"city": "weather?", "days": 1}
    assert deltas[-1].finish_reason == "tool_calls"


def test_openai_embeddings_base64_and_float_agree(fake: FakeProvider, oai: openai.OpenAI) -> None:
    default = oai.embeddings.create(model="text-embedding-3-small", input=["alpha", "beta"])
    floats = oai.embeddings.create(
        model="text-embedding-3-small", input=["alpha", "beta"], encoding_format="float"
    )

    # The SDK asks for base64 by default and decodes it itself.
    assert [r.json()["encoding_format"] for r in fake.requests] == ["base64", "float"]
    assert [e.embedding for e in default.data] == [e.embedding for e in floats.data]
    assert len(default.data) == 2 and len(default.data[0].embedding) == 8
    assert default.data[0].embedding != default.data[1].embedding


async def test_openai_embeddings_async(aoai: openai.AsyncOpenAI) -> None:
    result = await aoai.embeddings.create(model="text-embedding-3-small", input="gamma")
    assert len(result.data[0].embedding) == 8


async def test_openai_with_aiohttp_transport(fake: FakeProvider) -> None:
    async with openai.AsyncOpenAI(
        api_key="test-key",
        base_url=fake.openai_base_url,
        max_retries=0,
        http_client=openai.DefaultAioHttpClient(),
    ) as client:
        completion = await client.chat.completions.create(model=GPT, messages=user("via aiohttp"))
        stream = await client.chat.completions.create(model=GPT, messages=user("aiohttp stream"), stream=True)
        pieces = [c.choices[0].delta.content or "" async for c in stream]

    assert completion.choices[0].message.content == "echo 1: via aiohttp"
    assert "".join(pieces) == "echo 2: aiohttp stream"


# --------------------------------------------------------------------------------------------
# Anthropic
# --------------------------------------------------------------------------------------------


def test_anthropic_create_sync(fake: FakeProvider, claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(model=CLAUDE, max_tokens=64, messages=user("hi claude"))

    assert message.id == "msg_fake_1"
    assert message.model == CLAUDE and message.role == "assistant"
    assert message.content[0].type == "text" and message.content[0].text == "echo 1: hi claude"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0
    assert message._request_id  # the SDK picked up the volatile request-id header
    headers = fake.requests[0].headers
    assert "anthropic-version" in headers
    assert headers.get("x-api-key") == "test-key" or headers["authorization"] == "Bearer test-key"


async def test_anthropic_create_async(aclaude: anthropic.AsyncAnthropic) -> None:
    message = await aclaude.messages.create(model=CLAUDE, max_tokens=64, messages=user("async claude"))
    assert message.content[0].type == "text" and message.content[0].text == "echo 1: async claude"


def test_anthropic_stream_helper_sync(claude: anthropic.Anthropic) -> None:
    with claude.messages.stream(model=CLAUDE, max_tokens=64, messages=user("stream claude")) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()

    assert len(pieces) > 2 and "".join(pieces) == "echo 1: stream claude"
    assert final.content[0].type == "text" and final.content[0].text == "echo 1: stream claude"
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == 4


async def test_anthropic_stream_helper_async(aclaude: anthropic.AsyncAnthropic) -> None:
    async with aclaude.messages.stream(model=CLAUDE, max_tokens=64, messages=user("async s")) as stream:
        pieces = [text async for text in stream.text_stream]
    assert "".join(pieces) == "echo 1: async s"


def test_anthropic_create_stream_event_sequence(claude: anthropic.Anthropic) -> None:
    events = list(
        claude.messages.create(model=CLAUDE, max_tokens=64, messages=user("raw events"), stream=True)
    )
    kinds = [e.type for e in events]

    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert set(kinds[2:-3]) == {"content_block_delta"}  # the SDK swallows `ping`
    deltas = [e.delta for e in events if e.type == "content_block_delta"]
    assert "".join(d.text for d in deltas if d.type == "text_delta") == "echo 1: raw events"


def test_anthropic_tool_use_then_tool_result(claude: anthropic.Anthropic) -> None:
    message = claude.messages.create(
        model=CLAUDE, max_tokens=64, messages=user("weather?"), tools=ANTHROPIC_TOOLS
    )
    [block] = message.content
    assert message.stop_reason == "tool_use"
    assert block.type == "tool_use" and block.id == "toolu_fake_1" and block.name == "get_weather"
    assert block.input == {"city": "weather?", "days": 1}

    result: Any = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": block.id, "content": "sunny"}],
    }
    history: Any = [*user("weather?"), {"role": "assistant", "content": message.content}, result]
    follow_up = claude.messages.create(model=CLAUDE, max_tokens=64, messages=history, tools=ANTHROPIC_TOOLS)
    assert follow_up.content[0].type == "text" and follow_up.content[0].text == "echo 2: sunny"


async def test_anthropic_streamed_tool_use(aclaude: anthropic.AsyncAnthropic) -> None:
    async with aclaude.messages.stream(
        model=CLAUDE, max_tokens=64, messages=user("weather?"), tools=ANTHROPIC_TOOLS
    ) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_message()

    assert kinds.count("input_json") > 1  # partial JSON arrived in several input_json_delta events
    assert final.content[0].type == "tool_use" and final.content[0].input == {"city": "weather?", "days": 1}


# --------------------------------------------------------------------------------------------
# Gemini (google-genai)
# --------------------------------------------------------------------------------------------


def test_gemini_generate_sync(fake: FakeProvider, gem: genai.Client) -> None:
    response = gem.models.generate_content(model=GEMINI, contents="hi gemini")

    assert response.text == "echo 1: hi gemini"
    assert response.usage_metadata is not None and response.usage_metadata.total_token_count == 6
    assert response.candidates and response.candidates[0].finish_reason == genai_types.FinishReason.STOP
    [request] = fake.requests
    assert request.path == f"/v1beta/models/{GEMINI}:generateContent"
    assert request.headers["x-goog-api-key"] == "test-key"


def test_gemini_stream_sync(fake: FakeProvider, gem: genai.Client) -> None:
    pieces = [chunk.text for chunk in gem.models.generate_content_stream(model=GEMINI, contents="stream gem")]
    assert len(pieces) > 2 and "".join(p or "" for p in pieces) == "echo 1: stream gem"
    assert fake.requests[0].path == f"/v1beta/models/{GEMINI}:streamGenerateContent?alt=sse"


async def test_gemini_generate_and_stream_async(agem: genai.client.AsyncClient) -> None:
    response = await agem.models.generate_content(model=GEMINI, contents="async gem")
    stream = await agem.models.generate_content_stream(model=GEMINI, contents="async stream")
    pieces = [chunk.text or "" async for chunk in stream]

    assert response.text == "echo 1: async gem"
    assert "".join(pieces) == "echo 2: async stream"


def test_gemini_function_call(gem: genai.Client) -> None:
    declaration = genai_types.FunctionDeclaration(name="get_weather", parameters_json_schema=WEATHER_SCHEMA)
    config = genai_types.GenerateContentConfig(tools=[genai_types.Tool(function_declarations=[declaration])])
    response = gem.models.generate_content(model=GEMINI, contents="weather?", config=config)

    assert response.function_calls is not None
    [call] = response.function_calls
    assert call.name == "get_weather" and call.args == {"city": "weather?", "days": 1}


# --------------------------------------------------------------------------------------------
# Cross-cutting behaviour: gzip, failures, streaming order, slowness
# --------------------------------------------------------------------------------------------


def test_gzip_applied_and_parsed(fake: FakeProvider, oai: openai.OpenAI, claude: anthropic.Anthropic) -> None:
    chat = oai.chat.completions.with_raw_response.create(model=GPT, messages=user("zip"))
    message = claude.messages.with_raw_response.create(model=CLAUDE, max_tokens=8, messages=user("zip"))

    assert all("gzip" in r.headers["accept-encoding"] for r in fake.requests)
    assert chat.headers["content-encoding"] == message.headers["content-encoding"] == "gzip"
    assert chat.parse().choices[0].message.content == "echo 1: zip"
    first = message.parse().content[0]
    assert first.type == "text" and first.text == "echo 2: zip"


def test_no_gzip_without_accept_encoding(fake: FakeProvider) -> None:
    response = httpx2.get(fake.base_url + "/raw/json", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in response.headers
    assert response.json()["city"] == "Zürich"


def test_fail_429_raises_rate_limit_errors(
    fake: FakeProvider, oai: openai.OpenAI, claude: anthropic.Anthropic, gem: genai.Client
) -> None:
    with pytest.raises(openai.RateLimitError) as oai_error:
        oai.chat.completions.create(model=GPT, messages=user("FAIL 429"))
    with pytest.raises(anthropic.RateLimitError) as claude_error:
        claude.messages.create(model=CLAUDE, max_tokens=8, messages=user("FAIL 429"))
    with pytest.raises(genai_errors.ClientError) as gem_error:
        gem.models.generate_content(model=GEMINI, contents="FAIL 429")

    assert oai_error.value.code == "rate_limit_exceeded"
    assert oai_error.value.response.headers["retry-after"] == "0"
    assert claude_error.value.body == {
        "type": "error",
        "error": {
            "type": "rate_limit_error",
            "message": "Fake provider failure 429 (requested by FAIL 429).",
        },
        "request_id": "req_fake_2",
    }
    assert gem_error.value.code == 429 and gem_error.value.status == "RESOURCE_EXHAUSTED"
    assert len(fake.requests) == 3  # max_retries=0 and google-genai's default: no retries


def test_fail_5xx_maps_to_server_errors_and_retries_are_instant(
    fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anthropic")
    client = anthropic.Anthropic(api_key="test-key", base_url=fake.base_url, max_retries=2)
    with client, pytest.raises(anthropic.OverloadedError):
        client.messages.create(model=CLAUDE, max_tokens=8, messages=user("FAIL 529"))
    assert len(fake.requests) == 3
    # Instant: the SDK says it waits next to nothing before each retry (retry-after: 0), not its
    # own backoff (0.5 s and up); what it says it waits, not how long a loaded machine took.
    found = [re.search(r"in ([0-9.]+) seconds", record.getMessage()) for record in caplog.records]
    waits = [float(wait.group(1)) for wait in found if wait is not None]
    assert len(waits) == 2 and all(wait < 0.1 for wait in waits), waits
    oai = openai.OpenAI(api_key="test-key", base_url=fake.openai_base_url, max_retries=0)
    with oai, pytest.raises(openai.InternalServerError):
        oai.chat.completions.create(model=GPT, messages=user("FAIL 500"))


def test_hold_stream_openai_first_chunk_arrives_before_last_is_sent(
    fake: FakeProvider, oai: openai.OpenAI
) -> None:
    fake.hold_stream = threading.Event()
    started = time.monotonic()
    stream = oai.chat.completions.create(model=GPT, messages=user("held back"), stream=True)
    first = next(iter(stream))

    # The server is parked until we set the event: had anything buffered the stream, we would
    # only get here after the 10 s hold timeout.
    assert time.monotonic() - started < 5
    assert first.choices[0].delta.role == "assistant"
    fake.hold_stream.set()
    rest = [c.choices[0].delta.content or "" for c in stream]
    assert "".join(rest) == "echo 1: held back"


async def test_hold_stream_anthropic_async(fake: FakeProvider, aclaude: anthropic.AsyncAnthropic) -> None:
    fake.hold_stream = threading.Event()
    started = time.monotonic()
    stream = await aclaude.messages.create(model=CLAUDE, max_tokens=8, messages=user("held"), stream=True)
    iterator = stream.__aiter__()
    first = await iterator.__anext__()

    assert time.monotonic() - started < 5 and first.type == "message_start"
    fake.hold_stream.set()
    kinds = [event.type async for event in iterator]
    assert kinds[-1] == "message_stop"


def test_hold_stream_gemini(fake: FakeProvider, gem: genai.Client) -> None:
    fake.hold_stream = threading.Event()
    started = time.monotonic()
    stream = gem.models.generate_content_stream(model=GEMINI, contents="held gem")
    first = next(stream)

    assert time.monotonic() - started < 5 and first.text == "echo "
    fake.hold_stream.set()
    assert "".join(chunk.text or "" for chunk in stream) == "1: held gem"


def test_slow_stream_waits_between_events(oai: openai.OpenAI) -> None:
    started = time.monotonic()
    chunks = list(oai.chat.completions.create(model=GPT, messages=user("SLOW"), stream=True))
    # role + 3 words + finish + [DONE] = 6 events, 5 gaps of 0.05 s
    assert len(chunks) == 5 and time.monotonic() - started >= 0.25


def test_chunk_delay_applies_to_every_stream() -> None:
    with FakeProvider(chunk_delay=0.01) as fake, httpx2.Client() as client:
        started = time.monotonic()
        body = {"model": GPT, "messages": user("a b"), "stream": True}
        with client.stream("POST", fake.openai_base_url + "/chat/completions", json=body) as response:
            events = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and time.monotonic() - started >= 0.01 * (len(events) - 1)


# --------------------------------------------------------------------------------------------
# Raw endpoints, HTTP/1.1 plumbing and lifecycle
# --------------------------------------------------------------------------------------------


def test_raw_endpoints(fake: FakeProvider) -> None:
    with httpx2.Client(base_url=fake.base_url) as client:
        text = client.get("/raw/text")
        binary = client.get("/raw/binary")
        data = client.get("/raw/json")
        cookie = client.get("/raw/set-cookie")
        missing = client.post("/nope?x=1", json={})

    assert text.headers["content-type"].startswith("text/plain") and text.text.count("\n") == 3
    assert binary.headers["content-type"] == "application/octet-stream" and binary.content == bytes(
        range(256)
    )
    assert data.json()["greeting"] == "héllo wörld" and data.headers["content-encoding"] == "gzip"
    assert cookie.headers["set-cookie"].startswith("session=fake-4")
    assert missing.status_code == 404 and "POST /nope?x=1" in missing.json()["error"]["message"]
    assert fake.requests[-1].path == "/nope?x=1"


def test_volatile_headers_present_and_changing(oai: openai.OpenAI) -> None:
    first, second = (
        oai.chat.completions.with_raw_response.create(model=GPT, messages=user("v")) for _ in range(2)
    )
    for name in (
        "x-request-id",
        "date",
        "openai-processing-ms",
        "x-ratelimit-remaining-requests",
        "set-cookie",
    ):
        assert name in first.headers and name in second.headers
    assert first.headers["set-cookie"].startswith("__cf_bm=")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert first.headers["set-cookie"] != second.headers["set-cookie"]


def test_echo_reads_large_and_chunked_bodies(fake: FakeProvider) -> None:
    big = bytes(range(256)) * 20_000  # ~5 MB
    with httpx2.Client(base_url=fake.base_url) as client:
        whole = client.post("/raw/echo", content=big, headers={"content-type": "application/x-big"})
        chunked = client.post("/raw/echo", content=iter([b"part one, ", b"part two"]))

    assert whole.content == big and whole.headers["content-type"] == "application/x-big"
    assert fake.requests[1].headers["transfer-encoding"] == "chunked"
    assert chunked.content == b"part one, part two"


def test_keep_alive_serves_several_requests_on_one_connection(fake: FakeProvider) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", int(fake.base_url.rsplit(":", 1)[1]))
    try:
        bodies = []
        for path in ("/raw/json", "/raw/text", "/raw/binary"):
            connection.request("GET", path)
            sock = connection.sock
            bodies.append(connection.getresponse().read())
            assert connection.sock is sock  # not reconnected: the response was framed correctly
    finally:
        connection.close()
    assert bodies[2] == bytes(range(256))


def test_stop_closes_idle_keep_alive_connections_and_joins() -> None:
    fake = FakeProvider().start()
    port = int(fake.base_url.rsplit(":", 1)[1])
    with httpx2.Client() as client:  # still holding an idle keep-alive connection at stop()
        client.get(fake.base_url + "/raw/text")
        started = time.monotonic()
        fake.stop()
        assert time.monotonic() - started < 2

    assert not [t for t in threading.enumerate() if t.name.startswith("fake-provider")]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_client_hanging_up_mid_stream_is_quiet(fake: FakeProvider, capfd: pytest.CaptureFixture[str]) -> None:
    fake.hold_stream = threading.Event()
    with httpx2.Client(base_url=fake.openai_base_url) as client:
        body = {"model": GPT, "messages": user("bye"), "stream": True}
        with client.stream("POST", "/chat/completions", json=body) as response:
            next(response.iter_raw())
        # The response is closed: the server now writes the rest into a dead connection.
        fake.hold_stream.set()
        time.sleep(0.05)
        assert client.get(fake.base_url + "/raw/text").status_code == 200  # still serving

    assert capfd.readouterr().err == ""
