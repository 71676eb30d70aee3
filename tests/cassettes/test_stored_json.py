"""Stored ``json`` bodies read by a kept encoder (:mod:`promptvcr.files.storedjson`): the
same bytes as :func:`~promptvcr.cassettes.bodies.decode_body`, or left to it."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptvcr.cassettes.bodies import decode_body
from promptvcr.files.storedjson import json_body

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
styles = st.sampled_from(
    [
        None,
        {},
        {"separators": [", ", ": "]},
        {"separators": [",", ": "]},
        {"ascii": True},
        {"separators": [", ", ": "], "ascii": True},
        {"ascii": False},
    ]
)


@settings(max_examples=300, derandomize=True, database=None)
@given(values, styles)
def test_the_simple_styles_give_the_bytes_decode_body_gives(value: Any, style: dict[str, Any] | None) -> None:
    stored: dict[str, Any] = {"json": value} if style is None else {"json": value, "style": style}
    assert json_body(stored) == b"".join(decode_body(stored))


@pytest.mark.parametrize(
    "stored",
    [
        {"json": {"a": 1}, "style": {"separators": [",", ": "], "indent": 2}},
        {"json": {"a": 1}, "style": {"pad": " "}},
        {"json": {"a": 1}, "raw": '{"a":1}'},
        {"json": {"a": 1}, "style": {"separators": (", ", ": ")}},
        {"json": {"a": 1}, "style": {"separators": [", "]}},
        {"json": {"a": 1}, "style": {"ascii": "yes"}},
        {"json": {"a": 1}, "style": ""},
        {"json": {"a": 1}, "style": ["separators"]},
    ],
)
def test_other_styles_are_left_to_decode_body(stored: dict[str, Any]) -> None:
    assert json_body(stored) is None


def test_a_value_json_cannot_hold_raises_as_json_dumps_does() -> None:
    stored = {"json": {"when": datetime.date(2026, 11, 24)}}
    with pytest.raises(TypeError) as ours:
        json_body(stored)
    with pytest.raises(TypeError) as theirs:
        decode_body(stored)
    assert str(ours.value) == str(theirs.value)
