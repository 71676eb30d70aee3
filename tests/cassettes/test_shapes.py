"""The structure verify compares (``promptvcr.policies.shapes``): what counts as drift, what does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptvcr.cassettes.models import Response
from promptvcr.files import persister
from promptvcr.policies.shapes import differences, json_shape, severity_of, shape_of


def json_response(value: Any, status: int = 200) -> Response:
    return Response(status, {"content-type": "application/json"}, [json.dumps(value).encode()])


def sse(*events: tuple[str | None, Any]) -> Response:
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        body = data if isinstance(data, str) else json.dumps(data)
        chunks.append(f"{head}data: {body}\n\n".encode())
    return Response(200, {"content-type": "text/event-stream; charset=utf-8"}, chunks)


def drift(recorded: Response, live: Response) -> list[str]:
    return differences(shape_of(recorded), shape_of(live))


def test_json_shape_keeps_keys_and_types_and_merges_list_elements() -> None:
    value = {"a": [{"x": 1}, {"y": "s"}], "b": None, "c": True, "d": []}
    assert json_shape(value) == {"a": [{"x": "number", "y": "string"}], "b": "null", "c": "boolean", "d": []}


def test_other_values_of_the_same_types_are_no_drift() -> None:
    recorded = json_response({"id": "a", "n": 1, "items": [{"t": "x"}], "note": None})
    live = json_response({"id": "b", "n": 2.5, "items": [{"t": "y"}, {"t": "z"}], "note": "now set"})
    assert drift(recorded, live) == []


def test_status_content_type_types_and_fields_are_drift() -> None:
    recorded = json_response({"usage": {"tokens": 1}, "items": [{"t": "x"}]})
    live = Response(201, {"content-type": "application/x-ndjson"}, [b'{"usage": 3, "items": [{"u": 1}]}'])
    assert drift(recorded, live) == [
        "status: was 200, now 201",
        "content type: was 'application/json', now 'application/x-ndjson'",
        "usage: was object, now number",
        "items[]: field 't' is gone",
        "items[]: new field 'u'",
    ]


def test_openai_responses_stream_tool_calls_come_from_the_completed_event() -> None:
    def completed(name: str, arguments: str) -> dict[str, Any]:
        item = {"type": "function_call", "name": name, "arguments": arguments, "call_id": "c"}
        return {
            "type": "response.completed",
            "response": {"object": "response", "status": "completed", "output": [item]},
        }

    recorded = sse(
        ("response.created", {"type": "response.created"}), ("response.completed", completed("a", '{"q":1}'))
    )
    live = sse(
        ("response.created", {"type": "response.created"}), ("response.completed", completed("a", '{"r":1}'))
    )
    shape = shape_of(recorded)
    assert shape.tool_calls == (("a", ("q",)),) and shape.finish == ("completed",)
    assert drift(recorded, live) == ["tool calls: were a(q); now a(r)"]


def test_gemini_function_calls_and_finish_reasons() -> None:
    def answer(name: str, finish: str) -> dict[str, Any]:
        part = {"functionCall": {"name": name, "args": {"city": "Paris"}}}
        return {"candidates": [{"content": {"parts": [part], "role": "model"}, "finishReason": finish}]}

    recorded, live = (
        json_response(answer("get_weather", "STOP")),
        json_response(answer("get_weather", "MAX_TOKENS")),
    )
    assert shape_of(recorded).tool_calls == (("get_weather", ("city",)),)
    assert drift(recorded, live) == ["finish reason: was STOP, now MAX_TOKENS"]


def test_openai_chat_stream_chunks_collapse_and_done_is_an_event() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
        return None, {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    short = sse(chunk({"content": "a"}), chunk({}, "stop"), (None, "[DONE]"))
    long = sse(*(chunk({"content": c}) for c in "abcdef"), chunk({}, "stop"), (None, "[DONE]"))
    assert shape_of(short).events is not None
    assert [name for name, _ in shape_of(short).events or ()] == ["chat.completion.chunk", "[DONE]"]
    assert drift(short, long) == []
    no_done = sse(chunk({"content": "a"}), chunk({}, "length"))
    assert drift(short, no_done) == [
        "stream events: were chat.completion.chunk, [DONE]; now chat.completion.chunk",
        "finish reason: was stop, now length",
    ]


def test_every_corpus_answer_has_a_shape_with_no_drift_from_itself(converted_corpus: Path) -> None:
    cassettes = sorted(converted_corpus.rglob("*.yaml"))
    assert cassettes
    for path in cassettes:
        for interaction in persister.load(path).interactions:
            shape = shape_of(interaction.response)
            assert shape.status == interaction.response.status
            assert differences(shape, shape) == [], path


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("status: was 200, now 400", "status changed"),
        ("content type: was 'application/json', now 'text/plain'", "type changed"),
        ("choices[].message.content: was string, now array", "type changed"),
        ("the body: field 'system_fingerprint' is gone", "removed field"),
        ("choices[].message: new field 'annotations'", "new field"),
        ("stream events: were a, b; now a, c, b", "new event"),
        ("stream events: were a, c, b; now a, b", "removed event"),
        ("stream events: were a, b; now b, a", "events reordered"),
        ("tool calls: were f(x); now f(y)", "tool calls changed"),
        ("finish reason: was stop, now length", "finish reason changed"),
    ],
)
def test_each_difference_has_a_severity(line: str, severity: str) -> None:
    assert severity_of(line) == severity
