"""``promptvcr ls``, ``stats`` and ``show`` on the committed example cassettes, output exact.

The examples are copied so their age can be fixed; COLUMNS and NO_COLOR make rich print
plain text at a known width, as a CI log would get it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml
from fake_bedrock import encode_frame

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cli import main
from promptvcr.files import fileformat

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cassettes"
BEDROCK = Path(__file__).resolve().parents[1] / "data" / "bedrock_corpus"
WEATHER = "test_weather_assistant/test_assistant_calls_the_weather_tool_then_answers.yaml"
STREAMING = "test_streaming_assistant/test_answer_streams_piece_by_piece.yaml"


@pytest.fixture
def cassettes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    root = tmp_path / "cassettes"
    shutil.copytree(EXAMPLES, root)
    three_days_ago = time.time() - 3 * 86400 - 60
    for path in root.rglob("*"):
        os.utime(path, (three_days_ago, three_days_ago))
    return root


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_ls_lists_each_cassette_with_its_figures(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "ls", str(cassettes))
    assert code == 0
    assert out == (
        f"{STREAMING}\n"
        "  1 interaction | anthropic | claude-sonnet-4-0 | streamed | 21.2 KiB | 3d old "
        "| tokens 43 in, 282 out\n"
        f"{WEATHER}\n"
        "  2 interactions | openai | gpt-5-mini | not streamed | 3.6 KiB | 3d old | tokens 299 in, 194 out\n"
        "2 cassettes, 24.9 KiB, tokens 342 in, 476 out\n"
    )


def test_ls_names_the_files_it_skipped(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cassettes / "notes.yaml").write_text("just: a mapping\n", encoding="utf-8")
    code, out = _run(capsys, "ls", str(cassettes), "--show-skipped")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "1 file(s) skipped, not promptvcr cassettes:",
        f"  notes.yaml: Cassette {cassettes / 'notes.yaml'} cannot be read: it has no 'version' field, "
        "which a promptvcr cassette ends with: the file was cut short, or it is not a promptvcr cassette. "
        "It was left untouched. Fix or delete it, then record it again (PROMPTVCR_RECORD_MODE=rewrite).",
    ]


def test_ls_of_a_missing_folder_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "ls", str(tmp_path / "nowhere"))
    assert code == 1
    assert out == f"promptvcr ls: {tmp_path / 'nowhere'} does not exist.\n"


def test_stats_sums_requests_and_tokens_per_provider_and_model(
    cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, "stats", str(cassettes))
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()] == [
        "provider / model     cassettes  requests  streamed  tokens in  tokens out",
        "anthropic                    1         1         1         43         282",
        "  claude-sonnet-4-0          1         1         1         43         282",
        "openai                       1         2         0        299         194",
        "  gpt-5-mini                 1         2         0        299         194",
        "total                        2         3         1        342         476",
    ]


def test_show_reads_tool_calls_and_results(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "show", str(cassettes / WEATHER), "--interaction", "1")
    assert code == 0
    assert out == (
        "interactions[1] POST https://api.openai.com/v1/chat/completions\n"
        "  openai | gpt-5-mini | status 200 | not streamed | tokens 167 in, 171 out\n"
        "  tools: get_weather\n"
        "  user: What's the weather in Paris?\n"
        '  tool call: get_weather({"city":"Paris"}) [call_aDdJTteHrpMdhdkEkyxjxEHH]\n'
        "  tool result: [call_aDdJTteHrpMdhdkEkyxjxEHH] Sunny, 22C in Paris\n"
        "  --- answer ---\n"
        "  assistant: It's sunny in Paris right now, about 22°C (≈72°F). Would you like an hourly "
        "forecast, the forecast for tomorrow, or weather for another city?\n"
    )


def test_show_reassembles_a_streamed_answer(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "show", str(cassettes / STREAMING))
    assert code == 0
    lines = out.splitlines()
    assert lines[:5] == [
        "interactions[0] POST https://api.anthropic.com/v1/messages?beta=true",
        "  anthropic | claude-sonnet-4-0 | status 200 | streamed, 118 events | tokens 43 in, 282 out",
        "  user: How do I cross the street?",
        "  --- answer ---",
        "  thinking: This is a straightforward question about pedestrian safety. I should provide clear, "
        "helpful advice about how to safely cross a street. This is basic safety information that could help "
        "prevent accidents.",
    ]
    assert "  assistant: Here are the basic steps for safely crossing the street:" in lines
    assert lines[-1] == (
        "The key is to be visible, alert, and predictable in your movements. Always prioritize safety over "
        "speed when crossing streets."
    )
    assert "message_start" not in out  # the raw events only with --raw


def test_show_raw_adds_the_recorded_events(cassettes: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "show", str(cassettes / STREAMING), "--raw")
    assert code == 0
    raw = out.split("  --- raw events ---\n", 1)[1].splitlines()
    assert len(raw) == 118
    assert raw[-1] == '    {"event": "message_stop", "data": {"type": "message_stop"}}'


def test_show_refuses_an_interaction_that_is_not_there(
    cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, "show", str(cassettes / WEATHER), "-i", "2")
    assert code == 1
    assert "has 2 interaction(s), numbered 0 to 1; there is no interactions[2]." in out.replace("\n", "")


def test_show_reports_a_file_that_is_not_a_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("interactions: [\n", encoding="utf-8")
    code, out = _run(capsys, "show", str(broken))
    assert code == 1
    assert str(broken) in out.replace("\n", "")


def test_ls_counts_a_bedrock_converse_stream_as_streamed_with_its_usage(
    cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recorded converse-stream answer (AWS event-stream frames) reports its usage in its
    last frame, ``metadata``: ``usage: {inputTokens: 13, outputTokens: 82}``."""
    shutil.copy(BEDROCK / "test_bedrock_model_stream.yaml", cassettes / "bedrock.yaml")
    code, out = _run(capsys, "ls", str(cassettes / "bedrock.yaml"))
    assert code == 0
    figures = out.splitlines()[1].split(" | ")
    assert figures[:4] == ["  1 interaction", "bedrock", "us.amazon.nova-micro-v1:0", "streamed"]
    assert figures[-1] == "tokens 13 in, 82 out"
    stored = yaml.safe_load((BEDROCK / "test_bedrock_model_stream.yaml").read_text(encoding="utf-8"))
    count = len(stored["interactions"][0]["response"]["frames"])
    code, out = _run(capsys, "show", str(cassettes / "bedrock.yaml"))
    assert code == 0
    assert out.splitlines()[1].split(" | ")[3:] == [f"streamed, {count} events", "tokens 13 in, 82 out"]


