"""A raw newline before the closing quote of a one-line string is layout (issue 21).

``"a": "x [1,2]\\n",`` (the closing quote pushed onto the next line) means ``"x [1,2]"``; a
multi-line string keeps its final newline (code, a poem); escaped ``\\n`` and valid JSON are
never touched. Each input is checked through ``parse``'s shortcuts and through the whole
pipeline (``steps`` given explicitly), which must agree.
"""

from __future__ import annotations

import pytest

from promptvcr.repair import DEFAULT_STEPS, parse
from promptvcr.repair.tokens.strings import without_layout_newline

PIPELINE_ONLY = list(DEFAULT_STEPS)  # not DEFAULT_STEPS itself (tuple() would return it): no shortcut


def both_roads(text: str) -> object:
    value = parse(text)
    assert parse(text, steps=PIPELINE_ONLY) == value, "a shortcut and the pipeline disagree"
    return value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a":"x}``` [1,2]\n","b":"y"}', {"a": "x}``` [1,2]", "b": "y"}),
        ('{"a": "x\r\n", "b": 1}', {"a": "x", "b": 1}),
        ('{"a": "x\n\n", "b": 1', {"a": "x", "b": 1}),
        ('["x\n", "y"', ["x", "y"]),
        ('{"a": "x\n",}', {"a": "x"}),  # the trailing-comma shortcut must not keep it
        ('Sure: {"a": "x\n"} done', {"a": "x"}),
        ('```json\n{"a": "x\n"}\n```', {"a": "x"}),
        ("{'a': 'x\n'}", {"a": "x"}),
    ],
)
def test_the_newline_after_a_one_line_string_is_trimmed(text: str, expected: object) -> None:
    assert both_roads(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"code": "def f():\n    return 1\n"}', {"code": "def f():\n    return 1\n"}),
        ('{\n    "a": "\n    b\n"\n}\n', {"a": "\n    b\n"}),
        ('{"a": "x\ny\n",}', {"a": "x\ny\n"}),
        ('{"a": "x\\n",}', {"a": "x\n"}),  # escaped: data
        ('{"a": "x\\n"}', {"a": "x\n"}),  # valid JSON
        ('{"a": "x\n ", "b": 1,}', {"a": "x\n ", "b": 1}),  # not directly before the quote
        ('{"a": "tab\t", "b": 1,}', {"a": "tab\t", "b": 1}),
    ],
)
def test_other_whitespace_ending_a_string_is_kept(text: str, expected: object) -> None:
    assert both_roads(text) == expected


def test_a_prefix_still_streaming_keeps_the_newline() -> None:
    text = '{"a":"x [1,2]\n","b":"y"}'
    assert parse(text, stream_stable=True) == {"a": "x [1,2]\n", "b": "y"}
    assert parse(text) == {"a": "x [1,2]", "b": "y"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [("x\n", "x"), ("x\r\n", "x"), ("\n", ""), ("x\ny\n", "x\ny\n"), ("\nx\n", "\nx\n"), ("x", "x")],
)
def test_the_rule_reads_the_raw_body(body: str, expected: str) -> None:
    assert without_layout_newline(body) == expected
