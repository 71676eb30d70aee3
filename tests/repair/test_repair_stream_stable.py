"""``parse(..., stream_stable=True)``: output read while it streams in (json_repair's option).

Each prefix of a streamed answer is repaired; with the option, what a shorter prefix returned
is never rewritten by a longer one (a string only grows, a key never vanishes). Without it, a
string cut off at the end is read as json_repair reads it by default: trailing whitespace
trimmed, a final backslash kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from promptvcr.repair import RepairError, parse, repair

ANSWER = json.dumps(
    {
        "title": "Notes",
        "path": "C:\\Users\\ada",
        "quote": 'she said "hi"',
        "note": "a, b: c",
        "items": ["x]", "y  z", "  "],
        "code": "def f():\n    return 1\n",
        "unicode": "caf\u00e9 \u4e2d \U0001f600",  # escaped: an emoji is two \\u escapes
        "n": 12,
        "ok": True,
    },
    ensure_ascii=True,
)
_MISSING = object()


def leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    else:
        yield path, value


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        inside = step in value if isinstance(value, dict) else isinstance(value, list) and step < len(value)
        if not inside:
            return _MISSING
        value = value[step]
    return value


def rewrites(answer: str, stream_stable: bool) -> list[str]:
    """Prefixes whose value holds something the whole answer does not grow out of.

    Prefixes still inside the first key are skipped: ``{"t`` is not an object yet (json_repair
    and we read it as the set ``{"t"}``, a list).
    """
    final = json.loads(answer)
    found = []
    for end in range(answer.index(":") + 1, len(answer)):
        try:
            value = parse(answer[:end], stream_stable=stream_stable)
        except RepairError:
            continue  # no value yet is no rewrite
        for path, leaf in leaves(value):
            grown = at(final, path)
            if grown is _MISSING or (isinstance(leaf, str) and not str(grown).startswith(leaf)):
                found.append(answer[:end])
                break
    return found


def test_growing_prefixes_never_rewrite_what_they_returned() -> None:
    assert rewrites(ANSWER, stream_stable=True) == []
    assert parse(ANSWER, stream_stable=True) == json.loads(ANSWER)


def test_without_the_option_a_cut_off_escape_is_rewritten_later() -> None:
    cut_in_escape = ANSWER[: ANSWER.index('\\"hi') + 1]  # '... "quote": "she said \\'
    assert parse(cut_in_escape)["quote"] == "she said \\"  # json_repair's default; then '"hi"'
    assert cut_in_escape in rewrites(ANSWER, stream_stable=False)


@pytest.mark.parametrize(
    ("text", "streaming", "default"),
    [
        ('{"a": "x  ', {"a": "x  "}, {"a": "x"}),
        ('{"a": "line\\n', {"a": "line\n"}, {"a": "line"}),
        ('{"a": "val\\', {"a": "val"}, {"a": "val\\"}),
        ('{"a": "caf\\u00', {"a": "caf"}, {"a": "caf"}),
        ('{"a": "x\\ud83d\\ude', {"a": "x"}, {"a": "x"}),  # half a surrogate pair is no character
        ('{"key": ["value]}', {"key": ["value]}"]}, {"key": ["value"]}),
        (
            '{"k": "val\\n123,`key2:value2',
            {"k": "val\n123,`key2:value2"},
            {"k": "val\n123", "key2": "value2"},
        ),
        ('Here it is: {"a": "x  ', {"a": "x  "}, {"a": "x"}),
        ('[1, "two  ', [1, "two  "], [1, "two"]),
    ],
)
def test_a_string_the_text_ends_inside(text: str, streaming: object, default: object) -> None:
    assert parse(text, stream_stable=True) == streaming
    assert parse(text) == default
    assert parse(text, stream_stable=False) == default


def test_the_mode_of_one_repair_does_not_leak_into_the_next() -> None:
    text = '{"key": "val\\n123,`key2:value2'
    for _ in range(2):  # json_repair's answer and the token pass are remembered per text
        assert parse(text, stream_stable=True) == {"key": "val\n123,`key2:value2"}
        assert parse(text) == {"key": "val\n123", "key2": "value2"}


def test_repair_and_schema_take_the_option() -> None:
    assert repair('{"a": "x  ', stream_stable=True) == '{"a": "x  "}'
    schema = {"type": "object", "properties": {"Title": {"type": "string"}, "N": {"type": "integer"}}}
    assert parse('{"title": "Ada  ', schema=schema, stream_stable=True) == {"Title": "Ada  "}
    assert parse('{"n": "3", "title": "Ada  ', schema=schema) == {"N": 3, "Title": "Ada"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[- ", []), ("[1, -", [1]), ('{"a": [1, -', {"a": [1]}), ("[-,", [0]), ('{"a":-', {"a": 0}), ("-", 0)],
)
def test_an_array_item_cut_off_after_its_sign_is_no_item(text: str, expected: object) -> None:
    assert parse(text) == expected  # as '["a", "' is ['a']: in an object, the member began
    assert parse(text, stream_stable=True) == expected
