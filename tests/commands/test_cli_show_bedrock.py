"""``promptvcr show`` on Bedrock cassettes: Converse and its event-stream answers read as text.

Each expected answer is put together here from the stored YAML (the frames' deltas, the
Converse ``output.message``, the Anthropic events a ``chunk`` carries), never through
promptvcr's own renderer, so a wrong reassembly fails. The cassettes are pydantic-ai's
real Bedrock traffic (MIT; ``tests/data/bedrock_corpus`` and ``tests/corpus``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_bedrock import encode_frame

from promptvcr.cassettes.models import Interaction, Request, Response
from promptvcr.cli import main
from promptvcr.files import fileformat

TESTS = Path(__file__).resolve().parents[1]
BEDROCK = TESTS / "data" / "bedrock_corpus"
STREAMING = (
    TESTS.parent / "examples/cassettes/test_streaming_assistant/test_answer_streams_piece_by_piece.yaml"
)


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def converted(converted_corpus: Path) -> Path:
    return converted_corpus / "bedrock"


def _show(capsys: pytest.CaptureFixture[str], path: Path, *options: str) -> tuple[str, str]:
    """The prompt part and the answer part of ``show``'s output."""
    assert main(["show", str(path), *options]) == 0
    prompt, answer = capsys.readouterr().out.split("  --- answer ---\n")
    return prompt, answer


def _stored(path: Path, position: int = 0) -> dict[str, Any]:
    interaction: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][position]
    return interaction


def _deltas(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f["json"]["delta"] for f in frames if f["headers"][":event-type"] == "contentBlockDelta"]


def test_a_converse_stream_reads_as_its_deltas_text(capsys: pytest.CaptureFixture[str]) -> None:
    path = BEDROCK / "test_bedrock_model_stream.yaml"
    stored = _stored(path)
    text = "".join(delta["text"] for delta in _deltas(stored["response"]["frames"]))
    assert text.startswith("The capital of France is Paris.") and len(text) > 300
    prompt, answer = _show(capsys, path)
    assert answer == f"  assistant: {text}\n"
    assert prompt.splitlines()[2:] == [
        f"  system: {stored['request']['json']['system'][0]['text']}",
        f"  user: {stored['request']['json']['messages'][0]['content'][0]['text']}",
    ]
    assert f"streamed, {len(stored['response']['frames'])} events" in prompt


def test_a_converse_answer_reads_as_its_message_text(capsys: pytest.CaptureFixture[str]) -> None:
    path = BEDROCK / "test_stop_settings[bedrock].yaml"
    stored = _stored(path)
    text = "".join(block["text"] for block in stored["response"]["json"]["output"]["message"]["content"])
    assert text == "The city of Paris"
    prompt, answer = _show(capsys, path)
    assert answer == f"  assistant: {text}\n"
    assert (
        prompt.splitlines()[-1] == f"  user: {stored['request']['json']['messages'][0]['content'][0]['text']}"
    )


