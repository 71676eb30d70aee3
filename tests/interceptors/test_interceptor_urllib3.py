"""urllib3, requests and botocore: recorded against loopback servers, replayed offline."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
import urllib3
from botocore.config import Config
from fake_bedrock import FakeBedrock
from fake_provider import FakeProvider
from network_guard import no_network

import promptvcr

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}]}
OFFLINE = "http://127.0.0.1:9"
MODEL = "us.amazon.nova-micro-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "What is up?"}]}]


def _requests_calls(base: str) -> list[Any]:
    seen: list[Any] = []
    with requests.Session() as session:
        seen.append(session.post(f"{base}/v1/chat/completions", json=CHAT).json()["choices"][0]["message"])
        streamed = session.post(f"{base}/v1/chat/completions", json={**CHAT, "stream": True}, stream=True)
        seen.append([line for line in streamed.iter_lines() if line][-1])
        seen.append(len(session.get(f"{base}/raw/binary").content))
    pool = urllib3.PoolManager()
    seen.append(pool.request("GET", f"{base}/raw/json").json()["greeting"])
    return seen


def test_requests_and_urllib3_record_then_replay_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record") as cassette:
        recorded = _requests_calls(fake.base_url)
    assert [p.outcome for p in cassette.played] == ["recorded"] * 4
    assert len(fake.requests) == 4  # each request on the wire once
    assert recorded[1] == b"data: [DONE]" and recorded[2] == 256
    text = path.read_text()
    assert "events:" in text and "content-encoding" not in text  # gzip stored decoded
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        assert _requests_calls(OFFLINE) == recorded
    assert attempts == [] and [p.outcome for p in replay.played] == ["replayed"] * 4


def test_a_response_closed_early_is_recorded_as_far_as_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    with FakeProvider() as fake, promptvcr.use_cassette(path, record_mode="record"):
        response = requests.post(
            f"{fake.base_url}/v1/chat/completions", json={**CHAT, "stream": True}, stream=True
        )
        first = next(response.iter_content(16))
        response.close()
    (interaction,) = _load(path)
    assert interaction.response.end == "closed" and interaction.response.content == first


def _load(path: Path) -> list[promptvcr.Interaction]:
    with promptvcr.use_cassette(path) as cassette:
        return cassette.interactions


def test_a_miss_raises_in_the_caller_and_sends_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    miss = pytest.raises(promptvcr.CassetteMiss, match=r"POST http://127\.0\.0\.1:9/v1/chat")
    with no_network(monkeypatch) as attempts, miss, promptvcr.use_cassette(tmp_path / "empty.yaml"):
        requests.post(f"{OFFLINE}/v1/chat/completions", json=CHAT)
    assert attempts == []


def test_a_request_from_a_worker_thread_is_intercepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            requests.post(f"{OFFLINE}/v1/chat/completions", json=CHAT)
        except BaseException as error:
            errors.append(error)

    # The worker swallowed the miss: leaving the block raises it.
    caught = pytest.raises(promptvcr.CassetteMiss, match="caught this CassetteMiss")
    with (
        no_network(monkeypatch) as attempts,
        caught,
        promptvcr.use_cassette(tmp_path / "empty.yaml") as cassette,
    ):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(10)
    assert attempts == [] and len(cassette.missed) == 1
    assert isinstance(errors[0], promptvcr.CassetteMiss)


def _bedrock(endpoint: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="SECRET-aws-0123456789",
        config=Config(retries={"max_attempts": 1}),
    )


def _bedrock_calls(client: Any) -> list[Any]:
    answer = client.converse(modelId=MODEL, messages=MESSAGES)
    stream = client.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"]
    events = list(stream)
    return [answer["output"], answer["usage"], events]


def test_boto3_converse_and_converse_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    path = tmp_path / "bedrock.yaml"
    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        recorded = _bedrock_calls(_bedrock(fake.base_url))
    assert len(fake.requests) == 2
    assert [next(iter(event)) for event in recorded[2]][:2] == ["messageStart", "contentBlockDelta"]
    text = path.read_text()
    assert "frames:" in text and "SECRET-aws" not in text and "AKIDEXAMPLE" not in text
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        assert _bedrock_calls(_bedrock(OFFLINE)) == recorded
    assert attempts == [] and [p.outcome for p in replay.played] == ["replayed", "replayed"]


def test_event_stream_replay_is_byte_exact(tmp_path: Path) -> None:
    """The bytes the application reads on replay are the bytes the server sent."""
    path = tmp_path / "raw.yaml"
    url = f"/model/{MODEL}/converse-stream"
    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        live = urllib3.PoolManager().request("POST", fake.base_url + url, json={"messages": MESSAGES}).data
    assert "frames:" in path.read_text()
    with promptvcr.use_cassette(path):
        replayed = urllib3.PoolManager().request("POST", OFFLINE + url, json={"messages": MESSAGES}).data
    assert replayed == live and live.count(b":event-type") == 9
