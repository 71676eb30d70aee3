"""Shortcuts taken while computing keys give the answer of the plain path, over the corpus
and generated values: the canonical dump by a kept C encoder is ``json.JSONEncoder.encode``'s, and a body
read by the JSON scanner directly is what the decoder reads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.property_settings import property_settings

from promptvcr import DEFAULT_RULES
from promptvcr.cassettes.models import LazyRequest, Request
from promptvcr.importers import convert_vcr_file
from promptvcr.matching import parts as parts_module
from promptvcr.matching.key import apply_rules
from promptvcr.matching.parts import KeyParts, key_parts, parse_body

CORPUS = Path(__file__).parents[1] / "corpus" / "pydantic-ai"
PLAIN = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)


def plain_canonical(parts: KeyParts) -> str:
    return PLAIN.encode([parts.method, parts.path, parts.query, parts.body])


def test_canonical_of_every_corpus_request_is_the_plain_dump() -> None:
    count = 0
    for path in sorted(CORPUS.glob("*/*.yaml")):
        for interaction in convert_vcr_file(path).interactions:
            parts = apply_rules(interaction.request, DEFAULT_RULES)
            assert parts.canonical() == plain_canonical(parts)
            count += 1
    assert count > 50


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities too: the dump writes them as json.dumps does
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@property_settings(300)
@given(json_values, st.lists(st.tuples(st.text(max_size=4), st.text(max_size=4)), max_size=3))
def test_canonical_of_generated_bodies_is_the_plain_dump(body: Any, query: list[tuple[str, str]]) -> None:
    parts = KeyParts("POST", "/v1/x", tuple(query), body)
    assert parts.canonical() == plain_canonical(parts)


def test_values_json_cannot_hold_are_written_by_repr_as_before() -> None:
    parts = KeyParts("POST", "/v1/x", (), {"b": b"\x00", "s": {1, 2}, "t": (1.5, 2), "n": [3.0, -0.0, 1e300]})
    assert parts.canonical() == plain_canonical(parts)


def test_a_cycle_a_rule_made_is_reported_as_before() -> None:
    body: list[Any] = []
    body.append(body)
    with pytest.raises(ValueError, match="Circular reference detected"):
        PLAIN.encode(["POST", "/", (), body])
    with pytest.raises(ValueError, match="Circular reference detected"):
        KeyParts("POST", "/", (), body).canonical()


def test_keys_that_do_not_sort_fail_as_before() -> None:
    parts = KeyParts("POST", "/", (), {"a": 1, 2: 3})
    with pytest.raises(TypeError) as plain:
        plain_canonical(parts)
    with pytest.raises(TypeError) as kept:
        parts.canonical()
    assert str(kept.value) == str(plain.value)


# A body that is exactly one JSON object or array is read by the decoder's scanner directly
# (see promptvcr.matching.parts._json): the same value, or the same kind of failure.


def plain_json(content: bytes) -> tuple[str, Any]:
    try:
        text = content.decode("utf-8")
        return "ok", parts_module._DECODER.decode(text.removeprefix("\ufeff"))
    except UnicodeDecodeError:
        try:
            return "ok", json.loads(content, parse_float=parts_module._number)
        except (ValueError, RecursionError) as error:
            return type(error).__name__, None
    except (ValueError, RecursionError) as error:
        return type(error).__name__, None


def our_json(content: bytes) -> tuple[str, Any]:
    try:
        return "ok", parts_module._json(content)
    except (ValueError, RecursionError) as error:
        return type(error).__name__, None


def same(left: Any, right: Any) -> bool:
    """Equal, NaN included (and ``1`` is not ``1.0``: the key tells them apart by type)."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True) and repr(left) == repr(right)


TEXTS = [
    b"{}",
    b"[]",
    b'{"a": 1.0, "b": [1e16, 2.5, -0.0]}',
    b" {}",
    b"{} ",
    b"{}x",
    b"{}]",
    b"[1,]",
    b'{"a":}',
    b"[" * 5000 + b"]" * 5000,
    b"\xef\xbb\xbf{}",
    b"{\n}",
    b'{"a":NaN,"b":-Infinity}',
    b'"text"',
    b"5",
    b"",
    b"[",
    b"]",
    '{"é": "\u2028"}'.encode(),
    "[1]".encode("utf-16"),
]


