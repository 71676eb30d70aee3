"""Hostile and broken input: generated cases through the loader, the normalizer, the SSE
parser and the vcrpy importer. Each may raise only its documented error, and none hangs.

The default run uses a few hundred cases per target; the dedicated run uses 10,000::

    HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_hostile_input.py -q
"""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr import Request
from promptvcr.cassettes.sse import decode_events, event_ends, parse_events
from promptvcr.errors import CassetteFormatError
from promptvcr.files import fileformat, storage
from promptvcr.importers.vcr_convert import ConversionError, to_interaction
from promptvcr.importers.vcr_read import VcrReadError, read_vcr_bytes
from promptvcr.matching.key import request_key

SETTINGS = property_settings(200, HealthCheck.filter_too_much)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
BODY_KEYS = ["json", "text", "base64", "events", "chunks", "body", "timing"]
stored_bodies = st.dictionaries(st.sampled_from(BODY_KEYS), json_values, max_size=2)
requests_data = st.fixed_dictionaries(
    {
        "method": st.one_of(st.sampled_from(["POST", "GET"]), json_values),
        "url": st.one_of(st.text(max_size=40), json_values),
    },
    optional={"headers": json_values},
).flatmap(lambda r: stored_bodies.map(lambda b: {**r, **b}))
responses_data = st.fixed_dictionaries(
    {"status": st.one_of(st.integers(0, 700), json_values)}, optional={"headers": json_values}
).flatmap(lambda r: stored_bodies.map(lambda b: {**r, **b}))
documents = st.fixed_dictionaries(
    {
        "interactions": st.one_of(
            st.lists(
                st.fixed_dictionaries({"request": requests_data, "response": responses_data}), max_size=3
            ),
            json_values,
        ),
        "version": st.one_of(st.just(1), json_values),
    }
)
counts: dict[str, int] = {}


def _counted(target: str) -> None:
    counts[target] = counts.get(target, 0) + 1


def _mutate(text: str, cut: int, junk: str) -> str:
    cut = cut % (len(text) + 1)
    return text[:cut] + junk + text[cut:]


@SETTINGS
@given(documents, st.booleans(), st.integers(0, 10_000), st.text(max_size=5), st.booleans())
def test_cassette_loader_raises_only_cassette_format_error(
    document: dict[str, Any], as_json: bool, cut: int, junk: str, mutate: bool
) -> None:
    _counted("loader")
    path = Path("c.json" if as_json else "c.yaml")
    text = json.dumps(document) if as_json else yaml.safe_dump(document, allow_unicode=True)
    if mutate:
        text = _mutate(text, cut, junk)
    try:
        fileformat.loads(text, path)
    except CassetteFormatError as error:
        assert str(path) in str(error)


@SETTINGS
@given(st.binary(max_size=300))
def test_reading_any_bytes_raises_only_cassette_format_error(tmp_path_factory: Any, data: bytes) -> None:
    _counted("loader bytes")
    path = tmp_path_factory.mktemp("bytes") / "c.yaml"
    path.write_bytes(data)
    try:
        text = storage.read_text(path)
        if text is not None:
            fileformat.loads(text, path)
    except CassetteFormatError:
        pass


headers = st.dictionaries(
    st.sampled_from(["content-type", "accept", "x-a"]),
    st.sampled_from(
        [
            "application/json",
            "text/event-stream",
            "multipart/form-data; boundary=b",
            "application/x-www-form-urlencoded",
            "text/plain",
            "",
        ]
    ),
    max_size=2,
)


@SETTINGS
@given(
    st.sampled_from(["POST", "GET", "", "p\x00st"]),
    st.text(max_size=60).map(lambda t: "https://api.example.com/v1/" + t) | st.text(max_size=60),
    headers,
    st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode())),
)
def test_normalizer_never_raises(
    method: str, url: str, request_headers: dict[str, str], content: bytes
) -> None:
    _counted("normalizer")
    key = request_key(Request(method, url, request_headers, content))
    assert len(key) == 32


