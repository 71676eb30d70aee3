"""google-genai's async client (aiohttp underneath) gets a miss as CassetteMiss, at once.

The other SDKs and google-genai's sync client are in ``test_misses.py``; this one goes
through the aiohttp interceptor, and google-genai retries aiohttp errors of its own.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import sdk_calls
from google import genai
from google.genai import types

import promptvcr


def test_a_gemini_async_miss_is_not_retried_nor_wrapped(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n")
    client = genai.Client(
        api_key="gk-test", http_options=types.HttpOptions(base_url=sdk_calls.OFFLINE, api_version="v1beta")
    )

    async def ask() -> None:
        await client.aio.models.generate_content(model="gemini-2.0-flash", contents="never recorded")

    started = time.perf_counter()
    with pytest.raises(promptvcr.CassetteMiss) as miss, promptvcr.use_cassette(path) as cassette:
        asyncio.run(ask())
    assert time.perf_counter() - started < 3.0  # loose: the count below shows no retry
    assert type(miss.value) is promptvcr.CassetteMiss
    assert miss.value.cassette == path
    assert len(cassette.missed) == 1 and cassette.played == []  # one request, no retry
