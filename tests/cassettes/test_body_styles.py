"""Stored styles and raw text: exact bytes back, old cassettes unchanged, edits honoured."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from promptvcr.cassettes.bodies import decode_body, encode_body
from promptvcr.errors import CassetteFormatError
from promptvcr.files import fileformat

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
STYLES: list[dict[str, Any]] = [
    {"separators": (",", ":")},
    {},
    {"indent": 2},
    {"indent": 4, "ensure_ascii": True},
    {"ensure_ascii": True},
    {"separators": (",", ": ")},
]


@given(JSON, st.sampled_from(STYLES), st.sampled_from(["", "\n", "  \n"]))
def test_common_json_styles_replay_byte_for_byte_without_raw(
    value: Any, style: dict[str, Any], after: str
) -> None:
    content = (json.dumps(value, **style) + after).encode()
    stored = encode_body(content, "application/json")
    assert b"".join(decode_body(stored)) == content
    assert "raw" not in stored


@given(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=5), st.text(" \n\t"))
def test_sse_events_replay_byte_for_byte(data: dict[str, str], pad: str) -> None:
    text = json.dumps(data)
    padded = text[:-1] + pad + text[-1]
    content = f"event: x\ndata: {padded}\n\n:keep\n\ndata: [DONE]\n\n".encode()
    stored = encode_body(content, "text/event-stream", streamed_events=True)
    assert b"".join(decode_body(stored)) == content


def _old(body: dict[str, Any], path: Path) -> bytes:
    data = {"request": {"method": "GET", "url": "https://x/"}, "response": {"status": 200, **body}}
    return fileformat.interaction_from_data(data, path, 0).response.content


def test_old_cassettes_replay_compact_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.yaml"
    assert _old({"json": {"a": [1, "é"]}}, path) == '{"a":[1,"é"]}'.encode()
    assert _old({"events": [{"data": {"a": 1}}, {"comment": "x"}]}, path) == b'data: {"a":1}\n\n: x\n\n'


def test_an_edited_value_wins_over_a_stale_raw_text(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    stored = encode_body(b'{"a":1,"a":2}', "application/json")
    assert stored == {"json": {"a": 2}, "raw": '{"a":1,"a":2}'}
    assert _old(stored, path) == b'{"a":1,"a":2}'
    assert _old({**stored, "json": {"a": 3}}, path) == b'{"a":3}'  # edited: re-serialized
    events = encode_body(b'data: {"a":1,"a":2}\n\n', "text/event-stream", streamed_events=True)["events"]
    assert _old({"events": events}, path) == b'data: {"a":1,"a":2}\n\n'
    events[0]["data"] = {"a": 5}
    assert _old({"events": events}, path) == b'data: {"a":5}\n\n'


def test_an_edit_keeps_the_recorded_style(tmp_path: Path) -> None:
    stored = encode_body(b'{"a": 1, "b": "x"}\n', "application/json")
    assert stored == {"json": {"a": 1, "b": "x"}, "style": {"separators": [", ", ": "], "after": "\n"}}
    stored["json"]["b"] = "edited"
    assert _old(stored, tmp_path / "c.yaml") == b'{"a": 1, "b": "edited"}\n'


@pytest.mark.parametrize(
    "body",
    [
        {"json": {}, "style": {"indent": True}},
        {"json": {}, "style": {"pad": "x"}},
        {"json": {}, "style": "compact"},
        {"json": {}, "raw": 3},
        {"events": [{"data": "a", "style": {"eol": "\t"}}]},
        {"events": [{"data": "a", "style": {"end": "x"}}]},
    ],
)
def test_a_malformed_style_is_a_format_error(tmp_path: Path, body: dict[str, Any]) -> None:
    with pytest.raises(CassetteFormatError, match="is not a valid body"):
        _old(body, tmp_path / "c.yaml")


def test_a_credential_removed_from_a_body_is_not_kept_in_its_raw_text(tmp_path: Path) -> None:
    from promptvcr.cassettes.models import Interaction, Request, Response

    content = b'{"api_key":"sk-secret-1","api_key":"sk-secret-2"}'
    interaction = Interaction(
        Request("POST", "https://x/", {"content-type": "application/json"}, content),
        Response(200, {"content-type": "application/json"}, [content]),
    )
    data = fileformat.interaction_to_data(interaction)
    assert "raw" not in data["request"] and "raw" not in data["response"]
    assert "sk-secret" not in json.dumps(data)
