"""The token pass that runs before json_repair (``promptvcr.repair.tokens.token_pass``)."""

from __future__ import annotations

import json
import re

import pytest

from promptvcr.repair.tokens import token_pass
from promptvcr.repair.tokens.strings import decode_body
from promptvcr.repair.tokens.token_pass import normalize, restore


def value_of(text: str) -> object:
    """What the pass alone makes of ``text`` (it must not have needed to stop)."""
    normalized = normalize(text)
    assert normalized.stopped_at == len(text), f"pass stopped at {normalized.stopped_at}: {normalized.text!r}"
    return restore(json.loads(normalized.text), normalized.strings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"doc": """Line 1\n"quoted"\nLine 3"""}', {"doc": 'Line 1\n"quoted"\nLine 3'}),
        ("{'''k''': '''v'''}", {"k": "v"}),
        ("{'msg': 'it\\'s', 'ok': True}", {"msg": "it's", "ok": True}),
        ("{'msg': 'it's fine', 'n': None}", {"msg": "it's fine", "n": None}),
        ("{\u201cname\u201d: \u201cAda\u201d}", {"name": "Ada"}),
        ('{"a"\uff1a1\uff0c"b"\uff1a2}', {"a": 1, "b": 2}),
        ('{"a": 1,, "b": 2,}', {"a": 1, "b": 2}),
        ("{$ref: 1, first-name: 2, _x: 3}", {"$ref": 1, "first-name": 2, "_x": 3}),
        ('{"a": 1 // one\n, /* two */ "b": 2 # three\n}', {"a": 1, "b": 2}),
        ('{"a": "x"\n "b": "y"}', {"a": "x", "b": "y"}),
        ("[1 2 3]", [1, 2, 3]),
        ("{'a', 'b'}", ["a", "b"]),
        ('{"p": (1, 2)}', {"p": [1, 2]}),
        ('"a": 1, "b": [2]', {"a": 1, "b": [2]}),
    ],
)
def test_rewrites_what_json_repair_lacks(text: str, expected: object) -> None:
    assert value_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": ', {"a": 1}),
        ('{"a": 1, "b', {"a": 1}),
        ('{"done": fals', {"done": False}),
        ('{"v": nul', {"v": None}),
        ('{"v": [tr', {"v": [True]}),
        ('{"text": "line one\n  ', {"text": "line one"}),  # as json_repair; kept when stream_stable
        ('{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}),
        ('{"s": "ends in a backslash \\', {"s": "ends in a backslash \\"}),
        ('["a", "', ["a"]),  # cut off before an item's first character: no item
        ('{"a": ["', {"a": []}),
        ('{"a": "', {"a": ""}),  # a member whose value began keeps it
    ],
)
def test_truncated_output_is_closed_as_far_as_it_got(text: str, expected: object) -> None:
    assert value_of(text) == expected


def test_whitespace_at_the_end_of_strings_is_kept() -> None:
    assert value_of("{'a': '\n    b\n'}") == {"a": "\n    b\n"}
    assert value_of('{"a": "tab\t", "b": 1,}') == {"a": "tab\t", "b": 1}


def test_a_raw_newline_ending_a_key_is_dropped_but_one_inside_is_kept() -> None:
    assert value_of('{"key\n": 1, "two\nlines": 2,}') == {"key": 1, "two\nlines": 2}


def test_a_forgotten_closing_quote_before_the_closing_brackets() -> None:
    assert value_of('{"key": ["value]}') == {"key": ["value"]}
    assert value_of('{"a": "cut off here }') == {"a": "cut off here"}


def test_a_stray_bracket_line_after_an_unclosed_multiline_string() -> None:
    text = '{"spec": "a:\n  b: 1\n\n}\n"next": "x"}'
    assert value_of(text) == {"spec": "a:\n  b: 1\n\n", "next": "x"}


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "He said "hi" twice"}',  # unescaped quotes: json_repair knows these best
        '{"a": [1, 2}',  # mismatched bracket
        "{key: value, other: thing}",  # unquoted values
        '{"a": 2e3.4}',  # not a number, whatever it is
        "(1, 2) and (3, 4)",
    ],
)
def test_stops_at_the_first_uncertain_token_and_keeps_the_rest_verbatim(text: str) -> None:
    normalized = normalize(text)
    assert normalized.stopped_at < len(text)
    assert normalized.text.endswith(text[normalized.stopped_at :])


