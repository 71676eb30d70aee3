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


#: The headers FakeBedrock's InvokeModel answer carries besides the body (tests/fake_bedrock.py).
INVOKE_HEADERS = {
    "Content-Type": "application/json",
    "X-Amzn-Bedrock-Service-Tier": "flex",
    "X-Amzn-Bedrock-PerformanceConfig-Latency": "standard",
}


def _header_results(client: Any) -> dict[str, str]:
    """The InvokeModel results the installed botocore reads from one of :data:`INVOKE_HEADERS`,
    as ``{result: header}``, from its service model. Which there are depends on the botocore
    (1.35 has no ``serviceTier``): the test expects what this one's model declares."""
    shape = client.meta.service_model.operation_model("InvokeModel").output_shape
    sent = {header.lower(): header for header in INVOKE_HEADERS}
    return {
        name: sent[member.serialization["name"].lower()]
        for name, member in shape.members.items()
        if member.serialization.get("location") == "header"
        and member.serialization["name"].lower() in sent
    }


def test_invoke_model_replays_the_results_bedrock_sends_as_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "invoke.yaml"

    def invoke(client: Any) -> dict[str, Any]:
        answer = client.invoke_model(modelId="cohere.embed-english-v3", body=b'{"texts":["hi"]}')
        received = answer["ResponseMetadata"]["HTTPHeaders"]  # every header, whatever the model
        return {
            "results": {name: answer[name] for name in _header_results(client)},
            "headers": {header: received[header.lower()] for header in INVOKE_HEADERS},
            "body": json.loads(answer["body"].read()),  # JSON replays by meaning, written compactly
        }

    with FakeBedrock() as fake, promptvcr.use_cassette(path, record_mode="record"):
        client = _client(fake.base_url)
        live = invoke(client)
    with no_network(monkeypatch) as attempts, promptvcr.use_cassette(path):
        replayed = invoke(_client("http://127.0.0.1:9"))
    results = _header_results(client)
    assert "contentType" in results  # every botocore: the header results are not all gone
    assert live["results"] == {name: INVOKE_HEADERS[header] for name, header in results.items()}
    assert live["headers"] == INVOKE_HEADERS and live["body"] == {"echo": 1}
    assert replayed == live
    assert attempts == []
