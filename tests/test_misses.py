"""A miss reaches the test as CassetteMiss, at once, through every SDK's retry logic."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import sdk_calls
from google import genai
from google.genai import types

import promptvcr

MESSAGES = [{"role": "user", "content": "never recorded"}]


def gemini_generate() -> None:
    client = genai.Client(
        api_key="AIza-test-SECRET",
        http_options=types.HttpOptions(base_url=sdk_calls.OFFLINE, api_version="v1beta"),
    )
    client.models.generate_content(model="gemini-2.0-flash", contents="never recorded")


def _calls():  # type: ignore[no-untyped-def]
    async def openai_async() -> None:
        await sdk_calls.openai_async(sdk_calls.OFFLINE).chat.completions.create(model="m", messages=MESSAGES)

    async def anthropic_async() -> None:
        await sdk_calls.anthropic_async(sdk_calls.OFFLINE).messages.create(
            model="c", max_tokens=5, messages=MESSAGES
        )

    return {
        "openai": lambda: sdk_calls.openai_client(sdk_calls.OFFLINE).chat.completions.create(
            model="m", messages=MESSAGES
        ),
        "openai-async": lambda: asyncio.run(openai_async()),
        "anthropic": lambda: sdk_calls.anthropic_client(sdk_calls.OFFLINE).messages.create(
            model="c", max_tokens=5, messages=MESSAGES
        ),
        "anthropic-async": lambda: asyncio.run(anthropic_async()),
        # google-genai's async client talks aiohttp directly: see the aiohttp interceptor's tests.
        "gemini": gemini_generate,
    }


@pytest.mark.parametrize("sdk", list(_calls()))
def test_a_miss_is_not_retried_nor_wrapped_by_the_sdk(tmp_path: Path, sdk: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n")
    started = time.perf_counter()
    with pytest.raises(promptvcr.CassetteMiss) as miss, promptvcr.use_cassette(path) as cassette:
        _calls()[sdk]()
    # The count shows the SDK did not retry; the time bound, loose for a loaded host, a hang.
    assert time.perf_counter() - started < 3.0
    assert type(miss.value) is promptvcr.CassetteMiss
    assert miss.value.cassette == path
    assert len(cassette.missed) == 1 and cassette.played == []  # one request, one miss


def test_replay_without_a_cassette_file_says_so_and_how_to_record(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(promptvcr.CassetteMiss) as miss, promptvcr.use_cassette(path):
        sdk_calls.openai_client(sdk_calls.OFFLINE).chat.completions.create(model="m", messages=MESSAGES)
    assert str(miss.value) == (
        f"promptvcr: cassette {path} does not exist, so nothing can be replayed from it.\n"
        "  request: POST http://127.0.0.1:9/v1/chat/completions\n"
        '  body:    model=m, 1 messages, last: {"role": "user", "content": "never recorded"}\n'
        "To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: --record-mode=record)."
    )
    assert not path.exists()


def test_a_miss_names_the_nearest_request_and_the_fields_that_differ(tmp_path: Path, provider) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "near.yaml"
    with promptvcr.use_cassette(path, record_mode="record"):
        client = sdk_calls.openai_client(provider.base_url)
        client.embeddings.create(model="text-embedding-3-small", input="vector")
        client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hello"}], temperature=0
        )
    url = f"{provider.base_url}/v1/chat/completions"

    with pytest.raises(promptvcr.CassetteMiss) as miss, promptvcr.use_cassette(path):
        sdk_calls.openai_client(sdk_calls.OFFLINE).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Hello there"}], temperature=0.0
        )
    assert str(miss.value) == (
        f"promptvcr: no recorded request in {path} matches this one (record mode: replay).\n"
        "  request: POST http://127.0.0.1:9/v1/chat/completions\n"
        '  body:    model=gpt-4o-mini, 1 messages, last: {"role": "user", "content": "Hello there"}\n'
        "Why it missed: the prompt changed (system, user or assistant text): messages[0].content\n"
        "Why it missed: parameters changed: model\n"
        f"Nearest recorded request: interactions[1] POST {url}\n"
        "  differs at (recorded -> sent):\n"
        '    messages[0].content: "Hello" -> "Hello there"\n'
        '    model: "gpt-4o" -> "gpt-4o-mini"\n'
        "To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: --record-mode=record)."
    )
