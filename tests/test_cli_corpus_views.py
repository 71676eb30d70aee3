"""``show`` and ``stats`` across the providers of the committed corpus subset (pydantic-ai, MIT).

The subset is vcrpy cassettes; they are converted once with the importer, then read as
promptvcr cassettes: Gemini, Mistral and OpenAI-responses streams reassembled, tokens from
every provider's own usage shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from promptvcr.cli import main
from promptvcr.importers import import_vcr

CORPUS = Path(__file__).resolve().parent / "corpus" / "pydantic-ai"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("converted")
    report = import_vcr([CORPUS], out)
    assert not report.failed and not report.partial
    return out


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
    assert lines[-1].split() == ["total", "68", "126", "13", "46,596", "12,857"]
    providers = {line.split()[0]: line.split()[1:] for line in lines[1:-1] if not line.startswith(" ")}
    # Converse usage: inputTokens/outputTokens
    assert providers["bedrock"] == ["17", "22", "0", "5,241", "1,599"]
    assert providers["cohere"] == ["3", "4", "0", "3,152", "77"]  # v2 usage: usage.tokens