@pytest.mark.parametrize("content", TEXTS)
def test_json_bodies_read_as_the_decoder_reads_them(content: bytes) -> None:
    (plain_outcome, plain_value), (our_outcome, our_value) = plain_json(content), our_json(content)
    assert our_outcome == plain_outcome
    assert same(our_value, plain_value)


@property_settings(300)
@given(
    json_values.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=40)
    | st.text(max_size=40).map(str.encode)
)
def test_generated_bodies_read_as_the_decoder_reads_them(content: bytes) -> None:
    (plain_outcome, plain_value), (our_outcome, our_value) = plain_json(content), our_json(content)
    assert our_outcome == plain_outcome
    assert same(our_value, plain_value)


# The body's content-type is read only when the bytes do not start with a bracket (see
# promptvcr.matching.parts.parse_body): the parse of the plain path, which read it first.


def plain_parse_body(request: Request) -> Any:
    content = request.content
    if not content:
        return None
    content_type = request.content_type
    if "json" in content_type or content.lstrip()[:1] in (b"{", b"["):
        try:
            return parts_module._json(content)
        except (ValueError, RecursionError):
            pass
    if content_type == "application/x-www-form-urlencoded":
        try:
            return sorted(parse_qsl(content.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            pass
    if content_type.startswith("multipart/"):
        parts = parts_module._multipart(content, request.headers.get("content-type", ""))
        if parts is not None:
            return parts
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return parts_module._digest(content)


CONTENT_TYPES = [
    None,
    "application/json",
    "application/json; charset=utf-8",
    "Application/X-WWW-Form-Urlencoded",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=b",
    "text/plain",
    "application/octet-stream",
]
MULTIPART = b'--b\r\nContent-Disposition: form-data; name="f"\r\n\r\n{"a": 1}\r\n--b--\r\n'
BODIES = [
    *TEXTS,
    MULTIPART,
    b"{a=1&b=2",
    b"[x]=1&y=%7B",
    b"a=1&b=2",
    b" [1, 2]",
    b'\n{"a": 1}',
    b"{\xff}",
    b"[\xfe\xff]",
    b"\xff\xfe",
]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
@pytest.mark.parametrize("content", BODIES)
def test_bodies_parse_as_the_plain_path_parses_them(content: bytes, content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    request = Request("POST", "http://h/v1/x", headers, content)
    lazy = LazyRequest.of("POST", "http://h/v1/x", headers, content, content_type or "")
    for each in (request, lazy):
        assert same(parse_body(each), plain_parse_body(each))


@property_settings(300)
@given(
    st.sampled_from(CONTENT_TYPES),
    json_values.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=40)
    | st.text(max_size=40).map(str.encode)
    | st.builds(lambda opener, rest: opener + rest, st.sampled_from([b"{", b"["]), st.binary(max_size=20)),
)
def test_generated_bodies_parse_as_the_plain_path_does(content_type: str | None, content: bytes) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    request = Request("POST", "http://h/v1/x", headers, content)
    assert same(parse_body(request), plain_parse_body(request))


# parts_of builds KeyParts through its slots, not its __init__ (see promptvcr.matching.parts).


@pytest.mark.parametrize(
    "request_",
    [
        Request("post", "http://h/v1/x?b=2&a=1", {"content-type": "application/json"}, b'{"a": [1, 2.0]}'),
        Request("GET", "http://h", {}, b""),
        Request("PUT", "http://h/a%3Ab?x=", {"content-type": "text/plain"}, b"text"),
    ],
)
def test_parts_built_through_slots_are_the_dataclass_s(request_: Request) -> None:
    assert [f.name for f in dataclasses.fields(KeyParts)] == ["method", "path", "query", "body", "raw"]
    built = key_parts(request_)
    plain = KeyParts(built.method, built.path, built.query, built.body, built.raw)
    assert type(built) is KeyParts
    assert built == plain and repr(built) == repr(plain)
    assert (built.method, built.path, built.query, built.body, built.raw) == (
        plain.method,
        plain.path,
        plain.query,
        plain.body,
        plain.raw,
    )
    assert built.raw == request_.content
    assert dataclasses.replace(built, body=None) == dataclasses.replace(plain, body=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.body = None  # type: ignore[misc]
