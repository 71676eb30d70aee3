"""Misses never disappear, whatever a framework does with them: the real frameworks on loopback.

LangChain's ``ainvoke``/``abatch`` gather results and filter only ``Exception``, so the
``BaseException`` miss comes back as a result and fails as ``AttributeError: 'CassetteMiss'
object has no attribute 'generations'``. The cassette still counts the miss, adds it to that
error's notes, and the pytest plugin shows the miss (``tests/pytest_plugin``). Code that
catches the miss and returns normally gets it again as the cassette exits.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no model-cost download at import

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fake_provider import FakeProvider
from openai import AsyncOpenAI

import promptvcr

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

OFFLINE = "http://127.0.0.1:9"

#: The frameworks only the framework tests drive: imported by the worker that runs this module's
#: tests (a module fixture, before any cassette), not at collection by every worker.
FRAMEWORK_MODULES = ("litellm", "langchain_openai", "agents", "pydantic_ai.models.openai")


@pytest.fixture(scope="module", autouse=True)
def _frameworks_imported() -> None:
    for name in FRAMEWORK_MODULES:
        importlib.import_module(name)
    from agents import set_tracing_disabled

    set_tracing_disabled(True)


def _chat(base: str) -> ChatOpenAI:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4o-mini", base_url=f"{base}/v1", api_key="sk-test", max_retries=0)  # type: ignore[arg-type]


async def langchain_ainvoke(base: str, prompt: str) -> list[str]:
    return [str((await _chat(base).ainvoke(prompt)).content)]


async def langchain_astream(base: str, prompt: str) -> list[str]:
    return ["".join([str(chunk.content) async for chunk in _chat(base).astream(prompt)])]


async def langchain_abatch(base: str, prompt: str) -> list[str]:
    return [str(reply.content) for reply in await _chat(base).abatch([f"{prompt} one", f"{prompt} two"])]


async def litellm_acompletion(base: str, prompt: str) -> list[str]:
    import litellm

    reply = await litellm.acompletion(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": prompt}],
        api_base=f"{base}/v1",
        api_key="sk-test",
        num_retries=0,
    )
    return [str(reply.choices[0].message.content)]


async def openai_agents(base: str, prompt: str) -> list[str]:
    from agents import Agent as AgentsAgent
    from agents import OpenAIChatCompletionsModel, Runner

    client = AsyncOpenAI(base_url=f"{base}/v1", api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    result = await Runner.run(AgentsAgent(name="brief", instructions="Be brief.", model=model), prompt)
    return [str(result.final_output)]


async def pydantic_ai(base: str, prompt: str) -> list[str]:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=f"{base}/v1", api_key="sk-test")
    result = await PydanticAgent(OpenAIChatModel("gpt-4o-mini", provider=provider)).run(prompt)
    return [str(result.output)]


#: Each framework call, and the requests it sends.
FRAMEWORKS: dict[str, tuple[Callable[[str, str], Awaitable[list[str]]], int]] = {
    "langchain ainvoke": (langchain_ainvoke, 1),
    "langchain astream": (langchain_astream, 1),
    "langchain abatch": (langchain_abatch, 2),
    "litellm acompletion": (litellm_acompletion, 1),
    "openai-agents": (openai_agents, 1),
    "pydantic-ai": (pydantic_ai, 1),
}


def _record(path: Path, name: str, provider: FakeProvider) -> list[str]:
    call, count = FRAMEWORKS[name]
    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        answers = asyncio.run(call(provider.base_url, "recorded question"))
    assert [play.outcome for play in cassette.played] == ["recorded"] * count
    assert len(provider.requests) == count
    return answers


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_each_framework_replays_and_its_miss_is_never_lost(
    name: str, tmp_path: Path, provider: FakeProvider
) -> None:
    call, count = FRAMEWORKS[name]
    path = tmp_path / "c.yaml"
    recorded = _record(path, name, provider)
    with promptvcr.use_cassette(path) as cassette:
        assert asyncio.run(call(OFFLINE, "recorded question")) == recorded
    assert [play.outcome for play in cassette.played] == ["replayed"] * count

    # A question never recorded: whatever the framework raises, the miss is in it.
    with pytest.raises(BaseException) as raised, promptvcr.use_cassette(path) as cassette:
        asyncio.run(call(OFFLINE, "another question"))
    # abatch may stop at its first failed call: one or both of its requests missed, each counted.
    assert 1 <= len(cassette.missed) <= count and cassette.played == []
    error = raised.value
    shown = "\n".join([str(error), *getattr(error, "__notes__", [])])
    assert f"no recorded request in {path} matches this one" in shown, shown
    assert "another question" in shown
    if not isinstance(error, promptvcr.CassetteMiss):  # the framework turned it into its own error
        assert name in ("langchain ainvoke", "langchain abatch"), f"{name}: {type(error).__name__}"
        assert "promptvcr: " in error.__notes__[0] and "request(s) missed a cassette" in error.__notes__[0]


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_miss_the_code_swallows_is_raised_as_the_cassette_exits(name: str, tmp_path: Path) -> None:
    call, count = FRAMEWORKS[name]
    path = tmp_path / "empty.yaml"
    path.write_text("interactions: []\nversion: 1\n")

    async def tolerant() -> str:
        try:
            await call(OFFLINE, "never recorded")
        except BaseException:  # an application that swallows everything
            return "fallback"
        return "answered"

    caught = pytest.raises(
        promptvcr.CassetteMiss, match=r"caught this CassetteMiss and went on \(\d+ request"
    )
    with caught as raised, promptvcr.use_cassette(path) as cassette:
        assert asyncio.run(tolerant()) == "fallback"
    assert 1 <= len(cassette.missed) <= count
    assert f"went on ({len(cassette.missed)} request" in str(raised.value)
    assert str(raised.value).startswith(f"promptvcr: no recorded request in {path} matches this one")
