"""The pure cassette logic, without any HTTP client: keys, stored bodies, SSE events."""

from __future__ import annotations

import pytest

from promptvcr import DEFAULT_RULES, Request, drop_body_fields
from promptvcr.cassettes.bodies import decode_body, encode_body
from promptvcr.cassettes.sse import encode_event, parse_events
from promptvcr.matching.key import request_key


def chat(
    body: str | bytes, url: str = "https://api.openai.com/v1/chat/completions", **headers: str
) -> Request:
    content = body.encode() if isinstance(body, str) else body
    return Request("POST", url, {"content-type": "application/json", **headers}, content)


def test_json_bodies_compare_by_meaning() -> None:
    a = chat('{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "user", "content": "hi"}]}')
    b = chat('{"messages":[{"content":"hi","role":"user"}],"temperature":1.0,"model":"gpt-4o"}')
    c = chat('{ "model" : "gpt-4o" , "temperature" : 1e0, "messages" : [ {"role":"user","content":"hi"} ] }')
    assert request_key(a) == request_key(b) == request_key(c)


@pytest.mark.parametrize(
    "changed",
    [
        '{"model": "gpt-4o", "temperature": 0.5, "messages": [{"role": "user", "content": "hi"}]}',
        '{"model": "gpt-4o-mini", "temperature": 1, "messages": [{"role": "user", "content": "hi"}]}',
        '{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "user", "content": "hi!"}]}',
        '{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "system", "content": "hi"}]}',
        # An empty value is an SDK's default and matches its absence (issue 53); these are not.
        '{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "user", "content": "hi"}], "n": 0}',
        '{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "user", "content": "hi"}], "seed": 0}',
    ],
)
def test_a_meaningful_change_changes_the_key(changed: str) -> None:
    base = chat('{"model": "gpt-4o", "temperature": 1, "messages": [{"role": "user", "content": "hi"}]}')
    assert request_key(chat(changed)) != request_key(base)


def test_headers_host_and_credentials_are_not_in_the_key() -> None:
    body = '{"model": "m", "user": "u-123", "metadata": {"user_id": "x"}}'
    a = chat(body, authorization="Bearer one", **{"x-stainless-retry-count": "0"})
    b = Request(
        "POST",
        "http://127.0.0.1:8080/v1/chat/completions?api_key=zzz",
        {"x-stainless-retry-count": "2"},
        b'{"model":"m"}',
    )
    assert request_key(a) == request_key(b)


def test_method_path_and_query_are_in_the_key() -> None:
    base = Request("GET", "https://x/v1/models?limit=5")
    assert request_key(base) != request_key(Request("POST", "https://x/v1/models?limit=5"))
    assert request_key(base) != request_key(Request("GET", "https://x/v1/files?limit=5"))
    assert request_key(base) != request_key(Request("GET", "https://x/v1/models?limit=6"))
    assert request_key(base) == request_key(Request("GET", "https://x/v1/models?limit=5&key=secret"))


def test_users_add_rules() -> None:
    a, b = chat('{"model": "m", "seed": 1}'), chat('{"model": "m", "seed": 2}')
    assert request_key(a) != request_key(b)
    rules = [*DEFAULT_RULES, drop_body_fields({"seed"})]
    assert request_key(a, rules) == request_key(b, rules)


def test_binary_and_text_bodies_have_keys() -> None:
    png = Request("POST", "https://x/upload", {"content-type": "image/png"}, b"\x89PNG\x00\x01")
    assert request_key(png) != request_key(Request("POST", "https://x/upload", {}, b"\x89PNG\x00\x02"))
    assert request_key(Request("POST", "https://x/t", {}, b"plain")) != request_key(
        Request("POST", "https://x/t", {}, b"plainer")
    )


@pytest.mark.parametrize(
    ("content", "content_type", "form"),
    [
        (b'{"a": [1, 2.5, "\\u00e9"]}', "application/json", "json"),
        (b"line one\nline two\n", "text/plain", "text"),
        (bytes(range(256)), "application/octet-stream", "base64"),
        (b"nul\x00inside", "text/plain", "base64"),
        (b'{"lone": "\\ud800"}', "application/json", "text"),
        (b"", "application/json", None),
    ],
)
def test_bodies_round_trip_through_their_stored_form(
    content: bytes, content_type: str, form: str | None
) -> None:
    stored = encode_body(content, content_type)
    assert list(stored)[:1] == ([form] if form else [])  # a json body may hold its style beside it
    assert b"".join(decode_body(stored)) == content  # byte for byte


def test_sse_events_are_stored_parsed_and_replayed_one_per_chunk() -> None:
    text = (
        'event: message_start\r\ndata: {"type":"message_start","n":1}\r\n\r\n'
        ": keep-alive\n\n"
        "data: first line\ndata: second line\n\n"
        "id: 7\nretry: 100\ndata: [DONE]\n\n"
    )
    events = parse_events(text)
    assert events == [
        {"event": "message_start", "data": {"type": "message_start", "n": 1}},
        {"comment": "keep-alive"},
        {"data": "first line\nsecond line"},
        {"id": "7", "retry": "100", "data": "[DONE]"},
    ]
    chunks = [encode_event(event) for event in events]
    assert chunks[0] == b'event: message_start\ndata: {"type":"message_start","n":1}\n\n'
    assert chunks[2] == b"data: first line\ndata: second line\n\n"
    assert parse_events(b"".join(chunks).decode()) == events
