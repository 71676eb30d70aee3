"""Long jobs recorded with the real SDKs against a jobs server on 127.0.0.1, replayed with the
server stopped: the polls in order, the end state again, the waits gone (docs/long-jobs.md).

Each flow is recorded once per module with 30 s or more of waits: the user loop sleeps 10 s
between polls, and the server declares 10 s waits (``openai-poll-after-ms``, ``retry-after``).
The recording makes those sleeps instant itself (``time.sleep`` replaced by a clock that only
adds them up, while recording only: the server does not care how long a client waits), so the
recorded pace is "recording time plus the waits asked for". Replay then runs on the real clock:
a replay that honoured the waits would take 30 s or more, so each replay asserts it took less
than half the waits asked for (it takes milliseconds; the figure is printed for the note).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from fake_jobs import DECLARED_WAIT_MS, SPEECH_BYTES, FakeJobs
from longjob_flows import FLOWS, REQUESTS_JSONL, USER_WAIT, Recorded, record_flows

from promptvcr import CassetteMiss, use_cassette
from promptvcr.longjobs import clock

SLEEP, ASYNC_SLEEP = time.sleep, asyncio.sleep  # the real ones, as this module found them


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Recorded]]:
    """Each flow recorded live once, then the server stopped."""
    with FakeJobs(polls=4) as jobs:
        flows = record_flows(tmp_path_factory.mktemp("longjobs"), jobs)
    yield flows


@pytest.mark.parametrize("name", ["openai", "anthropic", "genai"])
def test_a_user_polling_loop_replays_fast_with_identical_results(
    recorded: dict[str, Recorded], name: str, tmp_path: Path
) -> None:
    flow = recorded[name]
    assert flow.live.asked + flow.declared >= 30  # recorded with 30 s or more of waits
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with use_cassette(flow.cassette, timing="fast") as cassette:
            replay = FLOWS[name](flow.base_url, tmp_path / "replayed.out")
    assert replay.result == flow.live.result  # the download, byte for byte (OpenAI: through stream_to_file)
    assert replay.result  # something was downloaded
    assert replay.polls == flow.live.polls == 4
    assert not cassette.missed and cassette.all_played
    # The loop slept 40 s on the real clock's word; fast-forwarded, replay takes milliseconds.
    assert replay.seconds < replay.asked / 2, replay
    waits = flow.live.asked + flow.declared
    recorded_s, replayed_ms = flow.live.seconds + waits, replay.seconds * 1000
    print(f"{name}: recorded {recorded_s:.1f} s (waits {waits:.0f} s), replayed {replayed_ms:.1f} ms")


def test_the_declared_waits_of_a_poll_helper_are_served_as_none(recorded: dict[str, Recorded]) -> None:
    """``upload_and_poll`` sleeps what ``openai-poll-after-ms`` says: 10 s per poll when recorded,
    none on replay (timing="none", the default: no fast-forward needed)."""
    flow = recorded["vector_store"]
    assert flow.declared >= 30 and flow.live.result == "completed"
    with use_cassette(flow.cassette) as cassette:
        replay = FLOWS["vector_store"](flow.base_url, Path())
    assert replay.result == "completed" and cassette.all_played and not cassette.missed
    assert replay.seconds < flow.declared / 2, replay
    print(f"vector_store: declared waits {flow.declared:.0f} s, replayed {replay.seconds * 1000:.1f} ms")


def test_recorded_timing_keeps_the_declared_waits(recorded: dict[str, Recorded]) -> None:
    flow = recorded["vector_store"]
    client = openai.OpenAI(api_key="test-key", base_url=flow.base_url + "/v1", max_retries=0)
    for timing, expected in (("none", "0"), ("recorded", str(DECLARED_WAIT_MS))):
        with use_cassette(flow.cassette, timing=timing):
            upload = client.files.create(file=("notes.txt", b"a note\n" * 50), purpose="assistants")
            client.vector_stores.files.create(vector_store_id="vs_1", file_id=upload.id)
            raw = client.vector_stores.files.with_raw_response.retrieve(
                file_id=upload.id, vector_store_id="vs_1"
            )
        assert raw.headers["openai-poll-after-ms"] == expected, timing


@pytest.mark.parametrize("name", ["openai", "anthropic"])
def test_polling_past_the_end_replays_the_end_state_and_stopping_early_leaves_no_unused_poll(
    recorded: dict[str, Recorded], name: str, tmp_path: Path
) -> None:
    flow = recorded[name]
    if name == "openai":  # three more polls after the end: the end state again, no miss
        with use_cassette(flow.cassette, timing="fast") as cassette:
            replay = FLOWS["openai"](flow.base_url, tmp_path / "out", extra=3)
        assert replay.result == flow.live.result and not cassette.missed and cassette.all_played
    with use_cassette(flow.cassette, timing="fast") as cassette:  # gives up after one poll
        early = FLOWS[name](flow.base_url, tmp_path / "early", stop_after=1)
    assert early.polls == 1 and not cassette.missed
    unused = [(i.request.method, i.request.url) for i in cassette.unplayed]
    assert [url for method, url in unused if method == "GET" and url.rsplit("/", 2)[-2] == "batches"] == []
    assert cassette.unplayed  # what it never asked for (the results) stays unused: that is real


def test_sleeps_are_skipped_only_while_a_replayed_job_is_open(recorded: dict[str, Recorded]) -> None:
    """The fast-forward's scope: inside the cassette, in its context, between the create answer
    and the end state; not before, not after, not in a thread that did not copy the context."""
    import threading

    flow = recorded["anthropic"]
    client = anthropic.Anthropic(api_key="test-key", base_url=flow.base_url, max_retries=0)
    seen: dict[str, bool] = {}
    with use_cassette(flow.cassette, timing="fast"):
        seen["before create"] = clock.skipping()
        batch = client.messages.batches.create(requests=[
            {"custom_id": f"q{n}", "params": {"model": "claude-x", "max_tokens": 10,
                                              "messages": [{"role": "user", "content": f"hi {n}"}]}}
            for n in range(2)
        ])  # fmt: skip
        seen["open"] = clock.skipping()
        other = threading.Thread(target=lambda: seen.setdefault("plain thread", clock.skipping()))
        other.start()
        other.join()
        while batch.processing_status != "ended":
            batch = client.messages.batches.retrieve(batch.id)
        seen["ended"] = clock.skipping()
    seen["outside"] = clock.skipping()
    assert seen == {
        "before create": False,
        "open": True,
        "plain thread": False,
        "ended": False,
        "outside": False,
    }
    assert time.sleep is SLEEP  # put back


def test_fast_forward_never_applies_when_recording(tmp_path: Path) -> None:
    with FakeJobs(polls=2) as jobs, use_cassette(tmp_path / "rec.yaml", record_mode="all", timing="fast"):
        client = anthropic.Anthropic(api_key="test-key", base_url=jobs.base_url, max_retries=0)
        client.messages.batches.create(requests=[])
        assert not clock.skipping()
        assert time.sleep is SLEEP


def test_a_changed_upload_misses_naming_the_file_its_size_and_hash(recorded: dict[str, Recorded]) -> None:
    """An upload is matched by its parts' meaning and the file's SHA-256 (the boundary is random):
    the same file replays, a changed one misses with a diff that names it."""
    flow = recorded["openai"]
    client = openai.OpenAI(api_key="test-key", base_url=flow.base_url + "/v1", max_retries=0)
    with use_cassette(flow.cassette) as cassette:
        same = client.files.create(file=("requests.jsonl", REQUESTS_JSONL), purpose="batch")
    assert same.filename == "requests.jsonl" and not cassette.missed
    changed = REQUESTS_JSONL.replace(b"hi 1", b"hi 2")  # same size, other content
    with pytest.raises(CassetteMiss) as caught, use_cassette(flow.cassette):
        client.files.create(file=("requests.jsonl", changed), purpose="batch")
    message = str(caught.value)
    assert f"file 'requests.jsonl', {len(REQUESTS_JSONL):,} bytes, sha256" in message
    assert (
        hashlib.sha256(REQUESTS_JSONL).hexdigest() in message
        and hashlib.sha256(changed).hexdigest() in message
    )


async def test_an_async_polling_loop_replays_fast(recorded: dict[str, Recorded]) -> None:
    """``asyncio.sleep`` between polls, and ``time.sleep`` run by ``asyncio.to_thread`` (the
    context copied), skipped while the replayed batch is open; the results as recorded."""
    flow = recorded["anthropic"]
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=flow.base_url, max_retries=0)
    requests: Any = [
        {"custom_id": f"q{n}", "params": {"model": "claude-x", "max_tokens": 10,
                                          "messages": [{"role": "user", "content": f"hi {n}"}]}}
        for n in range(2)
    ]  # fmt: skip
    started, asked = time.perf_counter(), 0.0
    with use_cassette(flow.cassette, timing="fast") as cassette:
        batch = await client.messages.batches.create(requests=requests)
        while batch.processing_status != "ended":
            await asyncio.sleep(USER_WAIT)
            await asyncio.to_thread(time.sleep, USER_WAIT)
            asked += 2 * USER_WAIT
            batch = await client.messages.batches.retrieve(batch.id)
        results = [entry.model_dump() async for entry in await client.messages.batches.results(batch.id)]
    seconds = time.perf_counter() - started
    assert results == flow.live.result and cassette.all_played and not cassette.missed
    assert seconds < asked / 2, (seconds, asked)
    assert asyncio.sleep is ASYNC_SLEEP and time.sleep is SLEEP  # put back


def test_speech_audio_streamed_to_a_file_replays_byte_for_byte(tmp_path: Path) -> None:
    """A binary answer past 4 MiB (stored from its chunks) through the SDK's stream-to-file helper."""
    cassette_path = tmp_path / "speech.yaml"

    def speak(base_url: str, out: Path) -> bytes:
        client = openai.OpenAI(api_key="test-key", base_url=base_url + "/v1", max_retries=0)
        with client.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts", voice="alloy", input="a long job is done"
        ) as response:
            response.stream_to_file(out)
        return out.read_bytes()

    with FakeJobs() as jobs, use_cassette(cassette_path, record_mode="all"):
        live = speak(jobs.base_url, tmp_path / "live.mp3")
    with use_cassette(cassette_path) as cassette:
        replayed = speak(jobs.base_url, tmp_path / "replayed.mp3")
    assert len(live) == SPEECH_BYTES and replayed == live and cassette.all_played
