"""Issue 22: recording onto an empty cassette computes no request keys, and changes nothing.

A cassette entered in ``record`` mode with nothing to replay (no file yet, or an empty one)
and without ``allow_playback_repeats``, or in ``rewrite`` mode, can never play back what it
records: each recorded key is used up by the request that recorded it. So such a cassette
skips the key and the tape. Each case below records the same traffic twice, once that way
and once the plain way (the file holds one unrelated interaction first, so the cassette
looks every request up), and compares what the code under test saw, what the cassette
reports and what was written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import sdk_calls
from fake_provider import FakeProvider

import promptvcr
from promptvcr.files import fileformat
from promptvcr.matching.key import request_key
from promptvcr.matching.rules import default_rules
from promptvcr.matching.tape import Tape
from promptvcr.policies.unwritten import RecordErrorWarning

SEED = "/raw/text"  # the unrelated interaction the plain run's file starts with: never requested
#: Response headers FakeProvider sets anew on every call: each run stores its own values.
VOLATILE_HEADERS = frozenset({"x-request-id", "request-id", "openai-processing-ms"})


def _chat(base_url: str) -> list[Any]:
    client = sdk_calls.openai_client(base_url, max_retries=0)
    answers = []
    for question in ("one", "two", "one", "one", "three"):  # repeats: each is recorded again
        messages = [{"role": "user", "content": question}]
        reply = client.chat.completions.create(model="gpt-4o", messages=messages)
        answers.append(reply.choices[0].message.content)
    stream = client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "two"}], stream=True
    )
    answers.append([chunk.choices[0].delta.content for chunk in stream if chunk.choices])
    return answers


def _mixed(base_url: str) -> list[Any]:
    with httpx2.Client() as client:
        answers: list[Any] = [client.get(f"{base_url}/raw/json").text for _ in range(2)]
        answers.append(client.post(f"{base_url}/raw/echo", content=b'{"a": 1}').text)
        answers.append(client.get(f"{base_url}/raw/binary").content)
        failing = sdk_calls.openai_client(base_url, max_retries=0).chat.completions
        with pytest.raises(openai.RateLimitError), pytest.warns(RecordErrorWarning):  # skipped, not written
            failing.create(model="gpt-4o", messages=[{"role": "user", "content": "FAIL 429"}])
    return answers + sdk_calls.anthropic_messages(base_url)


def _async(base_url: str) -> list[Any]:
    return asyncio.run(sdk_calls.openai_chat_async(base_url))


def _stored(path: Path, skip: int) -> list[dict[str, Any]]:
    """The file's interactions after the first ``skip``, without what differs run to run."""
    items = fileformat.load_document(path.read_text(encoding="utf-8"), path)[skip:]
    for item in items:
        item.pop("recorded", None)
        item["response"].pop("timing", None)
        headers = item["response"].get("headers", {})
        for name in VOLATILE_HEADERS.intersection(headers):  # kept (issue 41), random per call
            headers[name] = "<varies>"
        item["request"]["url"] = item["request"]["url"].split("/", 3)[3]  # the server's port
    return items


def _record(tmp_path: Path, name: str, mode: str, calls: Callable[[str], list[Any]], seeded: int) -> Any:
    path = tmp_path / name
    if seeded:
        with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="rewrite"):
            httpx2.get(f"{server.base_url}{SEED}")
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode=mode) as cassette:
        answers = calls(server.base_url)
    outcomes = [(p.outcome, p.request.method, p.request.url.split("/", 3)[3]) for p in cassette.played]
    return cassette, answers, outcomes, _stored(path, seeded)


@pytest.mark.parametrize("suffix", ["yaml", "json"])
@pytest.mark.parametrize("calls", [_chat, _mixed, _async], ids=["chat", "mixed", "async"])
def test_recording_onto_nothing_is_recording_with_lookups(
    tmp_path: Path, calls: Callable[[str], list[Any]], suffix: str
) -> None:
    plain, plain_answers, plain_outcomes, plain_stored = _record(tmp_path, f"a.{suffix}", "record", calls, 1)
    for mode in ("record", "rewrite"):
        keyless, answers, outcomes, stored = _record(tmp_path, f"{mode}.{suffix}", mode, calls, 0)
        assert keyless._keyless and not plain._keyless
        assert answers == plain_answers
        assert outcomes == plain_outcomes
        assert stored == plain_stored
        assert keyless.unplayed == [] and keyless.all_played
        # Its interactions are those a tape would hold, in order, and each plays back by its key.
        held = keyless.interactions
        assert [i.request.content for i in held] == [i.request.content for i in plain.interactions[1:]]
        tape = Tape(held, rules=default_rules())
        assert [tape.play(request_key(i.request, default_rules())) for i in held] == held


def test_a_recorded_request_replays_in_record_mode_once_the_file_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "again.yaml"
    with FakeProvider() as server:
        with promptvcr.use_cassette(path, record_mode="record") as first:
            sdk_calls.openai_client(server.base_url).chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
        with promptvcr.use_cassette(path, record_mode="record") as second:
            sdk_calls.openai_client(server.base_url).chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "hi"}]
            )
    assert first._keyless and not second._keyless
    assert [play.outcome for play in second.played] == ["replayed"]


def test_repeats_allowed_keep_the_lookup(tmp_path: Path) -> None:
    """With ``allow_playback_repeats`` a request sent again replays the answer just recorded."""
    with (
        FakeProvider() as server,
        promptvcr.use_cassette(
            tmp_path / "repeats.yaml", record_mode="record", allow_playback_repeats=True
        ) as cassette,
    ):
        client = sdk_calls.openai_client(server.base_url)
        for _ in range(2):
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert not cassette._keyless
    assert [play.outcome for play in cassette.played] == ["recorded", "replayed"]
