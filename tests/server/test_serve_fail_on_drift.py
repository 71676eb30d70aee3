"""``promptvcr serve --record-mode verify --fail-on-drift``: the server's exit status says the
provider's answers changed shape, naming the cassette and the answer; without the flag it
does not (verify reports drift, it does not fail on it). Client: the openai SDK, through the
server, to the loopback fake provider whose answers gain a field after the recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fake_provider
import openai
import pytest
from fake_provider import FakeProvider

from promptvcr.server import serve


def _ask(base_url: str, text: str) -> str:
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return answer.choices[0].message.content or ""


def test_serve_fails_on_drift_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = tmp_path / "served.yaml"
    with FakeProvider() as fake:
        upstreams = {"openai": fake.base_url}
        with serve(cassette, record_mode="record", upstreams=upstreams) as server:
            assert _ask(f"{server.url}/openai/v1", "hello") == "echo 1: hello"
        original = fake_provider.openai_completion

        def with_service_tier(answer: Any) -> dict[str, Any]:
            return {**original(answer), "service_tier": "default"}

        monkeypatch.setattr(fake_provider, "openai_completion", with_service_tier)
        with serve(cassette, record_mode="verify", upstreams=upstreams) as reported:
            _ask(f"{reported.url}/openai/v1", "hello")
        options = ["--fail-on-drift"]
        with serve(cassette, record_mode="verify", upstreams=upstreams, options=options) as failed:
            _ask(f"{failed.url}/openai/v1", "hello")
    assert reported.process.returncode == 0
    assert failed.process.returncode == 1
    log = failed.log_text
    assert f"drift (--fail-on-drift) in {cassette}: interactions[0] POST " in log
    assert "the body: new field 'service_tier'" in log
