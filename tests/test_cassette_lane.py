"""A request the tape holds takes a short path through ``Cassette.handle`` when nothing else
can apply (no fault declared, no pacing, not ``verify``: issue 22). Declaring a fault that
never fires sends every request down the full path instead: both must serve, keep and
refuse exactly the same requests.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sdk_calls
from fake_provider import FakeProvider

import promptvcr
from promptvcr import faults

QUESTIONS = ["one", "two", "one", "three", "two", "one"]  # "one" twice recorded, asked a third time


def chat(client: Any, question: str) -> str:
    reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
    return str(reply.choices[0].message.content)


def _run(path: Path, **options: Any) -> tuple[promptvcr.Cassette, list[str]]:
    client = sdk_calls.openai_client(sdk_calls.OFFLINE)
    raw = f"{sdk_calls.OFFLINE}/raw/json"
    answers: list[str] = []
    cassette = promptvcr.use_cassette(path, **options)

    def ask(call: Callable[[], str]) -> None:
        try:
            answers.append(call())
        except promptvcr.CassetteMiss:
            answers.append("missed")

    with pytest.raises(promptvcr.CassetteMiss), cassette:  # misses caught below: the exit raises them
        for question in [*QUESTIONS, "never recorded"]:
            ask(lambda question=question: chat(client, question))
            ask(lambda: httpx2.get(raw).text)
    return cassette, answers


@pytest.mark.parametrize("repeats", [False, True])
def test_the_short_path_serves_what_the_full_path_serves(tmp_path: Path, repeats: bool) -> None:
    path = tmp_path / "lane.yaml"
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record"):
        client = sdk_calls.openai_client(server.base_url)
        for question in QUESTIONS[:5]:  # "one" twice; the runs ask it a third time
            client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": question}])
            httpx2.get(f"{server.base_url.removesuffix('/v1')}/raw/json")

    never = faults.http_error(500, path="/nowhere")  # declared, never fires: the full path
    short, short_answers = _run(path, allow_playback_repeats=repeats)
    full, full_answers = _run(path, allow_playback_repeats=repeats, faults=[never])
    assert short_answers == full_answers
    # Without repeats: the third "one", the sixth and seventh GET; always: the one never recorded.
    assert short_answers.count("missed") == (1 if repeats else 4)
    assert [(p.outcome, p.request, p.response) for p in short.played] == [
        (p.outcome, p.request, p.response) for p in full.played
    ]
    assert short.missed == full.missed
    assert [p.outcome for p in short.played].count("replayed") == (13 if repeats else 10)


def test_a_request_sent_with_other_bytes_than_recorded_is_served_by_its_key(tmp_path: Path) -> None:
    """The short path finds a request by the bytes it was recorded with; the same JSON laid
    out another way (another SDK version, a hand-written call) has the same key, and the
    full path serves it, in recorded order."""
    path = tmp_path / "bytes.yaml"
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "one"}]}
    compact = json.dumps(body, separators=(",", ":"))
    headers = {"content-type": "application/json"}
    with FakeProvider() as server, promptvcr.use_cassette(path, record_mode="record"):
        url = f"{server.openai_base_url}/chat/completions"
        recorded = [httpx2.post(url, content=compact, headers=headers).json() for _ in range(2)]
    with promptvcr.use_cassette(path) as cassette:
        again = [
            httpx2.post(url, content=json.dumps(body, indent=2), headers=headers).json(),
            httpx2.post(url, content=compact, headers=headers).json(),
        ]
    assert again == recorded
    assert recorded[0] != recorded[1]  # two answers, each served once, in order
    assert [p.outcome for p in cassette.played] == ["replayed", "replayed"]
