"""A character YAML reads as a line break or refuses, anywhere in a text, leaves the text to
the event reader (:mod:`promptvcr.files.yamllines` looks for them in the whole text first,
one way for an ASCII text and another for the rest): what is read is the safe loader's reading,
always."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.files import yamllines, yamlreader

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ASCII_SPECIAL = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F]]
SPECIAL = [
    *ASCII_SPECIAL,
    *(chr(c) for c in range(0x80, 0xA0)),
    "\u2028",
    "\u2029",
    "\ufeff",
    "\ufffe",
    "\uffff",
]
SPECIAL += ["\ud800", "\udfff"]

CASSETTE = (
    "interactions:\n- request:\n    method: POST\n    url: http://h/v1/x\n    json:\n"
    '      model: gpt-4o\n      "quoted key": "a \\u00e9 b"\n'
    "      'single': 'it''s'\n      block: |\n        line one\n        line two\n"
    "  response:\n    status: 200\n    text: an answer, é\nversion: 1\n"
)


def test_the_cassette_is_read_here() -> None:
    assert yamllines.load(CASSETTE, yamlreader.resolve_plain) is not yamllines.UNREAD
    assert yamllines.load(CASSETTE.replace("é", "e"), yamlreader.resolve_plain) is not yamllines.UNREAD


@pytest.mark.parametrize("char", SPECIAL, ids=[f"U+{ord(c):04X}" for c in SPECIAL])
def test_a_special_character_anywhere_leaves_the_text_to_the_event_reader(char: str) -> None:
    for text in (CASSETTE, CASSETTE.replace("é", "e")):
        for at in range(len(text) - 1):  # before each character but the final line break
            changed = text[:at] + char + text[at:]
            assert yamllines.load(changed, yamlreader.resolve_plain) is yamllines.UNREAD, (at, changed)


def _reading(text: str) -> Any:
    try:
        return repr(yamlreader.load(text))
    except (yaml.YAMLError, yamlreader.Refused, yamlreader.TooDeep):
        return "error"


def _safe(text: str) -> Any:
    try:
        return repr(yaml.load(text, Loader=SAFE))
    except yaml.YAMLError:
        return "error"


@property_settings(200)
@given(st.integers(min_value=0, max_value=len(CASSETTE) - 1), st.sampled_from(SPECIAL[:-2]))
def test_a_text_with_one_reads_as_the_safe_loader_reads_it(at: int, char: str) -> None:
    changed = CASSETTE[:at] + char + CASSETTE[at:]
    assert _reading(changed) == _safe(changed)
