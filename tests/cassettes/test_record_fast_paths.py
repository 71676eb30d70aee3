"""The record path's shortcuts give what the plain path gives: the remembered header-name
decisions of :func:`~promptvcr.credentials.headers.keep_headers` (against the decision taken
anew for every header), the direct scanner call that parses a recorded JSON body (against
``json.loads``, errors included), and the YAML writer's remembered scalar texts (against
the text written anew)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.property_settings import property_settings

from promptvcr.cassettes.bodies import _parsed, encode_body
from promptvcr.cassettes.models import Request
from promptvcr.credentials import decode, masking
from promptvcr.credentials.byname import redact_query_values
from promptvcr.credentials.headers import (
    ALL_HEADERS,
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    AllHeadersBut,
    keep_headers,
)
from promptvcr.credentials.names import is_secret_header
from promptvcr.files import yamlwriter
from promptvcr.files.yamlwriter import sequence_items


def _plain_keep(headers: Mapping[str, str], allowed: Iterable[str]) -> dict[str, str]:
    everything_but = isinstance(allowed, AllHeadersBut)
    kept: dict[str, str] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if not lowered:  # no header has an empty name
            continue
        if is_secret_header(lowered):
            if lowered in allowed and not everything_but:  # a list named it: its placeholder
                kept[lowered] = f"<redacted:header:{lowered}>"
        elif allowed.keeps(lowered) if isinstance(allowed, AllHeadersBut) else lowered in set(allowed):
            kept[lowered] = redact_query_values(value)
    return kept


_NAMES = [
    *REQUEST_HEADERS,
    *RESPONSE_HEADERS,
    "Content-Type",
    "CONTENT-TYPE",
    "Location",
    "authorization",
    "Authorization",
    "x-api-key",
    "set-cookie",
    "x-session-key",
    "mcp-session-id",
    "MCP-Session-Id",
    "openai-organization",
    "x-request-id",
    "x-ratelimit-remaining-tokens",
    "x-amzn-bedrock-input-token-count",
    "date",
    "cf-ray",
    "",
    "é-header",
    "İ",  # lower-cases to two characters
]
_VALUES = ["application/json", "https://x.test/up?key=abcdefghijklmnop&a=1", "", "a=b", "Bearer sk-abc"]
_ALLOWLISTS: list[Iterable[str]] = [
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    ALL_HEADERS,
    frozenset(RESPONSE_HEADERS),  # the same names as a plain list: exactly those
    frozenset({"x-api-key", "authorization", "x-request-id", "location"}),
    {"content-type", "location"},
    ["content-type", "set-cookie"],
    ("mcp-session-id", "İ".lower()),
    (),
]


@property_settings(300)
@given(
    st.lists(st.tuples(st.sampled_from(_NAMES) | st.text(max_size=8), st.sampled_from(_VALUES)), max_size=12),
    st.sampled_from(range(len(_ALLOWLISTS))),
)
def test_keep_headers_decides_as_the_plain_path(pairs: list[tuple[str, str]], which: int) -> None:
    headers = dict(pairs)
    allowed = _ALLOWLISTS[which]
    for _ in range(2):  # the second time from the remembered decisions
        assert keep_headers(headers, allowed) == _plain_keep(headers, allowed)
        assert list(keep_headers(headers, allowed)) == list(_plain_keep(headers, allowed))


def test_keep_headers_keeps_each_allowlist_apart() -> None:
    headers = {"Location": "https://x.test/", "X-Request-Id": "r1"}
    assert keep_headers(headers, {"location"}) == {"location": "https://x.test/"}
    assert keep_headers(headers, ["x-request-id"]) == {"x-request-id": "r1"}
    assert keep_headers(headers, frozenset()) == {}
    for index in range(100):  # more allowlists than are remembered
        assert keep_headers(headers, {"location", f"h{index}"}) == {"location": "https://x.test/"}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def _outcome(parse: Any, text: str) -> tuple[str, Any]:
    try:
        value = parse(text)
    except (ValueError, RecursionError) as error:
        return type(error).__name__, str(error)
    return "ok", json.dumps(value)  # NaN != NaN: compare the documents as text


@property_settings(300)
@given(
    json_values,
    st.sampled_from([(",", ":"), (", ", ": ")]),
    st.booleans(),
    st.sampled_from(["", " ", "\n", "x", "}", "]", ",1", "\ufeff"]),
    st.sampled_from(["", " ", "\n", "\ufeff"]),
)
def test_parsed_reads_as_json_loads(
    value: Any, separators: tuple[str, str], ascii_only: bool, after: str, before: str
) -> None:
    text = before + json.dumps(value, separators=separators, ensure_ascii=ascii_only) + after
    assert _outcome(_parsed, text) == _outcome(json.loads, text)


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "[]",
        "{",
        "}",
        "[1,]",
        '{"a":1}{"b":2}',
        '{"a":1} ',
        '{"a":NaN}',
        '{"a":Infinity,"b":-Infinity}',
        '{"a":"\\ud800"}',
        '{"a":"\\x"}',
        '{"a" :1}',
        '{"a":1,"a":2}',
        "[" * 100_000 + "]" * 100_000,
        '["\x00"]',
        "[1] [2]",
    ],
)
def test_parsed_reads_odd_documents_as_json_loads(text: str) -> None:
    assert _outcome(_parsed, text) == _outcome(json.loads, text)


@pytest.mark.parametrize(
    "content",
    [b'{"a":1}', b'{"a": 1}', b'{"a":1}\n', b'{"a":1}x', b"[1,2]", b'{"a":"\\ud800"}', b"{", b'{"a":NaN}'],
)
def test_encode_body_stores_what_json_loads_reads(content: bytes) -> None:
    stored = encode_body(content, "application/json")
    try:
        expected = json.loads(content)
    except ValueError:
        assert "json" not in stored
    else:
        if "json" in stored:
            assert json.dumps(stored["json"]) == json.dumps(expected)


_WORDS = st.sampled_from(["role", "user", "yes", "a: b", "null", "1", "é"])


@property_settings(300)
@given(st.lists(st.text(max_size=12) | _WORDS, max_size=8))
def test_remembered_yaml_text_is_the_text_written_anew(strings: list[str]) -> None:
    for _ in range(2):  # the second time from the memo
        for text in strings:
            assert yamlwriter._plain_or_quoted(text) == yamlwriter._written(text)
    item = {"request": {"method": "POST", "json": {"messages": [{"role": s, s: s} for s in strings]}}}
    warm = "".join(sequence_items([item]))
    yamlwriter._TEXTS.clear()
    assert "".join(sequence_items([item])) == warm


def test_yaml_text_memo_stays_bounded_and_right_when_emptied() -> None:
    strings = [f"id-{index}" for index in range(yamlwriter._MAX_TEXTS + 10)] + ["a: b", "yes"]
    written = [yamlwriter._plain_or_quoted(text) for text in strings]
    assert len(yamlwriter._TEXTS) <= yamlwriter._MAX_TEXTS
    assert written == [yamlwriter._written(text) for text in strings]
    assert [yamlwriter._plain_or_quoted(text) for text in strings] == written


class _Name(str):
    """A key type of its own, equal to the plain string (a library's header name, say)."""


@pytest.mark.parametrize("warm", [False, True])
def test_keys_of_other_types_are_written_as_the_plain_path_writes_them(warm: bool) -> None:
    plain = {"role": "user", "yes": 1, "1": None, "é: x": "a", "x" * 999: "long"}
    if warm:
        "".join(sequence_items([plain]))
    else:
        yamlwriter._KEYS.clear()
        yamlwriter._TEXTS.clear()
    subclassed = {_Name(key): value for key, value in plain.items()}
    assert "".join(sequence_items([subclassed])) == "".join(sequence_items([plain]))
    odd = {1: "a", 1.5: "b", None: "c", False: "d"}  # not strings: PyYAML writes the item
    assert "".join(sequence_items([odd])) == "".join(sequence_items([dict(odd)]))
    assert "".join(sequence_items([odd])).startswith("- 1: a\n")


def _plain_streams(data: Any) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(data, dict):
        holders = ((data, ""), (data.get("request"), ".request"), (data.get("response"), ".response"))
        for holder, prefix in holders:
            if isinstance(holder, dict):
                found += [(f"{prefix}.{key}", holder[key]) for key in ("events", "frames") if key in holder]
    return found


_HOLDER_KEYS = st.sampled_from(["events", "frames", "json", "text", "status"])
_HOLDERS = st.dictionaries(_HOLDER_KEYS, st.none() | st.lists(st.integers()), max_size=4)


@property_settings(200)
@given(
    _HOLDERS,
    st.none() | st.integers() | _HOLDERS,
    st.none() | st.integers() | _HOLDERS,
)
def test_streams_are_found_as_the_plain_path(top: dict[str, Any], request: Any, response: Any) -> None:
    data: dict[str, Any] = dict(top)
    if request is not None:
        data["request"] = request
    if response is not None:
        data["response"] = response
    for value in (data, request, response, [data], "x"):
        assert decode._streams(value) == _plain_streams(value)


def _plain_sent(headers: dict[str, str]) -> frozenset[str]:
    found: set[str] = set()
    for name, value in headers.items():
        if is_secret_header(name):
            found.update(masking._header_values(name, value))
    return frozenset(value.strip() for value in found)


_SENT_VALUES = st.sampled_from([*_VALUES, "Basic dXNlcjpwYXNzd29yZDEyMw==", "a=sk-123456789; b=c", " key "])


@property_settings(200)
@given(st.lists(st.tuples(st.sampled_from([*_NAMES, "cookie", "Cookie"]), _SENT_VALUES), max_size=10))
def test_sent_credentials_reads_headers_as_the_plain_path(pairs: list[tuple[str, str]]) -> None:
    headers = dict(pairs)
    request = Request(method="GET", url="https://x.test/v1", headers=headers)
    for _ in range(2):  # the second time from the remembered names
        assert masking.sent_credentials(request) == _plain_sent(headers)
