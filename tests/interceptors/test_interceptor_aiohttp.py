"""aiohttp sessions: every way of reading a body, tasks, misses, and each request handled once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import openai
import pytest
from fake_provider import FakeProvider
from network_guard import no_network
from openai_features import needs_openai_aiohttp_client

import promptvcr

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
STREAM = {**CHAT, "stream": True}
OFFLINE = "http://127.0.0.1:9"


async def _reads(base: str) -> list[Any]:
    seen: list[Any] = []
    url = f"{base}/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=CHAT) as response:
            seen += [response.status, response.headers["content-type"], (await response.json())["id"]]
        async with session.post(url, json=STREAM) as response:
            lines = []
            while line := await response.content.readline():
                lines.append(line)
            seen.append([line for line in lines if line.strip()][-1])
        async with session.post(url, json=STREAM) as response:
            seen.append(b"".join([chunk async for chunk in response.content.iter_chunked(7)]).count(b"data:"))
        async with session.post(url, json=STREAM) as response:
            seen.append(len([line async for line in response.content]))
        async with session.get(f"{base}/raw/binary") as response:
            seen.append(await response.read() == bytes(range(256)))
        async with session.post(
            f"{base}/v1/chat/completions",
            json={**CHAT, "messages": [{"role": "user", "content": "FAIL 429"}]},
        ) as response:
            seen.append((response.status, response.headers.get("retry-after")))
    return seen


def test_every_read_style_records_then_replays_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    recording = promptvcr.use_cassette(path, record_mode="record", on_record_error="keep")  # the 429 too
    with FakeProvider() as fake, recording as cassette:
        recorded = asyncio.run(_reads(fake.base_url))
    assert len(fake.requests) == len(cassette.played) == 6
    assert recorded[3] == b"data: [DONE]\n" and recorded[6] is True and recorded[7] == (429, "0")
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        assert asyncio.run(_reads(OFFLINE)) == recorded
    assert attempts == [] and {p.outcome for p in replay.played} == {"replayed"}


def test_a_task_spawned_inside_the_block_is_intercepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def spawn() -> BaseException | None:
        async def call() -> None:
            async with aiohttp.ClientSession() as session:
                await session.post(f"{OFFLINE}/v1/chat/completions", json=CHAT)

        task = asyncio.get_running_loop().create_task(call())
        try:
            await task
        except BaseException as error:
            return error
        return None

    caught = pytest.raises(promptvcr.CassetteMiss, match="caught this CassetteMiss")  # spawn() swallowed it
    with (
        no_network(monkeypatch) as attempts,
        caught,
        promptvcr.use_cassette(tmp_path / "empty.yaml") as cassette,
    ):
        error = asyncio.run(spawn())
    assert isinstance(error, promptvcr.CassetteMiss) and attempts == [] and len(cassette.missed) == 1


def test_a_stream_dropped_early_is_recorded_as_far_as_it_arrived(tmp_path: Path) -> None:
    async def drop(base: str) -> bytes:
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{base}/v1/chat/completions", json=STREAM) as r,
        ):
            return await r.content.readline()

    path = tmp_path / "c.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record") as cassette:
        first = asyncio.run(drop(fake.base_url))
    (play,) = cassette.played  # recorded when the response was released, not in the background
    assert play.response is not None and play.response.content.startswith(first)
    assert play.response.end == "closed" or play.response.content.endswith(b"data: [DONE]\n\n")


def test_a_recording_cut_off_by_closing_the_session_keeps_what_arrived(tmp_path: Path) -> None:
    """Closing the whole session mid-stream closes the connection the recording reads from:
    what arrived is recorded as closed early, and replays as far as it was read."""
    import threading

    async def close_early(fake: FakeProvider) -> bytes:
        async with aiohttp.ClientSession() as session:
            response = await session.post(f"{fake.base_url}/v1/chat/completions", json=STREAM)
            line = await response.content.readline()
        fake.hold_stream.set()  # type: ignore[union-attr]
        return line

    path = tmp_path / "cut.yaml"
    with FakeProvider() as fake:
        fake.hold_stream = threading.Event()
        with promptvcr.use_cassette(path, record_mode="record") as cassette:
            first = asyncio.run(close_early(fake))
    (play,) = cassette.played
    assert play.response is not None and play.response.end == "closed"
    assert play.response.content.startswith(first)


async def _sdk_calls(base: str) -> list[Any]:
    """openai and anthropic with their aiohttp clients: httpx2 clients on an aiohttp transport."""
    seen: list[Any] = []
    async with openai.AsyncOpenAI(
        api_key="sk-test", base_url=f"{base}/v1", http_client=openai.DefaultAioHttpClient()
    ) as client:
        seen.append((await client.chat.completions.create(**CHAT)).choices[0].message.content)  # type: ignore[call-overload]
        stream = await client.chat.completions.create(**STREAM)  # type: ignore[call-overload]
        seen.append(
            "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
        )
    async with anthropic.AsyncAnthropic(
        api_key="sk-ant-test", base_url=base, http_client=anthropic.DefaultAioHttpClient()
    ) as claude:
        message = await claude.messages.create(model="claude", max_tokens=20, messages=CHAT["messages"])  # type: ignore[arg-type]
        seen.append(message.content[0].text)  # type: ignore[union-attr]
        async with claude.messages.stream(model="claude", max_tokens=20, messages=CHAT["messages"]) as events:  # type: ignore[arg-type]
            seen.append("".join([text async for text in events.text_stream]))
    return seen


@needs_openai_aiohttp_client
@pytest.mark.parametrize("mode", ["record", "passthrough"])
def test_sdk_aiohttp_clients_are_handled_exactly_once(tmp_path: Path, mode: str) -> None:
    """The httpx2 seam sees these requests first; the aiohttp patch must not see them again."""
    path = tmp_path / "c.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode=mode) as cassette:
        seen = asyncio.run(_sdk_calls(fake.base_url))
    assert seen[0] == "echo 1: hello" and seen[3] == "echo 4: hello"
    assert len(fake.requests) == len(cassette.played) == 4
    assert {p.outcome for p in cassette.played} == {"recorded" if mode == "record" else "passthrough"}


@needs_openai_aiohttp_client
def test_sdk_aiohttp_clients_replay_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        recorded = asyncio.run(_sdk_calls(fake.base_url))
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        assert asyncio.run(_sdk_calls(OFFLINE)) == recorded
    assert attempts == [] and len(replay.played) == 4
