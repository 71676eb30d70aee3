"""``RecordMode.verify``: recorded requests go live, and the live answer is compared by structure.

Each test records real SDK traffic against the loopback fake provider, then changes what the
provider answers (a new field, a renamed stream event, another tool, another finish reason) by
swapping one of its answer builders, and verifies: the drift names exactly that change. A live
answer whose text alone differs (other words, more stream deltas) is no drift.
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import fake_provider
import openai
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr import Drift, DriftWarning, RecordMode

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def openai_client(provider: FakeProvider) -> openai.OpenAI:
    return openai.OpenAI(api_key="sk-test", base_url=provider.openai_base_url, max_retries=0)


def anthropic_client(provider: FakeProvider) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=provider.base_url, max_retries=0)


def chat(provider: FakeProvider, text: str = "hello there", **extra: Any) -> Any:
    return openai_client(provider).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], **extra
    )


def stream_chat(provider: FakeProvider, text: str = "hello there", **extra: Any) -> str:
    stream = openai_client(provider).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], stream=True, **extra
    )
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def anthropic_stream(provider: FakeProvider, text: str = "hello there") -> str:
    with anthropic_client(provider).messages.stream(
        model="claude-x", max_tokens=64, messages=[{"role": "user", "content": text}]
    ) as stream:
        return "".join(stream.text_stream)


def anthropic_message(provider: FakeProvider, text: str = "hello there") -> Any:
    return anthropic_client(provider).messages.create(
        model="claude-x", max_tokens=64, messages=[{"role": "user", "content": text}]
    )


def record(path: Path, call: Callable[[], Any]) -> None:
    with promptvcr.use_cassette(path, record_mode="record") as cassette:
        call()
    assert [play.outcome for play in cassette.played] == ["recorded"]


def verify(path: Path, call: Callable[[], Any]) -> tuple[promptvcr.Cassette, Any, list[Any]]:
    before = path.read_bytes(), os.stat(path).st_mtime_ns
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        with promptvcr.use_cassette(path, record_mode="verify") as cassette:
            result = call()
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before  # verify writes nothing
    return cassette, result, [w for w in warned if issubclass(w.category, DriftWarning)]


def test_an_unchanged_provider_is_no_drift_though_every_text_and_id_differs(
    provider: FakeProvider, tmp_path: Path
) -> None:
    path = tmp_path / "chat.yaml"
    record(path, lambda: chat(provider))
    cassette, reply, drift_warnings = verify(path, lambda: chat(provider))
    assert reply.choices[0].message.content == "echo 2: hello there"  # the live answer reached the code
    assert [play.outcome for play in cassette.played] == ["verified"]
    assert cassette.drift == [] and drift_warnings == []
    assert len(provider.requests) == 2


def test_a_new_field_in_the_answer_is_reported(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.json"
    record(path, lambda: chat(provider))
    original = fake_provider.openai_completion

    def with_service_tier(answer: Any) -> dict[str, Any]:
        completion = original(answer)
        completion["service_tier"] = "default"
        completion["choices"][0]["message"]["annotations"] = []
        del completion["system_fingerprint"]
        return completion

    monkeypatch.setattr(fake_provider, "openai_completion", with_service_tier)
    cassette, _, drift_warnings = verify(path, lambda: chat(provider))
    [drift] = cassette.drift
    assert drift == Drift(
        str(path),
        "POST",
        f"{provider.openai_base_url}/chat/completions",
        (
            "the body: field 'system_fingerprint' is gone",
            "choices[].message: new field 'annotations'",
            "the body: new field 'service_tier'",
        ),
        position=0,
    )
    [warned] = drift_warnings
    assert f"1 answer(s) of {path} differ from the recording" in str(warned.message)
    assert "choices[].message: new field 'annotations'" in str(warned.message)


def test_a_renamed_stream_event_is_reported_and_more_text_deltas_are_not(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "stream.yaml"
    record(path, lambda: anthropic_stream(provider))
    # Live, the answer comes one character per delta: many more content_block_delta events.
    monkeypatch.setattr(fake_provider, "word_pieces", lambda text: list(text))
    cassette, text, _ = verify(path, lambda: anthropic_stream(provider))
    assert text == "echo 2: hello there" and cassette.drift == []

    original = fake_provider.anthropic_events

    def renamed(answer: Any) -> list[bytes]:
        return [event.replace(b"ping", b"keepalive") for event in original(answer)]

    monkeypatch.setattr(fake_provider, "anthropic_events", renamed)
    cassette, _, _ = verify(path, lambda: anthropic_stream(provider))
    [drift] = cassette.drift
    assert drift.differences == (
        "stream events: were message_start, content_block_start, ping, content_block_delta, "
        "content_block_stop, message_delta, message_stop; now message_start, content_block_start, "
        "keepalive, content_block_delta, content_block_stop, message_delta, message_stop",
    )


def test_another_tool_name_and_argument_keys_in_a_stream_are_reported(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tools.yaml"
    record(path, lambda: stream_chat(provider, "weather in Paris?", tools=[WEATHER_TOOL]))
    original = fake_provider.openai_answer

    def other_tool(call: Any, body: dict[str, Any]) -> Any:
        answer = original(call, body)
        return dataclasses.replace(answer, tool_name="get_forecast", tool_args={"city": "x", "days": 3})

    monkeypatch.setattr(fake_provider, "openai_answer", other_tool)
    cassette, _, _ = verify(path, lambda: stream_chat(provider, "weather in Paris?", tools=[WEATHER_TOOL]))
    [drift] = cassette.drift
    assert drift.differences == ("tool calls: were get_weather(city); now get_forecast(city, days)",)


def test_another_finish_reason_is_reported(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "message.yaml"
    record(path, lambda: anthropic_message(provider))
    original = fake_provider.anthropic_message

    def cut_short(answer: Any) -> dict[str, Any]:
        return {**original(answer), "stop_reason": "max_tokens"}

    monkeypatch.setattr(fake_provider, "anthropic_message", cut_short)
    cassette, message, _ = verify(path, lambda: anthropic_message(provider))
    assert message.stop_reason == "max_tokens"
    [drift] = cassette.drift
    assert drift.differences == ("finish reason: was end_turn, now max_tokens",)
    assert drift.where == f"interactions[0] POST {provider.base_url}/v1/messages"


def test_a_request_with_no_recording_goes_live_and_is_reported(
    provider: FakeProvider, tmp_path: Path
) -> None:
    path = tmp_path / "chat.yaml"
    record(path, lambda: chat(provider))
    cassette, reply, _ = verify(path, lambda: (chat(provider), chat(provider, "something new"))[1])
    assert reply.choices[0].message.content == "echo 3: something new"
    assert [play.outcome for play in cassette.played] == ["verified", "passthrough"]
    [drift] = cassette.drift
    assert drift.position is None
    assert drift.differences == (promptvcr.policies.verifying.NOT_RECORDED,)
    assert cassette.record_mode is RecordMode.VERIFY


def test_verify_is_a_record_mode_of_the_environment(
    provider: FakeProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "chat.yaml"
    record(path, lambda: chat(provider))
    monkeypatch.setenv("PROMPTVCR_RECORD_MODE", "verify")
    with promptvcr.use_cassette(path) as cassette:
        chat(provider)
    assert cassette.record_mode is RecordMode.VERIFY
    assert [play.outcome for play in cassette.played] == ["verified"]
