"""The cassette format's JSON Schema (shipped with the package) holds for the example
cassettes and for freshly recorded ones, YAML and JSON, in-process and through the server."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest
import yaml
from fake_provider import FakeProvider
from serve_clients import run_curl

from promptvcr import use_cassette
from promptvcr.server import serve

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cassettes"


def _validator() -> jsonschema.Draft202012Validator:
    text = (resources.files("promptvcr") / "cassettes" / "cassette.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["version"] == {
        "const": 1,
        "description": schema["properties"]["version"]["description"],
    }
    return jsonschema.Draft202012Validator(schema)


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _errors(data: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in _validator().iter_errors(data)]


def test_the_example_cassettes_follow_the_schema() -> None:
    examples = sorted(EXAMPLES.rglob("*.yaml"))
    assert len(examples) >= 2
    for path in examples:
        assert _errors(_load(path)) == [], path


def test_fresh_recordings_follow_the_schema(tmp_path: Path) -> None:
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "schema"}]}
    with FakeProvider() as fake:
        client = openai.OpenAI(api_key="sk-test", base_url=fake.openai_base_url, max_retries=0)
        for name in ("in_process.yaml", "in_process.json"):
            with use_cassette(tmp_path / name, record_mode="record", timing="recorded"):
                client.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": "a"}]
                )
                stream = client.chat.completions.create(
                    model="gpt-4o-mini", messages=[{"role": "user", "content": "b"}], stream=True
                )
                list(stream)
                client.embeddings.create(model="text-embedding-3-small", input="c")
        for name in ("served.yaml", "served.json"):
            with serve(tmp_path / name, record_mode="record", upstreams={"openai": fake.base_url}) as server:
                for body in (chat, {**chat, "stream": True}):
                    assert run_curl(f"{server.url}/openai/v1/chat/completions", json.dumps(body))[0] == 200
    for name in ("in_process.yaml", "in_process.json", "served.yaml", "served.json"):
        data = _load(tmp_path / name)
        assert len(data["interactions"]) in (2, 3)
        assert _errors(data) == [], name


@pytest.mark.parametrize(
    ("broken", "why"),
    [
        (lambda d: d.pop("version"), "'version' is a required property"),
        (lambda d: d.update(version=2), "1 was expected"),
        (lambda d: d["interactions"][0]["response"].update(status="ok"), "'ok' is not of type 'integer'"),
        (lambda d: d["interactions"][0]["response"].update(text="x"), "is valid under each of"),
    ],
)
def test_the_schema_rejects_what_promptvcr_refuses(broken: Any, why: str) -> None:
    data = _load(sorted(EXAMPLES.rglob("*.yaml"))[0])
    broken(data)
    assert any(why in error for error in _errors(data)), _errors(data)
