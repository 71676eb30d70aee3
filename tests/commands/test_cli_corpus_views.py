"""``show`` and ``stats`` across the providers of the committed corpus subset (pydantic-ai, MIT).

The subset is vcrpy cassettes; they are converted once with the importer, then read as
promptvcr cassettes: Gemini, Mistral and OpenAI-responses streams reassembled, tokens from
every provider's own usage shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from botocore.eventstream import EventStreamBuffer

from promptvcr.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "pydantic-ai"


@pytest.fixture
def converted(converted_corpus: Path) -> Path:
    return converted_corpus


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_a_gemini_stream_reads_as_one_answer(converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, "show", str(converted / "google-gla/test_google_model_stream.yaml"))
    assert out == (
        "interactions[0] POST https://generativelanguage.googleapis.com/v1beta/models/"
        "gemini-2.0-flash-exp:streamGenerateContent?alt=sse\n"
        "  google | gemini-2.0-flash-exp | status 200 | streamed, 3 events | tokens 15 in, 8 out\n"
        "  system: You are a helpful chatbot.\n"
        "  user: What is the capital of France?\n"
        "  --- answer ---\n"
        "  assistant: The capital of France is Paris.\n"
        "\n"
    )


def test_mistral_thinking_given_as_parts_reads_as_text(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(capsys, "show", str(converted / "mistral/test_mistral_model_thinking_part_iter.yaml"))
    lines = out.splitlines()
    assert (
        lines[1]
        == "  mistral | magistral-medium-latest | status 200 | streamed, 159 events | tokens 10 in, 232 out"
    )
    assert lines[4].startswith("  thinking: Okay, the user is asking how to cross the street. I know that")
    assert lines[5] == "  assistant: To cross the street safely, follow these steps:"
    assert lines[-1] == "By following these steps, you can ensure a safe crossing."


def test_a_responses_stream_shows_the_tool_round_trip(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = converted / "deepseek/test_deepseek_responses[function_tool_stream].yaml"
    out = _out(capsys, "show", str(path), "--interaction", "1")
    assert out == (
        "interactions[1] POST https://api.deepseek.com/responses\n"
        "  api.deepseek.com | deepseek-v4-flash | status 200 | streamed, 21 events | tokens 440 in, 14 out\n"
        "  tools: get_temperature\n"
        "  user: What is the temperature in Tokyo?\n"
        '  tool call: get_temperature({"city": "Tokyo"}) [call_00_xjY8Z2BvSlzgEmmw0DtH0464]\n'
        "  tool result: [call_00_xjY8Z2BvSlzgEmmw0DtH0464] 21.0\n"
        "  --- answer ---\n"
        "  assistant: The current temperature in Tokyo is **21.0°C**.\n"
    )


def test_stats_over_every_provider_of_the_corpus(converted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [line.rstrip() for line in _out(capsys, "stats", str(converted)).splitlines()]
    assert lines[0].split() == [
        "provider",
        "/",
        "model",
        "cassettes",
        "requests",
        "streamed",
        "tokens",
        "in",
        "tokens",
        "out",
    ]
    # Bedrock's 5 converse-stream answers count as streamed, with the usage of their frames.
    assert lines[-1].split() == ["total", "68", "126", "18", "48,751", "13,360"]
    providers = {line.split()[0]: line.split()[1:] for line in lines[1:-1] if not line.startswith(" ")}
    assert providers["bedrock"] == _bedrock_figures_from_the_originals()  # 17, 22, 5, 7,396, 2,102
    assert providers["cohere"] == ["3", "4", "0", "3,152", "77"]  # v2 usage: usage.tokens


def _usage(response: dict[str, Any]) -> tuple[bool, int, int]:
    """Streamed, tokens in, tokens out of one original vcrpy response, read without promptvcr:
    converse-stream frames through botocore's own event-stream parser, their ``metadata``
    event's usage; JSON answers their Converse (``inputTokens``) or Anthropic (``input_tokens``
    plus cache) usage. count-tokens answers (a top-level ``inputTokens``) spent nothing."""
    headers = {name.lower(): value for name, value in response["headers"].items()}
    if headers.get("content-type") == ["application/vnd.amazon.eventstream"]:
        frames = EventStreamBuffer()
        frames.add_data(response["body"]["string"])
        (usage,) = (json.loads(f.payload)["usage"] for f in frames if f.headers[":event-type"] == "metadata")
        return True, usage["inputTokens"], usage["outputTokens"]
    usage = (response.get("parsed_body") or {}).get("usage", {})
    if "inputTokens" in usage:
        return False, usage["inputTokens"], usage["outputTokens"]
    cached = usage.get("cache_creation_input_tokens", 0) + usage.get("cache_read_input_tokens", 0)
    return False, usage.get("input_tokens", 0) + cached, usage.get("output_tokens", 0)


def _bedrock_figures_from_the_originals() -> list[str]:
    """The bedrock row of ``stats`` (cassettes, requests, streamed, tokens in, out), counted
    from the original cassettes: every request to a ``/model/<id>/...`` path (Bedrock Runtime,
    and the gateway's ``/bedrock/model/...``), in whichever provider's folder it sits."""
    cassettes: set[Path] = set()
    requests = streamed = tokens_in = tokens_out = 0
    for path in sorted(CORPUS.rglob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            if "/model/" not in urlsplit(interaction["request"]["uri"]).path:
                continue
            stream, used_in, used_out = _usage(interaction["response"])
            cassettes.add(path)
            requests += 1
            streamed += stream
            tokens_in += used_in
            tokens_out += used_out
    return [f"{count:,}" for count in (len(cassettes), requests, streamed, tokens_in, tokens_out)]


def test_a_bedrock_model_id_keeps_its_version_suffix(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """AnthropicBedrock sends ``/model/anthropic.claude-sonnet-4-20250514-v1:0/count-tokens``
    with the colon unescaped (boto3 sends ``%3A``): both are the same model, shown whole."""
    out = _out(capsys, "ls", str(converted / "bedrock/test_anthropic_bedrock_count_tokens_real_api.yaml"))
    assert out.splitlines()[1].split(" | ")[2] == "anthropic.claude-sonnet-4-20250514-v1:0"
    lines = _out(capsys, "stats", str(converted / "bedrock")).splitlines()
    assert [line.split() for line in lines if "claude-sonnet-4-20250514" in line] == [
        ["anthropic.claude-sonnet-4-20250514-v1:0", "2", "2", "0", "unknown", "unknown"]
    ]  # count-tokens answers record no usage: unknown, not zero
