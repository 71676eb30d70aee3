"""Faults and recorded timing through urllib3: requests, urllib3 itself and botocore.

A stream is recorded with requests against the fake provider, whose events are sent
``GAP`` apart, then replayed with the server gone. Each injected breakage is compared with
what the same client raises against a loopback server that really fails that way
(:mod:`misbehaving_server`). Timing bounds are generous (the machine is shared): order,
"never early" and totals.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
import pytest
import requests
import urllib3
from botocore.config import Config
from fake_bedrock import FakeBedrock, encode_frame
from fake_provider import FakeProvider, paced_as_sent
from misbehaving_server import misbehaving, unreachable
from network_guard import no_network

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.timing import Timing
from promptvcr.files import fileformat

Offline = Callable[[], contextlib.AbstractContextManager[list[Any]]]
GAP = 0.06
SLACK = 0.5  # how late a replayed event may be on a busy machine
OFFLINE = "http://127.0.0.1:9"
PATH = "/v1/chat/completions"
STREAM = {"model": "gpt-4o", "messages": [{"role": "user", "content": "a b"}], "stream": True}
EVENTS = [b'data: {"n":%d}\n\n' % n for n in range(5)]
TIMEOUT = (0.3, 0.3)


def stream_events(base: str, timeout: tuple[float, float] = (5, 5)) -> tuple[list[bytes], list[float]]:
    """The events of a streamed chat completion as requests hands them over, and when each
    was complete (seconds after the call). Read a byte at a time, so nothing is grouped."""
    started = time.monotonic()
    events, times, pending = [], [], b""
    with requests.post(base + PATH, json=STREAM, stream=True, timeout=timeout) as response:
        for byte in response.iter_content(1):
            pending += byte
            if pending.endswith(b"\n\n"):
                events.append(pending)
                times.append(time.monotonic() - started)
                pending = b""
    return events, times


def received_until_error(base: str, timeout: tuple[float, float] = TIMEOUT) -> tuple[bytes, BaseException]:
    received = b""
    try:
        with requests.post(base + PATH, json=STREAM, stream=True, timeout=timeout) as response:
            for chunk in response.iter_content(1):
                received += chunk
    except Exception as error:  # the comparison is the point
        return received, error
    raise AssertionError("no error")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults_urllib3") / "stream.yaml"
    with FakeProvider(chunk_delay=GAP) as server, promptvcr.use_cassette(path, record_mode="record"):
        stream_events(server.base_url)
    return path


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Callable[[], contextlib.AbstractContextManager[list[Any]]]:
    """``with offline():`` fails any connection attempt made inside it (replay needs none)."""

    @contextlib.contextmanager
    def guard() -> Iterator[list[Any]]:
        with no_network(monkeypatch) as attempts:
            yield attempts
        assert attempts == []

    return guard


def stored(path: Path) -> tuple[list[bytes], Timing]:
    (interaction,) = fileformat.loads(path.read_text(), path)
    assert interaction.response.timing is not None
    return interaction.response.chunks, interaction.response.timing


# Recording and replaying timing -----------------------------------------------------------------


def test_recording_through_requests_keeps_time_to_headers_and_each_event(recorded: Path) -> None:
    chunks, timing = stored(recorded)
    assert len(timing.chunks) == len(chunks) == 7
    assert paced_as_sent(timing.chunks, GAP), timing.chunks
    assert 0 <= timing.headers < 1 and "timing: {headers: " in recorded.read_text()


def test_requests_replays_the_recorded_pace_and_a_factor(recorded: Path, offline: Offline) -> None:
    chunks, timing = stored(recorded)
    with offline(), promptvcr.use_cassette(recorded, timing="recorded"):
        events, times = stream_events(OFFLINE)
    assert events == chunks
    due = [timing.headers + offset for offset in timing.chunks]
    assert all(seen >= when - 0.01 for seen, when in zip(times, due, strict=True)), (times, due)
    assert times == sorted(times) and times[-1] <= due[-1] + SLACK

    with promptvcr.use_cassette(recorded, timing=0.25):
        _, quarter = stream_events(OFFLINE)
    with promptvcr.use_cassette(recorded):
        _, unpaced = stream_events(OFFLINE)
    assert due[-1] / 4 - 0.01 <= quarter[-1] < times[-1]
    assert unpaced[-1] < GAP  # no timing asked: the hot path, no sleeps


# Breakages, compared with real failures ---------------------------------------------------------


def test_connect_timeout_is_requests_own_connect_timeout(recorded: Path, offline: Offline) -> None:
    with unreachable() as base:
        _, real = received_until_error(base)
    with offline(), promptvcr.use_cassette(recorded, faults=[faults.connect_timeout()]) as used:
        _, injected = received_until_error(OFFLINE)
        assert requests.post(OFFLINE + PATH, json=STREAM).status_code == 200  # the retry gets the answer
    assert type(real) is requests.exceptions.ConnectTimeout
    assert type(injected) is type(real) and "promptvcr fault: connect timeout" in str(injected)
    assert [play.outcome for play in used.played] == ["fault", "replayed"]


def test_read_timeout_before_headers_is_requests_own_read_timeout(recorded: Path) -> None:
    with misbehaving("silent") as base:
        _, real = received_until_error(base)
    with promptvcr.use_cassette(recorded, faults=[faults.read_timeout()]):
        _, injected = received_until_error(OFFLINE)
    assert type(real) is requests.exceptions.ReadTimeout
    assert type(injected) is type(real) and "promptvcr fault: read timeout" in str(injected)


@pytest.mark.parametrize(
    ("mode", "fault"), [("cut", faults.cut_stream(2)), ("stall", faults.read_timeout(after_events=2))]
)
def test_a_broken_stream_raises_what_a_real_one_raises(
    recorded: Path, offline: Offline, mode: str, fault: faults.Fault
) -> None:
    chunks, _ = stored(recorded)
    with misbehaving(mode, EVENTS[:2]) as base:  # type: ignore[arg-type]
        real_bytes, real = received_until_error(base)
    with offline(), promptvcr.use_cassette(recorded, faults=[fault]) as used:
        injected_bytes, injected = received_until_error(OFFLINE)
    # A cut is a ChunkedEncodingError; a read timeout in mid-body is requests' ConnectionError.
    expected = {"cut": requests.exceptions.ChunkedEncodingError, "stall": requests.exceptions.ConnectionError}
    assert type(real) is expected[mode]
    assert type(injected) is type(real) and "promptvcr fault" in str(injected)
    assert real_bytes == b"".join(EVENTS[:2]) and injected_bytes == b"".join(chunks[:2])
    assert [play.outcome for play in used.played] == ["fault"]


def test_urllib3_itself_raises_its_own_protocol_error_for_a_cut(recorded: Path, offline: Offline) -> None:
    pool = urllib3.PoolManager(retries=False)
    with misbehaving("cut", EVENTS[:2]) as base, pytest.raises(urllib3.exceptions.ProtocolError) as real:
        pool.request("POST", base + PATH, json=STREAM)
    with (
        offline(),
        promptvcr.use_cassette(recorded, faults=[faults.cut_stream(3)]),
        pytest.raises(urllib3.exceptions.ProtocolError) as injected,
    ):
        pool.request("POST", OFFLINE + PATH, json=STREAM)
    assert type(injected.value) is type(real.value)


# botocore, through the same interceptor ---------------------------------------------------------

MODEL = "us.amazon.nova-micro-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "What is up?"}]}]


def bedrock(endpoint: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="SECRET-aws-0123456789",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=0.3, read_timeout=0.3),
    )


def bedrock_stream_error(endpoint: str) -> tuple[int, BaseException]:
    seen = 0
    try:
        for _ in bedrock(endpoint).converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]:
            seen += 1
    except Exception as error:
        return seen, error
    raise AssertionError("no error")


def test_botocore_gets_its_own_timeout_and_stream_errors(tmp_path: Path) -> None:
    path = tmp_path / "bedrock.yaml"
    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        frames = list(bedrock(fake.base_url).converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
    assert len(frames) > 3 and "timing: {headers: " in path.read_text()

    with unreachable() as base, pytest.raises(botocore.exceptions.ConnectTimeoutError) as real_connect:
        bedrock(base).converse_stream(modelId=MODEL, messages=MESSAGES)
    with (
        promptvcr.use_cassette(path, faults=[faults.connect_timeout()]),
        pytest.raises(botocore.exceptions.ConnectTimeoutError) as injected_connect,
    ):
        bedrock(OFFLINE).converse_stream(modelId=MODEL, messages=MESSAGES)
    assert type(injected_connect.value) is type(real_connect.value)

    start = encode_frame("messageStart", {"role": "assistant"})
    with misbehaving("cut", [start, start], "application/vnd.amazon.eventstream") as base:
        real_seen, real_cut = bedrock_stream_error(base)
    with promptvcr.use_cassette(path, faults=[faults.cut_stream(2)]):
        injected_seen, injected_cut = bedrock_stream_error(OFFLINE)
    assert real_seen == injected_seen == 2
    assert type(injected_cut) is type(real_cut)
