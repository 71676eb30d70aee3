"""A Bedrock error replays as the same botocore exception: botocore names the error from the
``x-amzn-ErrorType`` response header (Bedrock's body holds only a message), so the cassette
must keep that header, or ``except client.exceptions.ValidationException`` stops matching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from fake_bedrock import FakeBedrock
from network_guard import no_network

import promptvcr


def _client(endpoint: str) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=endpoint,
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-real-secret",
        config=Config(retries={"total_max_attempts": 1}),
    )


def _converse(client: Any) -> Any:
    return client.converse(
        modelId="invalid-model:0", messages=[{"role": "user", "content": [{"text": "hi"}]}]
    )


def test_a_recorded_validation_error_replays_as_validation_exception(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "error.yaml"
    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        client = _client(fake.base_url)
        with pytest.raises(client.exceptions.ValidationException) as live:
            _converse(client)
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path) as replay:
        client = _client("http://127.0.0.1:9")
        with pytest.raises(client.exceptions.ValidationException) as replayed:
            _converse(client)
    assert replayed.value.response["Error"] == live.value.response["Error"]
    assert replayed.value.response["Error"]["Message"] == "The provided model identifier is invalid."
    assert attempts == [] and [p.outcome for p in replay.played] == ["replayed"]


def test_invoke_model_replays_the_results_bedrock_sends_as_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "invoke.yaml"

    def invoke(client: Any) -> dict[str, Any]:
        answer = client.invoke_model(modelId="cohere.embed-english-v3", body=b'{"texts":["hi"]}')
        return {k: answer[k] for k in ("contentType", "serviceTier", "performanceConfigLatency")} | {
            "body": json.loads(answer["body"].read())  # JSON replays by meaning, written compactly
        }

    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        live = invoke(_client(fake.base_url))
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path):
        replayed = invoke(_client("http://127.0.0.1:9"))
    assert live["serviceTier"] == "flex" and live["body"] == {"echo": 1}
    assert replayed == live
    assert attempts == []
