"""Injected faults seen through the real SDKs: retries, their own exceptions, cut streams.

The cassette is recorded once from the loopback fake provider; every test replays it with
the server gone, so what the SDK sees comes from promptvcr alone.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from fake_provider import FakeProvider
from misbehaving_server import misbehaving
from sdk_calls import OFFLINE, anthropic_client, openai_async, openai_client

import promptvcr
from promptvcr import faults
from promptvcr.cassettes.sse import decode_events, encode_event
from promptvcr.files import fileformat

HELLO = [{"role": "user", "content": "hello there"}]
STORY = [{"role": "user", "content": "one two three four five"}]
POEM = [{"role": "user", "content": "roses are red"}]


def ask(client: openai.OpenAI) -> str:
    reply = client.chat.completions.create(model="gpt-4o", messages=HELLO)
    return reply.choices[0].message.content or ""


def stream_pieces(client: openai.OpenAI, pieces: list[str]) -> None:
    """Append each streamed piece to ``pieces`` as it arrives, so a test sees them even when it breaks."""
    for chunk in client.chat.completions.create(model="gpt-4o", messages=STORY, stream=True):
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One chat answer, one streamed story (openai), one message and one streamed poem (anthropic)."""
    path = tmp_path_factory.mktemp("faults") / "provider.yaml"
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record"):
        client = openai_client(server.base_url)
        ask(client)
        stream_pieces(client, [])
        claude = anthropic_client(server.base_url)
        claude.messages.create(model="claude-x", max_tokens=50, messages=HELLO)
        with claude.messages.stream(model="claude-x", max_tokens=50, messages=POEM) as stream:
            list(stream.text_stream)
    return path


@pytest.fixture(scope="module")
def story(cassette: Path) -> list[str]:
    """The streamed pieces as recorded."""
    pieces: list[str] = []
    with promptvcr.use_cassette(cassette):
        stream_pieces(openai_client(OFFLINE), pieces)
    return pieces


# HTTP errors, retried by the SDKs against the recorded answer ------------------------------


def test_openai_retries_two_429s_honouring_retry_after_then_gets_the_recorded_answer(
    cassette: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="openai")
    attempts: list[float] = []

    def attempt(request: promptvcr.Request) -> bool:
        attempts.append(time.monotonic())
        return True

    rate_limited = faults.http_error(429, retry_after=0.1, times=2, where=attempt)
    with promptvcr.use_cassette(cassette, faults=[rate_limited]) as used:
        answer = ask(openai_client(OFFLINE, max_retries=2))

    assert answer.startswith("echo 1: hello there")
    assert [play.outcome for play in used.played] == ["fault", "fault", "replayed"]
    assert [play.request.headers["x-stainless-retry-count"] for play in used.played] == ["0", "1", "2"]
    assert [(fired.fault, fired.match) for fired in used.faults_fired] == [
        (rate_limited, 1),
        (rate_limited, 2),
    ]
    # retry-after honoured: openai says what it sleeps (without the header, 0.375 s and up with
    # jitter), and it slept at least that. An upper bound on the gaps would time the machine.
    assert _retry_waits(caplog) == [0.1, 0.1]
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts)]
    assert len(gaps) == 2 and all(gap >= 0.1 for gap in gaps), gaps


