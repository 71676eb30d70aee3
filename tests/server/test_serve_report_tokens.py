"""Each cassette's report from ``promptvcr serve`` says the tokens its answers reported, per
outcome: what a suite in another language prints as spent recording and saved replaying (the
npm package's end-of-run report)."""

from __future__ import annotations

from pathlib import Path

import openai
from fake_provider import FakeProvider

from promptvcr.server import serve


def _ask(base_url: str, text: str) -> openai.types.CompletionUsage | None:
    client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return answer.usage


def test_the_stop_and_the_report_give_the_tokens_recorded_then_replayed(tmp_path: Path) -> None:
    cassette = tmp_path / "tokens.yaml"
    with FakeProvider() as fake, serve(None, upstreams={"openai": fake.base_url}, cwd=tmp_path) as server:
        server.admin("start", {"cassette": str(cassette), "record_mode": "record"})
        usages = [_ask(f"{server.url}/openai/v1", text) for text in ("one question", "and a second one")]
        _, recorded = server.admin("stop", {"cassette": str(cassette)})
        server.admin("start", {"cassette": str(cassette)})
        for text in ("one question", "and a second one"):
            _ask(f"{server.url}/openai/v1", text)
        _, replayed = server.admin("stop", {"cassette": str(cassette)})
        server.admin("start", {"cassette": str(cassette)})  # nothing played: no tokens
        _, idle = server.admin("stop", {"cassette": str(cassette)})
    spent = {
        "input": sum(u.prompt_tokens for u in usages if u is not None),
        "output": sum(u.completion_tokens for u in usages if u is not None),
    }
    assert spent["input"] > 0 and spent["output"] > 0
    assert recorded["tokens"] == {"recorded": spent}
    assert replayed["tokens"] == {"replayed": spent}
    assert idle["tokens"] == {}
    reported = [entry["tokens"] for entry in server.report["cassettes"]]
    assert reported == [{"recorded": spent}, {"replayed": spent}, {}]
