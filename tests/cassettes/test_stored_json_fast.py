"""The two styles :func:`~promptvcr.files.storedjson.json_body` recognises whole (none,
and ``json.dumps``'s default separators) give the bytes of the plain path,
:func:`~promptvcr.cassettes.bodies.decode_body`; look-alikes are still checked field by field."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.property_settings import property_settings

from promptvcr.cassettes.bodies import decode_body
from promptvcr.files.storedjson import json_body

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@property_settings(300)
@given(values, st.sampled_from([None, {"separators": [", ", ": "]}]))
def test_the_common_styles_give_the_plain_bytes(value: Any, style: dict[str, Any] | None) -> None:
    stored: dict[str, Any] = {"json": value} if style is None else {"json": value, "style": style}
    assert json_body(stored) == b"".join(decode_body(stored))


@pytest.mark.parametrize(
    "style",
    [
        {"separators": [", ", ": "], "ascii": True},
        {"separators": [", ", ": "], "ascii": False},
        {"separators": [",", ": "]},
        {"separators": [", ", ":"]},
    ],
)
def test_look_alikes_give_their_own_bytes(style: dict[str, Any]) -> None:
    stored = {"json": {"a": [1, "é"], "b": None}, "style": style}
    assert json_body(stored) == b"".join(decode_body(stored))


@pytest.mark.parametrize(
    "stored",
    [
        {"json": {"a": 1}, "style": OrderedDict(separators=[", ", ": "])},  # not a plain mapping
        {"json": {"a": 1}, "style": {"separators": (", ", ": ")}},
        {"json": {"a": 1}, "style": {"separators": [", ", ": "]}, "raw": '{"a": 1}'},
        {"json": {"a": 1}, "raw": '{"a":1}'},
    ],
)
def test_what_is_not_exactly_those_styles_is_left_to_decode_body(stored: dict[str, Any]) -> None:
    assert json_body(stored) is None
