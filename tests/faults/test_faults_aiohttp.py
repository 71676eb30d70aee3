"""Faults and recorded timing through aiohttp sessions.

A stream is recorded with an ``aiohttp.ClientSession`` against the fake provider, whose
events are sent ``GAP`` apart, then replayed with the server gone. Each injected breakage
is compared with what aiohttp raises against a loopback server that really fails that way
(:mod:`misbehaving_server`). Timing bounds are generous (the machine is shared): order,
"never early" and totals.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest
from fake_provider import FakeProvider, paced_as_sent
from misbehaving_server import misbehaving, unreachable
from network_guard import no_network

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.timing import Timing
from promptvcr.files import fileformat

GAP = 0.06
SLACK = 0.5  # how late a replayed event may be on a busy machine
OFFLINE = "http://127.0.0.1:9"
PATH = "/v1/chat/completions"
STREAM = {"model": "gpt-4o", "messages": [{"role": "user", "content": "a b"}], "stream": True}
EVENTS = [b'data: {"n":%d}\n\n' % n for n in range(5)]
SHORT = aiohttp.ClientTimeout(sock_connect=0.3, sock_read=0.3)


async def stream_events(base: str) -> tuple[list[bytes], list[float]]:
    """The events of a streamed chat completion as aiohttp hands them over, and when each
    was complete (seconds after the call)."""
    started = time.monotonic()
    events, times, pending = [], [], b""
    async with aiohttp.ClientSession() as session, session.post(base + PATH, json=STREAM) as response:
        async for data in response.content.iter_any():
            pending += data
            while b"\n\n" in pending:
                event, _, pending = pending.partition(b"\n\n")
                events.append(event + b"\n\n")
                times.append(time.monotonic() - started)
    return events, times


async def received_until_error(base: str) -> tuple[bytes, BaseException]:
    received = b""
    try:
        async with (
            aiohttp.ClientSession(timeout=SHORT) as session,
            session.post(base + PATH, json=STREAM) as response,
        ):
            async for data in response.content.iter_any():
                received += data
    except Exception as error:  # the comparison is the point
        return received, error
    raise AssertionError("no error")


async def status(base: str) -> int:
    async with aiohttp.ClientSession() as session, session.post(base + PATH, json=STREAM) as response:
        await response.read()
        return response.status


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults_aiohttp") / "stream.yaml"
    with FakeProvider(chunk_delay=GAP) as server, promptvcr.use_cassette(path, record_mode="record"):
        asyncio.run(stream_events(server.base_url))
    return path


def stored(path: Path) -> tuple[list[bytes], Timing]:
    (interaction,) = fileformat.loads(path.read_text(), path)
    assert interaction.response.timing is not None
    return interaction.response.chunks, interaction.response.timing


# Recording and replaying timing -----------------------------------------------------------------


def test_recording_through_aiohttp_keeps_time_to_headers_and_each_event(recorded: Path) -> None:
    chunks, timing = stored(recorded)
    assert len(timing.chunks) == len(chunks) == 7
    assert paced_as_sent(timing.chunks, GAP), timing.chunks
    assert 0 <= timing.headers < 1 and "timing: {headers: " in recorded.read_text()


def test_aiohttp_replays_the_recorded_pace_and_a_factor(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, timing = stored(recorded)
    with no_network(monkeypatch) as attempts:
        with promptvcr.use_cassette(recorded, timing="recorded"):
            events, times = asyncio.run(stream_events(OFFLINE))
        with promptvcr.use_cassette(recorded, timing=0.25):
            _, quarter = asyncio.run(stream_events(OFFLINE))
        with promptvcr.use_cassette(recorded):
            _, unpaced = asyncio.run(stream_events(OFFLINE))
    assert attempts == [] and events == chunks
    due = [timing.headers + offset for offset in timing.chunks]
    assert all(seen >= when - 0.01 for seen, when in zip(times, due, strict=True)), (times, due)
    assert times == sorted(times) and times[-1] <= due[-1] + SLACK
    assert due[-1] / 4 - 0.01 <= quarter[-1] < times[-1]
    assert unpaced[-1] < GAP  # no timing asked: the hot path, no sleeps


def test_other_tasks_run_while_a_replayed_stream_waits(recorded: Path) -> None:
    """The pacing sleeps in the event loop, not in it: a ticker keeps ticking meanwhile."""

    async def both() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        await stream_events(OFFLINE)
        task.cancel()
        return ticks

    _, timing = stored(recorded)
    with promptvcr.use_cassette(recorded, timing="recorded"):
        ticks = asyncio.run(both())
    assert ticks >= (timing.chunks[-1] / 0.01) / 3


# Breakages, compared with real failures ---------------------------------------------------------


def test_connect_timeout_is_aiohttps_own(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with unreachable() as base:
        _, real = asyncio.run(received_until_error(base))
    with no_network(monkeypatch), promptvcr.use_cassette(recorded, faults=[faults.connect_timeout()]) as used:
        _, injected = asyncio.run(received_until_error(OFFLINE))
        assert asyncio.run(status(OFFLINE)) == 200  # the retry gets the recorded answer
    assert type(real) is aiohttp.ConnectionTimeoutError
    assert type(injected) is type(real)
    assert "promptvcr fault: connect timeout" in str(injected) + str(injected.__cause__)
    assert [play.outcome for play in used.played] == ["fault", "replayed"]


@pytest.mark.parametrize(
    ("mode", "fault", "events"),
    [
        ("silent", faults.read_timeout(), 0),
        ("stall", faults.read_timeout(after_events=2), 2),
        ("cut", faults.cut_stream(2), 2),
    ],
    ids=["read-timeout-before-headers", "read-timeout-mid-stream", "cut"],
)
def test_a_broken_answer_raises_what_a_real_one_raises(
    recorded: Path, monkeypatch: pytest.MonkeyPatch, mode: str, fault: faults.Fault, events: int
) -> None:
    chunks, _ = stored(recorded)
    with misbehaving(mode, EVENTS[:events]) as base:  # type: ignore[arg-type]
        real_bytes, real = asyncio.run(received_until_error(base))
    with no_network(monkeypatch), promptvcr.use_cassette(recorded, faults=[fault]) as used:
        injected_bytes, injected = asyncio.run(received_until_error(OFFLINE))
    expected = {"silent": aiohttp.SocketTimeoutError, "stall": aiohttp.SocketTimeoutError}
    assert type(real) is expected.get(mode, aiohttp.ClientPayloadError)
    assert type(injected) is type(real)
    assert real_bytes == b"".join(EVENTS[:events]) and injected_bytes == b"".join(chunks[:events])
    assert [play.outcome for play in used.played] == ["fault"]


def test_a_cut_non_streamed_body_is_aiohttps_payload_error(tmp_path: Path) -> None:
    path = tmp_path / "json.yaml"
    body = {**STREAM, "stream": False}
    url = PATH

    async def post(base: str) -> bytes:
        async with aiohttp.ClientSession() as session, session.post(base + url, json=body) as response:
            return await response.read()

    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record"):
        asyncio.run(post(server.base_url))
    with (
        promptvcr.use_cassette(path, faults=[faults.cut_stream(0)]),
        pytest.raises(aiohttp.ClientPayloadError),
    ):
        asyncio.run(post(OFFLINE))
