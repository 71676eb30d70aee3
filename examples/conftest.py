"""Clients for the examples: replay needs no API key, recording uses the real one."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import anthropic
import openai
import pytest


@pytest.fixture
def openai_client() -> Iterator[openai.OpenAI]:
    with openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY", "replay-needs-no-key")) as client:
        yield client


@pytest.fixture
async def anthropic_client() -> AsyncIterator[anthropic.AsyncAnthropic]:
    api_key = os.environ.get("ANTHROPIC_API_KEY", "replay-needs-no-key")
    async with anthropic.AsyncAnthropic(api_key=api_key) as client:
        yield client
