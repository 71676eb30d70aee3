"""``on_record_error``: a 429, a 5xx or a read timeout received while recording is not the answer kept.

The code under test still gets the error (its retry or its error path runs for real); the
cassette keeps nothing for it, and says so, unless the test asks: ``on_record_error="keep"``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import openai
import pytest
from fake_provider import FakeProvider

import promptvcr
from promptvcr import RecordErrorWarning
from promptvcr.files import persister

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interceptors"))

from scripted_server import Script, scripted


def ask(base_url: str, text: str, **client: object) -> str | None:
    sdk = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0, **client)  # type: ignore[arg-type]
    reply = sdk.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content


@pytest.mark.parametrize(
    ("status", "error"), [(429, openai.RateLimitError), (500, openai.InternalServerError)]
)
def test_a_rate_limit_or_server_error_reaches_the_code_but_not_the_cassette(
    provider: FakeProvider, tmp_path: Path, status: int, error: type[Exception]
) -> None:
    path = tmp_path / "errors.yaml"
    with (
        pytest.warns(RecordErrorWarning) as warned,
        promptvcr.use_cassette(path, record_mode="record") as cassette,
    ):
        with pytest.raises(error):
            ask(provider.openai_base_url, f"FAIL {status}")
        assert ask(provider.openai_base_url, "hello") == "echo 2: hello"
    message = str(warned[0].message)
    assert f"got status {status} while recording {path}" in message
    assert 'on_record_error="keep"' in message
    assert [play.outcome for play in cassette.played] == ["passthrough", "recorded"]
    [kept] = persister.load(path).interactions
    assert kept.response.status == 200


def test_keep_records_the_error_and_replays_it(provider: FakeProvider, tmp_path: Path) -> None:
    path = tmp_path / "kept.json"
    keep = promptvcr.use_cassette(path, record_mode="record", on_record_error="keep")
    with keep, pytest.raises(openai.RateLimitError):
        ask(provider.openai_base_url, "FAIL 429")
    [kept] = persister.load(path).interactions
    assert kept.response.status == 429
    with promptvcr.use_cassette(path), pytest.raises(openai.RateLimitError):
        ask(provider.openai_base_url, "FAIL 429")
    assert len(provider.requests) == 1


def test_a_body_cut_by_a_read_timeout_is_not_kept(tmp_path: Path) -> None:
    first = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}\n\n'
    with scripted() as server:
        base = server.add("slow", Script("text/event-stream", [(0, first), (3.0, b"data: [DONE]\n\n")]))
        sdk = openai.OpenAI(api_key="sk-test", base_url=f"{base}/v1", max_retries=0, timeout=0.3)
        path = tmp_path / "timeout.yaml"
        with (
            pytest.warns(RecordErrorWarning, match="got a read timeout while recording"),
            promptvcr.use_cassette(path, record_mode="record"),
            pytest.raises(openai.APIError),
        ):
            for _ in sdk.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            ):
                pass
    assert not path.exists()


def test_an_unknown_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="on_record_error is 'drop'; expected one of skip, keep"):
        promptvcr.use_cassette(tmp_path / "c.yaml", on_record_error="drop")  # type: ignore[arg-type]
