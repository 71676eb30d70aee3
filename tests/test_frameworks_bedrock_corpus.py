"""Real Bedrock traffic from pydantic-ai's corpus (see tests/data/bedrock_corpus/README.md),
converted to promptvcr cassettes, replayed through boto3 ``converse`` and ``converse_stream``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
import urllib3
import yaml
from botocore.config import Config
from network_guard import no_network

import promptvcr

DATA = Path(__file__).parent / "data" / "bedrock_corpus"
MODEL = "us.amazon.nova-micro-v1:0"


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-real-secret",
        config=Config(retries={"max_attempts": 1}),
    )


def _original(name: str) -> dict[str, Any]:
    interaction: dict[str, Any] = yaml.safe_load((DATA / "original" / name).read_text())["interactions"][0]
    return interaction


def test_converse_replays_the_recorded_answer(bedrock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = json.loads(_original("test_stop_settings[bedrock].yaml")["request"]["body"])
    with (
        no_network(monkeypatch) as attempts,
        promptvcr.use_cassette(DATA / "test_stop_settings[bedrock].yaml") as c,
    ):
        answer = bedrock.converse(modelId=MODEL, **sent)
    assert answer["output"]["message"]["content"] == [{"text": "The city of Paris"}]
    assert answer["usage"]["totalTokens"] == 29
    assert attempts == [] and [p.outcome for p in c.played] == ["replayed"]


def test_converse_stream_replays_every_event(bedrock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = json.loads(_original("test_bedrock_model_stream.yaml")["request"]["body"])
    with (
        no_network(monkeypatch) as attempts,
        promptvcr.use_cassette(DATA / "test_bedrock_model_stream.yaml") as c,
    ):
        events = list(bedrock.converse_stream(modelId=MODEL, **sent)["stream"])
    text = "".join(e["contentBlockDelta"]["delta"]["text"] for e in events if "contentBlockDelta" in e)
    assert text.startswith("The capital of France is Paris.")
    assert list(events[0]) == ["messageStart"] and list(events[-1]) == ["metadata"]
    assert attempts == [] and [p.outcome for p in c.played] == ["replayed"]


def test_converse_stream_bytes_are_the_bytes_aws_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    original = _original("test_bedrock_model_stream.yaml")
    url = original["request"]["uri"]
    with no_network(monkeypatch), promptvcr.use_cassette(DATA / "test_bedrock_model_stream.yaml"):
        replayed = urllib3.PoolManager().request("POST", url, body=original["request"]["body"]).data
    assert replayed == original["response"]["body"]["string"]