def test_strings_with_trailing_whitespace_hide_behind_placeholders_until_restored() -> None:
    normalized = normalize('{"a": "x\t", "b": "y"')
    assert "x\t" not in normalized.text
    assert restore(json.loads(normalized.text), normalized.strings) == {"a": "x\t", "b": "y"}


def test_inputs_containing_the_placeholder_marker_do_not_use_placeholders() -> None:
    text = '{"a": "\ue000 0\ue001 \t", "b": 1,}'
    normalized = normalize(text)
    assert normalized.strings == {}
    assert json.loads(normalized.text) == {"a": "\ue000 0\ue001 \t", "b": 1}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("it\\'s", "it's"),
        ("^\\d{3}-\\d{4}$", "^\\d{3}-\\d{4}$"),
        ("C:\\Users\\ada", "C:\\Users\\ada"),
        ("\\(x\\)", "\\(x\\)"),
        ("tab\\there", "tab\there"),
        ("\\u4e2d\\ud83d\\ude00", "\u4e2d\U0001f600"),
        ('say "hi"', 'say "hi"'),
        ("raw\nnewline", "raw\nnewline"),
    ],
)
def test_string_bodies_keep_what_the_model_meant(body: str, expected: str) -> None:
    assert decode_body(body) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": .5, "b": 2., "c": -, "d": 2e}', {"a": 0.5, "b": 2, "c": 0, "d": 2}),
        ('{"zip": 0789}', {"zip": "0789"}),
        ("(1)", 1),
        ("(1, 2)", [1, 2]),
        ('{"a": 2, "b": 3, ... }', {"a": 2, "b": 3}),
        ('{"a" 2, "b" "x"}', {"a": 2, "b": "x"}),
        ('{"id": ObjectId("12"), "n": undefined}', {"id": "12", "n": None}),
        ("callback(2);", 2),
        ("1, 2, 3,", [1, 2, 3]),
        ("4,", 4),
        ('{"a": "x\\u00', {"a": "x"}),
    ],
)
def test_reads_what_models_write_loosely(text: str, expected: object) -> None:
    assert value_of(text) == expected


_SHORTCUT_TEXTS = [
    '{"a": "x", "b": "y z", "": ""}',
    "{'a': 'x', 'it': \"q\"}",
    "{\u201ca\u201d: \u201cx\u201d, \u2018b\u2019: \u2018y\u2019}",
    '{"a": "ends in a space ", "b": "tab\t"}',  # placeholders
    '{"a": "x"\n "b": "y"}',  # a missing comma
    '{"a" "b"}',  # a missing colon
    "{'a', 'b'}",  # a Python set
    '["a" "b", "c"]',
    '{"doc": """x"""}',
    "{'''k''': '''v'''}",
    '""""',
    '"a": 1, "b": 2',
    '{"a": "He said "hi" twice"}',  # no shortcut: the quote after 'said ' closes nothing
    "{'msg': 'it's fine'}",
    '{"a": "x\\n", "b": "\\u00e9"}',  # escapes: the general path
    '{"spec": "a:\n  b: 1\n\n}\n"next": "x"}',
    '"abc"',
    "'abc' : 1",
    '{"a": "cut off',
    '{"a"\uff1a"x"\uff0c "b" :  "y" ,\n"c": ["d" , "e",], "f": ("g", "h")}',  # the ',' and ':' after
    '{"a", "b"}',
    '"a", "b"',
]


@pytest.mark.parametrize("text", _SHORTCUT_TEXTS)
@pytest.mark.parametrize("stream_stable", [False, True])
def test_plain_strings_read_by_the_shortcut_as_by_the_general_path(
    text: str, stream_stable: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PLAIN_STRING`` (a string whose body is its value) is a shortcut, never a rule of its own."""
    fast = normalize((text + " ")[:-1], stream_stable)
    never = re.compile(r"(?!)")
    monkeypatch.setattr(token_pass, "PLAIN_STRING", dict.fromkeys(token_pass.PLAIN_STRING, never))
    assert normalize((text + " ")[:-1], stream_stable) == fast