def test_converse_reasoning_tool_use_and_tool_result_read_as_turns(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Claude through Converse: reasoning, text and a tool call, then the tool's result sent back."""
    path = converted / "test_bedrock_anthropic_tool_with_thinking.yaml"
    content = _stored(path)["response"]["json"]["output"]["message"]["content"]
    reasoning, said, (tool,) = (
        [block[kind] for block in content if kind in block]
        for kind in ("reasoningContent", "text", "toolUse")
    )
    prompt, answer = _show(capsys, path, "--interaction", "0")
    assert answer == (
        f"  thinking: {reasoning[0]['reasoningText']['text']}\n"
        f"  assistant: {''.join(said)}\n"
        f"  tool call: {tool['name']}({{}}) [{tool['toolUseId']}]\n"
    )
    assert "  tools: get_user_country\n" in prompt
    prompt, _ = _show(capsys, path, "--interaction", "1")
    assert prompt.endswith(f"  tool result: [{tool['toolUseId']}] Mexico\n")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def test_a_converse_stream_reassembles_tool_input_and_server_tool_results(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nova's code interpreter: a server tool call, its result, then the final-result tool call,
    each tool input arriving as pieces of a JSON text."""
    path = converted / "test_bedrock_model_code_execution_tool_stream.yaml"
    frames = _stored(path)["response"]["frames"]
    starts = [f["json"]["start"] for f in frames if f["headers"][":event-type"] == "contentBlockStart"]
    deltas = _deltas(frames)
    inputs = [json.loads(d["toolUse"]["input"]) for d in deltas if "toolUse" in d]
    (result,) = [d["toolResult"] for d in deltas if "toolResult" in d]
    (first, second), (outcome,) = (
        [s["toolUse"] for s in starts if "toolUse" in s],
        [s["toolResult"] for s in starts if "toolResult" in s],
    )
    _, answer = _show(capsys, path)
    assert answer.splitlines() == [
        f"  tool call: {first['name']}({_dumps(inputs[0])}) [{first['toolUseId']}]",
        f"  tool result: [{outcome['toolUseId']}] {_dumps(result[0])}",
        f"  tool call: {second['name']}({_dumps(inputs[1])}) [{second['toolUseId']}]",
    ]
    assert inputs == [{"snippet": "1234 * 5678"}, {"result": 7006652.0}]


def test_redacted_reasoning_in_a_stream_shows_only_the_answer(
    converted: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = converted / "test_bedrock_model_thinking_part_redacted_stream.yaml"
    deltas = _deltas(_stored(path)["response"]["frames"])
    assert sum("reasoningContent" in d for d in deltas) == 2
    _, answer = _show(capsys, path)
    assert answer == f"  assistant: {''.join(d['text'] for d in deltas if 'text' in d)}\n"


def _write(path: Path, interaction: Interaction) -> Path:
    path.write_text(fileformat.dumps([fileformat.interaction_to_data(interaction)], path), encoding="utf-8")
    return path


def test_an_invoke_with_response_stream_reads_as_its_anthropic_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """InvokeModelWithResponseStream: each ``chunk`` frame holds one Anthropic event as base64
    JSON; here the example's real events (thinking, then the answer)."""
    recorded = _stored(STREAMING)
    events = [event["data"] for event in recorded["response"]["events"]]
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    thinking, text = ("".join(d.get(field, "") for d in deltas) for field in ("thinking", "text"))
    chunks = [
        encode_frame("chunk", {"bytes": base64.b64encode(json.dumps(e).encode()).decode()}) for e in events
    ]
    model = "anthropic.claude-sonnet-4-20250514-v1:0"
    path = _write(
        tmp_path / "invoke_stream.yaml",
        Interaction(
            Request(
                "POST",
                f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/invoke-with-response-stream",
                {"content-type": "application/json"},
                json.dumps(recorded["request"]["json"]).encode(),
            ),
            Response(200, {"content-type": "application/vnd.amazon.eventstream"}, chunks),
        ),
    )
    prompt, answer = _show(capsys, path)
    assert answer == f"  thinking: {thinking}\n  assistant: {text}\n"
    assert prompt.endswith("  user: How do I cross the street?\n")
    assert f"streamed, {len(events)} events" in prompt


def test_an_exception_frame_mid_stream_shows_as_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bedrock ends a stream it cannot finish with an exception frame; the text so far stays."""
    path = tmp_path / "throttled.yaml"
    path.write_text(
        """interactions:
- request:
    method: POST
    url: https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream
    headers: {content-type: application/json}
    json: {messages: [{role: user, content: [{text: Hello}]}]}
  response:
    status: 200
    headers: {content-type: application/vnd.amazon.eventstream}
    frames:
    - headers: {':event-type': contentBlockDelta, ':content-type': application/json, ':message-type': event}
      json: {contentBlockIndex: 0, delta: {text: Hel}}
    - headers: {':event-type': contentBlockDelta, ':content-type': application/json, ':message-type': event}
      json: {contentBlockIndex: 0, delta: {text: lo}}
    - headers: {':exception-type': throttlingException, ':content-type': application/json,
        ':message-type': exception}
      json: {message: "Too many requests, please wait before trying again."}
version: 1
""",
        encoding="utf-8",
    )
    _, answer = _show(capsys, path)
    assert answer == (
        "  assistant: Hello\n"
        '  error: throttlingException: {"message": "Too many requests, please wait before trying again."}\n'
    )
