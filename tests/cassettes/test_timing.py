"""Recorded timing: kept while recording, stored readably, and reproduced on replay when asked.

Timing tests record a short stream whose events the fake provider sends 60 ms apart, then
replay it with the server gone. They assert order, "never early" and totals against the
recording with generous bounds, not tight absolute times: the machine is shared.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_provider import FakeProvider, paced_as_sent
from hypothesis import given
from hypothesis import strategies as st
from sdk_calls import OFFLINE, openai_async, openai_client

import promptvcr
from promptvcr.cassettes.eventstream import CONTENT_TYPE as EVENT_STREAM
from promptvcr.cassettes.eventstream import encode_frame
from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cassettes.playback import pace_factor
from promptvcr.cassettes.sse import decode_events, event_ends, parse_events
from promptvcr.cassettes.timing import Timing, stored_offsets, timing_to_data
from promptvcr.files import fileformat

GAP = 0.06
SHORT = [{"role": "user", "content": "a b"}]
SLACK = 0.5  # how late a replayed event may be on a busy machine; the test measures the real figure


# Recording -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("timing") / "slow.yaml"
    with FakeProvider(chunk_delay=GAP) as server, promptvcr.use_cassette(path, record_mode="record"):
        stream = openai_client(server.base_url).chat.completions.create(
            model="gpt-4o", messages=SHORT, stream=True
        )
        for _ in stream:
            pass
    return path


def stored_timing(path: Path) -> Timing:
    (interaction,) = fileformat.loads(path.read_text(), path)
    assert interaction.response.timing is not None
    return interaction.response.timing


def test_recording_keeps_time_to_headers_and_each_events_offset(recorded: Path) -> None:
    timing = stored_timing(recorded)
    (interaction,) = fileformat.loads(recorded.read_text(), recorded)
    assert len(timing.chunks) == len(interaction.response.chunks) == 7  # role, 4 pieces, finish, [DONE]
    assert paced_as_sent(timing.chunks, GAP), timing.chunks
    assert 0 <= timing.headers < 1 and timing.chunks[0] < GAP


def test_timing_is_one_readable_line_in_the_cassette(recorded: Path) -> None:
    lines = [line.strip() for line in recorded.read_text().splitlines() if line.strip().startswith("timing:")]
    assert len(lines) == 1 and lines[0].startswith("timing: {headers: ")
    stored = yaml.safe_load(recorded.read_text())["interactions"][0]["response"]["timing"]
    assert stored["chunks"] == sorted(stored["chunks"]) and all(round(t, 3) == t for t in stored["chunks"])


# Replaying at the recorded pace -------------------------------------------------------------------


def arrivals_sync(factor: str | float) -> tuple[list[float], float]:
    """Seconds after the call at which each streamed chunk reached the application, and the total."""
    client = openai_client(OFFLINE)
    started = time.monotonic()
    stream = client.chat.completions.create(model="gpt-4o", messages=SHORT, stream=True)
    seen = [time.monotonic() - started for _ in stream]
    return seen, time.monotonic() - started


async def arrivals_async() -> tuple[list[float], float]:
    client = openai_async(OFFLINE)
    started = time.monotonic()
    stream = await client.chat.completions.create(model="gpt-4o", messages=SHORT, stream=True)
    seen = [time.monotonic() - started async for _ in stream]
    total = time.monotonic() - started
    await client.close()
    return seen, total


def check_recorded_pace(timing: Timing, seen: list[float], total: float) -> None:
    due = [timing.headers + offset for offset in timing.chunks]
    late = [arrived - due_at for arrived, due_at in zip(seen, due, strict=False)]
    assert len(seen) == len(due) - 1  # [DONE] ends the stream without a chunk of its own
    assert seen == sorted(seen)
    assert min(late) >= -0.002, late  # never early (stored times are rounded to the millisecond)
    assert max(late) < SLACK, late
    assert due[-1] - 0.002 <= total < due[-1] + SLACK


def test_recorded_timing_reproduces_the_gaps_in_sync_code(recorded: Path) -> None:
    with promptvcr.use_cassette(recorded, timing="recorded"):
        seen, total = arrivals_sync("recorded")
    check_recorded_pace(stored_timing(recorded), seen, total)


def test_recorded_timing_reproduces_the_gaps_in_async_code(recorded: Path) -> None:
    with promptvcr.use_cassette(recorded, timing="recorded"):
        seen, total = asyncio.run(arrivals_async())
    check_recorded_pace(stored_timing(recorded), seen, total)


def test_a_speed_factor_scales_the_recorded_pace(recorded: Path) -> None:
    timing = stored_timing(recorded)
    recorded_total = timing.headers + timing.chunks[-1]
    with promptvcr.use_cassette(recorded, timing=0.25):
        seen, total = arrivals_sync(0.25)
    assert recorded_total * 0.25 - 0.002 <= total < recorded_total * 0.25 + SLACK
    assert total < recorded_total * 0.8
    assert seen[-1] >= (timing.headers + timing.chunks[-2]) * 0.25 - 0.002


def test_without_timing_replay_does_not_wait(recorded: Path) -> None:
    timing = stored_timing(recorded)
    with promptvcr.use_cassette(recorded) as used:
        _, total = arrivals_sync("none")
    assert total < (timing.headers + timing.chunks[-1]) / 2
    assert used.played[0].response is not None and used.played[0].response.playback is None


def test_timing_on_a_cassette_recorded_without_it_warns_and_replays_fast(
    recorded: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load(recorded.read_text())
    del document["interactions"][0]["response"]["timing"]
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.warns(RuntimeWarning, match="without timing"), promptvcr.use_cassette(old, timing="recorded"):
        _, total = arrivals_sync("recorded")
    assert total < 0.2


def test_a_bad_timing_value_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match=r"timing='fastest'.*'none'.*'fast'.*'recorded'"):
        promptvcr.use_cassette("x.yaml", timing="fastest")  # type: ignore[arg-type]
    assert [pace_factor(v) for v in ("none", None, "recorded", 0.1, 2)] == [None, None, 1.0, 0.1, 2.0]
    assert pace_factor("fast") is None  # as fast as "none", and the code's sleeps between polls too
    for bad in (0, -1, float("inf"), True):
        with pytest.raises(ValueError):
            pace_factor(bad)


# Stored form -------------------------------------------------------------------------------------


def test_events_split_or_merged_by_the_network_take_the_time_their_last_byte_arrived() -> None:
    received = [b"data: 1\n\nda", b"ta: 2\n", b"\ndata: 3\n\ndata: 4\n\n"]
    ends = event_ends(b"".join(received))
    assert stored_offsets(Timing(0.1, (0.0, 0.2, 0.3)), received, ends) == (0.0, 0.3, 0.3, 0.3)
    assert stored_offsets(Timing(0.1, (0.0,)), received, ends) == ()  # incomplete measurements: none


line_end = st.sampled_from(["\n", "\r\n", "\r"])
event = st.builds(
    lambda name, data, end: f"event: {name}{end}data: {data}{end}{end}",
    st.sampled_from(["a", "delta"]),
    st.text(alphabet="xyz{}:1 ", max_size=8),
    line_end,
)


@given(st.lists(st.one_of(event, line_end, st.just(": keep-alive\n\n")), max_size=8))
def test_event_ends_are_where_each_parsed_event_is_complete(pieces: list[str]) -> None:
    content = "".join(pieces).encode()
    events = decode_events(content)
    ends = event_ends(content)
    assert len(ends) == len(events)
    for index, end in enumerate(ends):
        assert parse_events(content[:end].decode()) == parse_events(content.decode())[: index + 1]


def stream_interaction(timing: Timing | None) -> Interaction:
    chunks = [b"data: {}\n\n", b"data: [DONE]\n\n"]
    response = Response(200, {"content-type": "text/event-stream"}, chunks, timing)
    return Interaction(Request("POST", "http://h/v1/chat/completions"), response)


def test_timing_round_trips_through_yaml_and_json(tmp_path: Path) -> None:
    for name in ("t.yaml", "t.json"):
        path = tmp_path / name
        path.write_text(
            fileformat.dumps(
                [fileformat.interaction_to_data(stream_interaction(Timing(0.25, (0.0, 0.0504))))], path
            )
        )
        assert stored_timing(path) == Timing(0.25, (0.0, 0.05))


def test_a_cassette_without_timing_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(stream_interaction(None))], path))
    assert "timing" not in path.read_text()
    assert fileformat.loads(path.read_text(), path)[0].response.timing is None


@pytest.mark.parametrize(
    ("timing", "message"),
    [
        ("{headers: 0.1, chunks: [0.0]}", "timing.chunks has 1 entries for a body of 2 chunks"),
        ("{headers: -1, chunks: [0, 0]}", "timing.headers is -1"),
        ("{headers: 0.1, chunks: [0, soon]}", r"timing.chunks\[1\] is 'soon'"),
        ("[0.1]", "timing is a list"),
    ],
)
def test_a_broken_timing_names_the_interaction_and_the_problem(
    tmp_path: Path, timing: str, message: str
) -> None:
    path = tmp_path / "edited.yaml"
    text = fileformat.dumps(
        [fileformat.interaction_to_data(stream_interaction(Timing(0.1, (0.0, 0.1))))], path
    )
    path.write_text(text.replace("timing: {headers: 0.1, chunks: [0.0, 0.1]}", f"timing: {timing}"))
    with pytest.raises(promptvcr.CassetteFormatError, match=rf"interactions\[0\]\.response\.{message}"):
        fileformat.loads(path.read_text(), path)


def test_aws_event_stream_frames_get_one_offset_each(tmp_path: Path) -> None:
    frames = [encode_frame({"headers": {":event-type": "delta"}, "json": {"n": n}}) for n in range(3)]
    received = [frames[0] + frames[1][:5], frames[1][5:], frames[2]]  # split as the network does
    response = Response(200, {"content-type": EVENT_STREAM}, received, Timing(0.1, (0.01, 0.02, 0.03)))
    path = tmp_path / "bedrock.yaml"
    interaction = Interaction(
        Request("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/x"), response
    )
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(interaction)], path))
    (loaded,) = fileformat.loads(path.read_text(), path)
    assert loaded.response.chunks == frames
    assert loaded.response.timing == Timing(0.1, (0.01, 0.02, 0.03))


def test_incomplete_measurements_keep_only_the_time_to_headers(tmp_path: Path) -> None:
    path = tmp_path / "partial.yaml"
    interaction = stream_interaction(Timing(0.25, (0.0,)))  # two chunks, one measurement
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(interaction)], path))
    assert "timing: {headers: 0.25}" in path.read_text()
    assert stored_timing(path) == Timing(0.25, ())


def test_a_one_chunk_body_is_timed_as_the_general_rule_times_it() -> None:
    """Issue 22: ``timing_to_data`` takes a shortcut for a body received in one timed chunk;
    it stores what moving the offsets onto the stored chunks (``stored_offsets``) stores, for
    bodies empty or not, in one chunk or several, timed fully, partly or not at all."""
    chosen = random.Random(22)
    for _ in range(2000):
        received = [bytes(chosen.randint(0, 3)) for _ in range(chosen.choice([0, 1, 1, 1, 2, 3]))]
        offsets = tuple(
            chosen.random() for _ in range(chosen.choice([len(received), len(received), 0, 1, 2]))
        )
        timing = Timing(chosen.random(), offsets)
        stored_chunks = chosen.choice([0, 1, 1, 2])
        size = sum(len(chunk) for chunk in received)
        general = stored_offsets(timing, received, [size] if size else [])
        expected: dict[str, Any] = {"headers": round(timing.headers, 3)}
        if len(general) == stored_chunks:
            expected["chunks"] = [round(t, 3) for t in general]
        for key in ("json", "text", "base64", ""):
            assert timing_to_data(timing, received, body_key=key, stored_chunks=stored_chunks) == expected