@SETTINGS
@given(st.binary(max_size=400) | st.text(max_size=200).map(lambda t: t.replace("|", "\n").encode()))
def test_sse_parser_raises_only_unicode_decode_error(data: bytes) -> None:
    _counted("sse")
    parse_events(data.decode("utf-8", errors="replace"))
    try:  # both document UnicodeDecodeError for a body that is not UTF-8 (stored as base64 then)
        events = decode_events(data)
        ends = event_ends(data)
    except UnicodeDecodeError:
        return
    assert len(ends) == len(events) and all(0 < end <= len(data) for end in ends)


vcr_requests = st.fixed_dictionaries(
    {
        "method": json_values,
        "uri": st.text(max_size=30) | json_values,
        "body": json_values,
        "headers": json_values,
    }
)
vcr_responses = st.fixed_dictionaries(
    {
        "status": st.fixed_dictionaries({"code": json_values, "message": json_values}) | json_values,
        "body": st.fixed_dictionaries({"string": json_values}) | json_values,
        "headers": json_values,
    }
)


@SETTINGS
@given(
    st.one_of(
        st.lists(st.fixed_dictionaries({"request": vcr_requests, "response": vcr_responses}), max_size=3).map(
            lambda i: {"interactions": i, "version": 1}
        ),
        json_values,
    ),
    st.sampled_from(["c.yaml", "c.json", "c.yaml.gz"]),
    st.integers(0, 10_000),
    st.text(max_size=4),
    st.booleans(),
)
def test_vcr_importer_raises_only_its_documented_errors(
    document: Any, name: str, cut: int, junk: str, mutate: bool
) -> None:
    _counted("vcr importer")
    text = json.dumps(document) if name == "c.json" else yaml.safe_dump(document)
    if mutate:
        text = _mutate(text, cut, junk)
    data = text.encode("utf-8", errors="surrogatepass")
    if name.endswith(".gz"):
        data = gzip.compress(data)
    try:
        raw = read_vcr_bytes(data, name)
    except VcrReadError:
        return
    for index, (request, response) in enumerate(raw.pairs):
        with contextlib.suppress(ConversionError):
            to_interaction(request, response, index)


def test_deeply_nested_json_is_a_clear_error_or_a_key_never_a_crash(tmp_path: Path) -> None:
    depth = 100_000
    nested = ("[" * depth + "]" * depth).encode()
    key = request_key(
        Request(
            "POST", "https://api.openai.com/v1/chat/completions", {"content-type": "application/json"}, nested
        )
    )
    assert len(key) == 32
    for name, nested_yaml in [("flow.yaml", "[" * depth + "]" * depth), ("block.yaml", "- " * depth + "x")]:
        path = tmp_path / name
        path.write_text(f"interactions:\n- {nested_yaml}\nversion: 1\n")
        with pytest.raises(CassetteFormatError, match="nested more than 1000 levels deep"):
            fileformat.loads(path.read_text(), path)  # libyaml alone crashes the process here
        with pytest.raises(VcrReadError):
            read_vcr_bytes(path.read_bytes(), name)
    deep_json = tmp_path / "deep.json"
    deep_json.write_text('{"interactions": ' + "[" * depth + "]" * depth + ', "version": 1}')
    with pytest.raises(CassetteFormatError, match="nested too deep to read"):
        fileformat.loads(deep_json.read_text(), deep_json)


def test_nul_bytes_and_invalid_utf8_in_a_cassette_are_clear_errors(tmp_path: Path) -> None:
    for name, data in [
        ("nul.yaml", b"interactions: []\x00\nversion: 1\n"),
        ("bad.yaml", b"version: 1\n\xff\xfe"),
    ]:
        path = tmp_path / name
        path.write_bytes(data)
        try:
            fileformat.loads(storage.read_text(path) or "", path)
        except CassetteFormatError as error:
            assert str(path) in str(error)
        else:
            raise AssertionError(f"{name} loaded")


def test_an_event_that_is_not_a_mapping_is_a_clear_error() -> None:
    """Found by the thorough run: ``events: [null]`` raised AttributeError from the SSE encoder."""
    path = Path("c.yaml")
    text = (
        "interactions:\n- request: {method: GET, url: 'http://x/'}\n"
        "  response: {status: 200, events: [null]}\nversion: 1\n"
    )
    with pytest.raises(CassetteFormatError, match=r"interactions\[0\].response.events is not a valid body"):
        fileformat.loads(text, path)