def _anthropic_events() -> list[dict[str, object]]:
    """The example's real Anthropic stream events, read straight from its YAML."""
    document = yaml.safe_load((EXAMPLES / STREAMING).read_text(encoding="utf-8"))
    return [event["data"] for event in document["interactions"][0]["response"]["events"]]


def test_stats_reads_the_anthropic_usage_inside_an_invoke_with_response_stream(
    cassettes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bedrock's InvokeModelWithResponseStream carries the model's own stream events, each
    as base64 JSON in a ``chunk`` frame: the same Anthropic events as the SSE example (43
    in, 282 out) count the same. AnthropicBedrock sends the model id's ``:0`` unescaped."""
    chunks = [
        encode_frame("chunk", {"bytes": base64.b64encode(json.dumps(event).encode()).decode()})
        for event in _anthropic_events()
    ]
    model = "anthropic.claude-sonnet-4-20250514-v1:0"
    interaction = Interaction(
        Request(
            "POST",
            f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/invoke-with-response-stream",
            {"content-type": "application/json"},
            b'{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1024, "messages": []}',
        ),
        Response(200, {"content-type": "application/vnd.amazon.eventstream"}, chunks),
    )
    shutil.rmtree(cassettes)
    cassettes.mkdir()
    path = cassettes / "invoke_stream.yaml"
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(interaction)], path), encoding="utf-8")
    code, out = _run(capsys, "stats", str(cassettes))
    assert code == 0
    assert [line.split() for line in out.splitlines()[1:]] == [
        ["bedrock", "1", "1", "1", "43", "282"],
        [model, "1", "1", "1", "43", "282"],
        ["total", "1", "1", "1", "43", "282"],
    ]


def test_unknown_tokens_are_shown_as_unknown_and_scan_says_when_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from promptvcr.cli import main

    cassette = tmp_path / "stream.yaml"
    cassette.write_text(
        "interactions:\n- request:\n    method: POST\n    url: https://api.openai.com/v1/chat/completions\n"
        "    json: {model: gpt-4o, stream: true, messages: [{role: user, content: Hi}]}\n"
        "  response:\n    status: 200\n    headers: {content-type: text/event-stream}\n"
        "    events:\n    - data: {id: c1, choices: [{index: 0, delta: {content: Hello}}]}\n"
        "    - data: '[DONE]'\nversion: 1\n"
    )
    assert main(["ls", str(tmp_path)]) == 0
    listed = capsys.readouterr().out
    assert "tokens unknown (no usage recorded)" in listed and "0 in, 0 out" not in listed
    assert main(["show", str(cassette)]) == 0
    assert "tokens unknown" in capsys.readouterr().out
    assert main(["scan", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"no secret-shaped values in {tmp_path}."
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("promptvcr ")


def test_ls_and_stats_name_the_provider_of_loopback_traffic_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI-style and Anthropic traffic recorded from one server on 127.0.0.1: both are listed
    by provider, not one by provider and the other by address (issue 46), in the one vocabulary
    the HTML report uses too: a loopback server speaking OpenAI's protocol is not OpenAI."""
    import anthropic
    import openai
    from fake_provider import FakeProvider

    import promptvcr

    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    with FakeProvider() as fake, promptvcr.use_cassette(tmp_path / "both.yaml", record_mode="record"):
        openai.OpenAI(api_key="test-key", base_url=fake.openai_base_url).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
        )
        anthropic.Anthropic(api_key="test-key", base_url=fake.base_url).messages.create(
            model="claude-sonnet-4-6", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        )
    code, out = _run(capsys, "ls", str(tmp_path))
    assert code == 0
    assert "| anthropic, openai-compatible |" in out, out
    code, out = _run(capsys, "stats", str(tmp_path))
    assert code == 0
    assert "openai-compatible" in out and "anthropic" in out and "127.0.0.1" not in out, out
    page = tmp_path / "report.html"
    code, _ = _run(capsys, "report", str(tmp_path / "both.yaml"), "--html", str(page))
    assert code == 0
    html = page.read_text(encoding="utf-8")
    assert 'data-providers=" anthropic openai-compatible "' in html  # the same words as ls
