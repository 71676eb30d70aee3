"""Recording real SDK traffic from a loopback server, then replaying it with the server gone."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path

import httpx
import httpx2
import openai
import pytest
import sdk_calls
from fake_provider import FakeProvider
from openai_features import needs_openai_aiohttp_client

import promptvcr
from promptvcr import RecordMode
from promptvcr.files import fileformat


def record_then_replay(tmp_path: Path, call, *, is_async: bool = False):  # type: ignore[no-untyped-def]
    """Run ``call`` against a live server in record mode, then offline in replay mode."""
    path = tmp_path / "cassette.yaml"

    def run(base_url: str):  # type: ignore[no-untyped-def]
        return asyncio.run(call(base_url)) if is_async else call(base_url)

    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record") as recording:
        recorded = run(server.base_url)
        served = len(server.requests)
    with promptvcr.use_cassette(path) as replaying:
        replayed = run(sdk_calls.OFFLINE)
    return recorded, replayed, served, recording, replaying


@pytest.mark.parametrize(
    ("call", "is_async"),
    [
        (sdk_calls.openai_chat, False),
        (sdk_calls.openai_chat_async, True),
        (sdk_calls.anthropic_messages, False),
        (sdk_calls.anthropic_messages_async, True),
        (sdk_calls.gemini_generate, False),
        (sdk_calls.gemini_generate_async, True),
    ],
    ids=["openai-sync", "openai-async", "anthropic-sync", "anthropic-async", "gemini-sync", "gemini-async"],
)
def test_sdk_traffic_replays_exactly_what_was_recorded(tmp_path: Path, call, is_async: bool) -> None:  # type: ignore[no-untyped-def]
    recorded, replayed, served, recording, replaying = record_then_replay(tmp_path, call, is_async=is_async)

    assert replayed == recorded
    assert [play.outcome for play in recording.played] == ["recorded"] * served
    assert [play.outcome for play in replaying.played] == ["replayed"] * served
    assert replaying.all_played


def test_identical_requests_replay_their_answers_in_recorded_order(
    tmp_path: Path, provider: FakeProvider
) -> None:
    path = tmp_path / "repeat.yaml"

    def ask_twice(base_url: str) -> list[str]:
        client = sdk_calls.openai_client(base_url)
        messages = [{"role": "user", "content": "same question"}]
        return [
            client.chat.completions.create(model="m", messages=messages).choices[0].message.content
            for _ in "ab"
        ]

    with promptvcr.use_cassette(path, record_mode="record"):
        recorded = ask_twice(provider.base_url)
    assert recorded == ["echo 1: same question", "echo 2: same question"]
    with promptvcr.use_cassette(path):
        assert ask_twice(sdk_calls.OFFLINE) == recorded


def test_one_request_too_many_is_a_miss_unless_repeats_are_allowed(
    tmp_path: Path, provider: FakeProvider
) -> None:
    path = tmp_path / "once.yaml"
    messages = [{"role": "user", "content": "only once"}]
    with promptvcr.use_cassette(path, record_mode="record"):
        sdk_calls.openai_client(provider.base_url).chat.completions.create(model="m", messages=messages)

    client = sdk_calls.openai_client(sdk_calls.OFFLINE)
    with pytest.raises(promptvcr.CassetteMiss) as miss, promptvcr.use_cassette(path):
        client.chat.completions.create(model="m", messages=messages)
        client.chat.completions.create(model="m", messages=messages)
    assert "recorded 1 time(s)" in str(miss.value)
    assert "allow_playback_repeats=True" in str(miss.value)

    with promptvcr.use_cassette(path, allow_playback_repeats=True) as cassette:
        answers = [
            client.chat.completions.create(model="m", messages=messages).choices[0].message.content
            for _ in "abc"
        ]
    assert answers == ["echo 1: only once"] * 3
    assert [play.outcome for play in cassette.played] == ["replayed"] * 3


def test_record_mode_appends_and_keeps_what_the_cassette_held(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "grow.yaml"
    client = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(path, record_mode="record"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "first"}])
    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "first"}])
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "second"}])
    assert [play.outcome for play in cassette.played] == ["replayed", "recorded"]
    assert len(provider.requests) == 2
    with promptvcr.use_cassette(path) as replay:
        assert len(replay.interactions) == 2


def test_rewrite_replaces_what_it_re_recorded_but_not_when_the_body_failed(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """Issue 42: a rewrite replaces the interactions it re-recorded, keeps the others (another
    test's, in a shared cassette), and a body that failed leaves the file as it was and its
    recordings aside, beside it."""
    path = tmp_path / "rewrite.yaml"
    client = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(path, record_mode="record"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "old one"}])
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "old two"}])
    before = path.read_text()

    with pytest.raises(ZeroDivisionError), promptvcr.use_cassette(path, record_mode="rewrite") as failed:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
        1 / 0  # noqa: B018
    assert path.read_text() == before
    aside = tmp_path / "rewrite.rerecorded.yaml"
    assert failed.saved.aside == aside and failed.saved.aside_count == 1 and failed.saved.written == 0
    assert [i.request.content for i in fileformat.loads(aside.read_text(), aside)] == [
        failed.played[0].request.content
    ]

    with promptvcr.use_cassette(path, record_mode=RecordMode.REWRITE) as cassette:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "old two"}])
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "new"}])
    assert [play.outcome for play in cassette.played] == ["recorded", "recorded"]
    assert cassette.saved.written == 2
    with promptvcr.use_cassette(path) as replay:
        asked = [json.loads(i.request.content)["messages"][0]["content"] for i in replay.interactions]
    assert asked == ["old one", "old two", "new"]


def test_passthrough_sends_everything_and_writes_nothing(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "pass.yaml"
    with promptvcr.use_cassette(path, record_mode="passthrough") as cassette:
        sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert [play.outcome for play in cassette.played] == ["passthrough"]
    assert not path.exists()


def test_streams_reach_the_application_while_recording_not_after(
    tmp_path: Path, provider: FakeProvider
) -> None:
    """The first chunk arrives while the server still holds back the rest of the stream."""
    import threading

    provider.hold_stream = threading.Event()
    client = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(tmp_path / "s.yaml", record_mode="record"):
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "a b c"}], stream=True
        )
        first = next(iter(stream))
        assert first.choices[0].delta.role == "assistant"
        assert not provider.hold_stream.is_set()
        provider.hold_stream.set()
        rest = [chunk.choices[0].delta.content for chunk in stream if chunk.choices]
    assert "".join(piece or "" for piece in rest) == "echo 1: a b c"


def test_async_stream_reaches_the_application_while_recording(tmp_path: Path, provider: FakeProvider) -> None:
    import threading

    provider.hold_stream = threading.Event()

    async def run() -> str:
        client = sdk_calls.anthropic_async(provider.base_url)
        stream = await client.messages.create(
            model="c", max_tokens=9, messages=[{"role": "user", "content": "x y"}], stream=True
        )
        iterator = stream.__aiter__()
        first = await iterator.__anext__()
        assert first.type == "message_start"
        assert not provider.hold_stream.is_set()
        provider.hold_stream.set()
        text = [e.delta.text async for e in iterator if e.type == "content_block_delta"]
        await client.close()
        return "".join(text)

    with promptvcr.use_cassette(tmp_path / "a.yaml", record_mode="record"):
        assert asyncio.run(run()) == "echo 1: x y"


def test_clients_created_before_the_cassette_are_intercepted(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "early.yaml"
    early = sdk_calls.openai_client(provider.base_url)
    with promptvcr.use_cassette(path, record_mode="record"):
        recorded = early.chat.completions.create(model="m", messages=[{"role": "user", "content": "early"}])
    offline_early = sdk_calls.openai_client(sdk_calls.OFFLINE)
    with promptvcr.use_cassette(path):
        replayed = offline_early.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "early"}]
        )
    assert replayed.choices[0].message.content == recorded.choices[0].message.content


@needs_openai_aiohttp_client
def test_openai_aiohttp_client_is_intercepted(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "aio.yaml"

    async def ask(base_url: str) -> str:
        async with openai.AsyncOpenAI(
            api_key="sk-test-key", base_url=f"{base_url}/v1", http_client=openai.DefaultAioHttpClient()
        ) as client:
            reply = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "aio"}]
            )
            return str(reply.choices[0].message.content)

    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        recorded = asyncio.run(ask(provider.base_url))
    assert [play.outcome for play in cassette.played] == ["recorded"]
    with promptvcr.use_cassette(path):
        assert asyncio.run(ask(sdk_calls.OFFLINE)) == recorded == "echo 1: aio"


def test_legacy_httpx_client_goes_through_respx(tmp_path: Path, provider: FakeProvider) -> None:
    """openai>=3 still accepts an ``httpx.Client``; its traffic is recorded and replayed too."""
    path = tmp_path / "legacy.yaml"

    def ask(base_url: str) -> str:
        client = sdk_calls.openai_client(base_url, http_client=httpx.Client())
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "legacy"}], stream=True
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)

    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        recorded = ask(provider.base_url)
    assert [play.outcome for play in cassette.played] == ["recorded"]
    with promptvcr.use_cassette(path):
        assert ask(sdk_calls.OFFLINE) == recorded == "echo 1: legacy"

    with httpx.Client() as plain, pytest.raises(promptvcr.CassetteMiss), promptvcr.use_cassette(path):
        plain.get("http://127.0.0.1:9/not-recorded")


async def test_async_legacy_httpx_client(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "legacy-async.yaml"
    async with promptvcr.use_cassette(path, record_mode="record"), httpx.AsyncClient() as client:
        recorded = (await client.get(f"{provider.base_url}/raw/json")).json()
    async with promptvcr.use_cassette(path), httpx.AsyncClient() as client:
        assert (await client.get("http://127.0.0.1:9/raw/json")).json() == recorded


def test_patches_are_restored_on_exit_even_when_the_body_raised(tmp_path: Path) -> None:
    seams = (httpx2.Client._transport_for_url, httpx2.AsyncClient._transport_for_url)
    legacy = (httpx.Client._transport_for_url, httpx.AsyncClient._transport_for_url)
    with pytest.raises(KeyError), promptvcr.use_cassette(tmp_path / "x.yaml"):
        assert httpx2.Client._transport_for_url is not seams[0]
        assert httpx.Client._transport_for_url is not legacy[0]
        raise KeyError("the body's own error")
    assert (httpx2.Client._transport_for_url, httpx2.AsyncClient._transport_for_url) == seams
    assert (httpx.Client._transport_for_url, httpx.AsyncClient._transport_for_url) == legacy


def test_json_cassette_when_the_path_ends_in_json(tmp_path: Path, provider: FakeProvider) -> None:
    path = tmp_path / "c.json"
    with promptvcr.use_cassette(path, record_mode="record"):
        sdk_calls.openai_client(provider.base_url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "json please"}]
        )
    document = json.loads(path.read_text())
    assert document["version"] == 1
    assert document["interactions"][0]["request"]["json"]["messages"][0]["content"] == "json please"
    with promptvcr.use_cassette(path) as cassette:
        sdk_calls.openai_client(sdk_calls.OFFLINE).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "json please"}]
        )
    assert cassette.played[0].hit


def test_a_stream_left_open_is_recorded_as_far_as_it_arrived(tmp_path: Path, provider: FakeProvider) -> None:
    """Issue 42: a stream the code neither read to the end nor closed was paid for: it is written
    as far as it arrived, ``end: closed``, and counted as recorded."""
    client = sdk_calls.openai_client(provider.base_url)
    path = tmp_path / "open.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with promptvcr.use_cassette(path, record_mode="record") as cassette:
            stream = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], stream=True
            )
            next(iter(stream))
    stream.close()
    assert [play.outcome for play in cassette.played] == ["recorded"]
    (written,) = fileformat.loads(path.read_text(), path)
    assert written.response.end == "closed" and written.response.chunks