def _retry_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The waits an SDK logged before its retries ("Retrying request ... in 0.100000 seconds")."""
    waits = [re.search(r"in ([0-9.]+) seconds", record.getMessage()) for record in caplog.records]
    return [float(wait.group(1)) for wait in waits if wait is not None]


def test_openai_out_of_retries_raises_its_own_rate_limit_error_with_the_provider_body(cassette: Path) -> None:
    with (
        promptvcr.use_cassette(cassette, faults=[faults.http_error(429, retry_after=0.05, times=2)]) as used,
        pytest.raises(openai.RateLimitError) as raised,
    ):
        ask(openai_client(OFFLINE, max_retries=1))

    assert raised.value.status_code == 429
    assert raised.value.code == "rate_limit_exceeded"
    assert raised.value.type == "requests"
    assert "gpt-4o" in raised.value.message
    assert raised.value.response.headers["retry-after-ms"] == "50"
    assert [play.outcome for play in used.played] == ["fault", "fault"]
    assert len(used.unplayed) == 4  # the recorded answer was never used up


def test_anthropic_overloaded_529_then_success(cassette: Path) -> None:
    with promptvcr.use_cassette(cassette, faults=[faults.http_error(529, retry_after=0.05)]) as used:
        message = anthropic_client(OFFLINE, max_retries=2).messages.create(
            model="claude-x", max_tokens=50, messages=HELLO
        )

    assert message.content[0].text.startswith("echo 3: hello there")  # type: ignore[union-attr]
    assert [play.outcome for play in used.played] == ["fault", "replayed"]
    assert used.played[0].response is not None and used.played[0].response.status == 529


def test_anthropic_without_retries_raises_its_own_overloaded_error(cassette: Path) -> None:
    with (
        promptvcr.use_cassette(cassette, faults=[faults.http_error(529)]),
        pytest.raises(anthropic.OverloadedError) as raised,
    ):
        anthropic_client(OFFLINE, max_retries=0).messages.create(
            model="claude-x", max_tokens=50, messages=HELLO
        )

    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": "req_promptvcr_fault",
    }


def test_a_path_selector_leaves_other_requests_alone(cassette: Path) -> None:
    only_anthropic = faults.http_error(500, path="*/messages")
    with promptvcr.use_cassette(cassette, faults=[only_anthropic]) as used:
        assert ask(openai_client(OFFLINE, max_retries=0)).startswith("echo 1")
        with pytest.raises(anthropic.InternalServerError):
            anthropic_client(OFFLINE, max_retries=0).messages.create(
                model="claude-x", max_tokens=50, messages=HELLO
            )

    assert [fired.request.path for fired in used.faults_fired] == ["/v1/messages"]


# Timeouts, raised as the client library's own exceptions -------------------------------------


def test_connect_timeout_reaches_openai_as_its_timeout_error_from_httpx2(cassette: Path) -> None:
    with (
        promptvcr.use_cassette(cassette, faults=[faults.connect_timeout()]) as used,
        pytest.raises(openai.APITimeoutError) as raised,
    ):
        ask(openai_client(OFFLINE, max_retries=0))

    assert type(raised.value.__cause__) is httpx2.ConnectTimeout
    assert [(play.outcome, play.response) for play in used.played] == [("fault", None)]


def test_read_timeout_is_retried_by_openai_then_the_recorded_answer_comes(cassette: Path) -> None:
    with promptvcr.use_cassette(cassette, faults=[faults.read_timeout()]) as used:
        answer = ask(openai_client(OFFLINE, max_retries=1))

    assert answer.startswith("echo 1")
    assert [play.outcome for play in used.played] == ["fault", "replayed"]


def test_async_connect_timeout_reaches_async_openai(cassette: Path) -> None:
    async def call() -> None:
        client = openai_async(OFFLINE, max_retries=0)
        try:
            await client.chat.completions.create(model="gpt-4o", messages=HELLO)
        finally:
            await client.close()

    with (
        promptvcr.use_cassette(cassette, faults=[faults.connect_timeout()]),
        pytest.raises(openai.APITimeoutError) as raised,
    ):
        asyncio.run(call())

    assert type(raised.value.__cause__) is httpx2.ConnectTimeout


# Streams cut or garbled mid-body --------------------------------------------------------------


def _causes(error: BaseException | None) -> list[type[BaseException]]:
    """The classes of an exception and of every cause behind it, outermost first, down to the
    HTTP client's own: below httpx2 (httpcore2, h11) is the transport the interceptor stands in
    for, which no SDK code sees."""
    chain: list[type[BaseException]] = []
    while error is not None and type(error).__module__.partition(".")[0] in ("anthropic", "openai", "httpx2"):
        chain.append(type(error))
        error = error.__cause__ or error.__context__
    return chain


def _broken(stream: Callable[[], object]) -> BaseException:
    """What broke ``stream`` (the test fails if nothing did): the class is what is compared."""
    with pytest.raises(Exception) as raised:
        stream()
    return raised.value


def _openai_break(base_url: str, pieces: list[str], **options: Any) -> BaseException:
    """Stream the story into ``pieces`` and return what broke it."""
    return _broken(lambda: stream_pieces(openai_client(base_url, max_retries=0, **options), pieces))


def _stream_poem(claude: anthropic.Anthropic, texts: list[str]) -> BaseException:
    """Stream the poem into ``texts`` and return what broke it."""

    def stream() -> None:
        with claude.messages.stream(model="claude-x", max_tokens=50, messages=POEM) as poem:
            texts.extend(poem.text_stream)

    return _broken(stream)


def _story_events(cassette: Path) -> list[bytes]:
    """The streamed story's events (openai's stream, the second interaction) as sent on the wire."""
    (_, story_stream, *_) = fileformat.loads(cassette.read_text(encoding="utf-8"), cassette)
    return [encode_event(event) for chunk in story_stream.response.chunks for event in decode_events(chunk)]


def test_cut_stream_delivers_the_events_before_the_cut_then_openai_raises_what_a_live_cut_raises(
    cassette: Path, story: list[str]
) -> None:
    """What openai raises at a cut differs between its releases (3.0 lets the transport's error
    through, later ones wrap it in ``APIConnectionError``): the replay is compared with the same
    SDK against a server that hangs up after the same events."""
    with misbehaving("cut", _story_events(cassette)[:3]) as base_url:
        live_pieces: list[str] = []
        live = _openai_break(base_url, live_pieces)
    pieces: list[str] = []
    with promptvcr.use_cassette(cassette, faults=[faults.cut_stream(after_events=3)]) as used:
        replayed = _openai_break(OFFLINE, pieces)

    assert pieces == live_pieces == story[:3]
    assert _causes(replayed) == _causes(live)
    assert httpx2.RemoteProtocolError in _causes(replayed)
    assert [play.outcome for play in used.played] == ["fault"]


def test_the_retry_after_a_cut_stream_gets_the_whole_recorded_stream(
    cassette: Path, story: list[str]
) -> None:
    with misbehaving("cut", _story_events(cassette)[:2]) as base_url:
        live = _causes(_openai_break(base_url, []))
    attempts: list[list[str]] = []
    with promptvcr.use_cassette(cassette, faults=[faults.cut_stream(after_events=2)]) as used:
        for _ in range(2):
            attempts.append([])
            try:
                stream_pieces(openai_client(OFFLINE), attempts[-1])
            except Exception as error:  # what a live cut raises, whatever this release calls it
                assert _causes(error) == live
                continue

    assert attempts == [story[:2], story]
    assert [play.outcome for play in used.played] == ["fault", "replayed"]


def test_cut_anthropic_stream_raises_at_the_recorded_point_what_a_live_cut_raises(cassette: Path) -> None:
    """A replayed cut breaks the stream where a real disconnect does, with what the SDK raises then.

    What anthropic raises at a cut differs between its releases (2.16 let the transport's error
    through, 2.17 wraps it in ``APIConnectionError``), so the expectation is not a class name:
    the same first five events are served live by a server that hangs up after them, and the
    replay must raise the same exception, with the same chain of causes, after the same text.
    """
    texts: list[str] = []
    cut = faults.cut_stream(after_events=5, path="*/messages")
    with promptvcr.use_cassette(cassette, faults=[cut]) as used:
        replayed = _stream_poem(anthropic_client(OFFLINE, max_retries=0), texts)

    chunks = used.interactions[3].response.chunks
    events = [event for chunk in chunks for event in decode_events(chunk)]
    assert len(events) > 5, "the recorded poem must outlast the cut"
    with misbehaving("cut", [encode_event(event) for event in events[:5]]) as base_url:
        live_texts: list[str] = []
        live = _stream_poem(anthropic_client(base_url, max_retries=0), live_texts)

    assert [fired.fault for fired in used.faults_fired] == [cut]
    assert _causes(replayed) == _causes(live)
    before_cut = [e["data"]["delta"]["text"] for e in events[:5] if e.get("event") == "content_block_delta"]
    assert texts == live_texts == before_cut and len(before_cut) == 2  # start, block, ping, two deltas


def test_malformed_event_breaks_openai_stream_parsing_after_the_good_events(
    cassette: Path, story: list[str]
) -> None:
    pieces: list[str] = []
    with (
        promptvcr.use_cassette(cassette, faults=[faults.malformed_event(2)]) as used,
        pytest.raises(ValueError, match=r"(?i)json|delimiter|unterminated|expecting"),
    ):
        stream_pieces(openai_client(OFFLINE), pieces)

    assert pieces == story[:2]
    fired = used.faults_fired[0]
    assert fired.fault.kind == "malformed_event"
    broken = used.played[0].response
    assert broken is not None and broken.chunks[2] != used.interactions[1].response.chunks[2]


def test_read_timeout_after_events_raises_what_a_live_stall_raises_mid_stream(
    cassette: Path, story: list[str]
) -> None:
    """Compared with the same SDK against a server that stops sending after the same events (its
    read timeout short, so the live side waits half a second, not the default ten minutes)."""
    with misbehaving("stall", _story_events(cassette)[:4]) as base_url:
        live_pieces: list[str] = []
        live = _openai_break(base_url, live_pieces, timeout=0.5)
    pieces: list[str] = []
    with promptvcr.use_cassette(cassette, faults=[faults.read_timeout(after_events=4)]):
        replayed = _openai_break(OFFLINE, pieces)

    assert pieces == live_pieces == story[:4]
    assert _causes(replayed) == _causes(live)
    assert httpx2.ReadTimeout in _causes(replayed)


# While recording --------------------------------------------------------------------------------


def test_http_error_fires_before_the_network_while_recording_and_is_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "recording.yaml"
    with (
        FakeProvider() as server,
        promptvcr.use_cassette(
            path, record_mode="record", faults=[faults.http_error(503, retry_after=0.01)]
        ) as used,
    ):
        answer = ask(openai_client(server.base_url, max_retries=1))
        reached_server = len(server.requests)

    assert answer.startswith("echo 1")
    assert reached_server == 1
    assert [play.outcome for play in used.played] == ["fault", "recorded"]
    with promptvcr.use_cassette(path) as replaying:
        assert [i.response.status for i in replaying.interactions] == [200]


def test_stream_faults_let_a_request_being_recorded_through_unchanged(tmp_path: Path) -> None:
    pieces: list[str] = []
    with (
        FakeProvider() as server,
        promptvcr.use_cassette(
            tmp_path / "r.yaml", record_mode="record", faults=[faults.cut_stream(after_events=1)]
        ) as used,
    ):
        stream_pieces(openai_client(server.base_url), pieces)

    assert len(pieces) > 3 and used.faults_fired == []
    assert [play.outcome for play in used.played] == ["recorded"]


def test_faults_apply_per_use_of_a_decorated_function(cassette: Path) -> None:
    outcomes: list[Any] = []

    @promptvcr.use_cassette(cassette, faults=[faults.http_error(500)])
    def once() -> None:
        with pytest.raises(openai.InternalServerError):
            ask(openai_client(OFFLINE, max_retries=0))
        outcomes.append(ask(openai_client(OFFLINE, max_retries=0)))

    once()
    once()  # a fresh cassette: the fault fires again on the first request
    assert len(outcomes) == 2
