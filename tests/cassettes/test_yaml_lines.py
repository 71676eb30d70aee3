"""The line reader (:mod:`promptvcr.files.yamllines`): what it reads is what the safe loader reads.

It is a fast path: a text it does not recognise exactly is left to the event reader. So the
properties are that (1) whatever it returns equals ``yaml.load`` with the safe loader, for
texts built from the pieces YAML treats specially and for hand-edited layouts, and (2) it
does read what promptvcr's writer writes, rather than leaving every cassette to the slow path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.files import yamllines, yamlreader
from promptvcr.files.yamlwriter import Flow, sequence_items

SETTINGS = property_settings(400)
SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Pieces with a meaning of their own in YAML, and the layout's own pieces (indentation,
#: entries, keys), so that generated texts are often almost a cassette.
TRICKY = [
    *("yes", "No", "ON", "off", "y", "null", "~", "true", "<<", "=", ".inf", ".nan", "0x1F", "1_000"),
    *("1", "-1", "+1", "1e3", "1.5", "1.0e+20", "2024-01-01", "12:30", "-.5", "0o17", "'", '"', "\\"),
    *(": ", ":", " #", "#", "- ", "-", "? ", "|", "|-", "|+", "|2", ">", "`", "@", "%", "!", "&a", "*a"),
    *("[", "]", "{", "}", ",", "---", "...", "\n", "\n\n", "\r", "\t", " ", "  ", "\x00", "\x85"),
    *("\u2028", "\ufeff", "é", "😀", '"\\x41"', '"\\u00e9"', '"\\/"', '"\\e"', '"a\\"b"', '""', "{}", "[]"),
    *("key", "k2", "a b", "http://x", "\n  ", "\n    ", "\n- ", "\n  - ", "key: ", "  key: ", "- key: "),
]


def _outcome(text: str) -> str:
    try:
        return repr(yaml.load(text, Loader=SAFE))
    except yaml.YAMLError:
        return "error"
    except RecursionError:  # pragma: no cover - not at these sizes
        return "error"


def _agrees(text: str) -> Any:
    """The line reader's result for ``text``, checked against the safe loader when it reads it."""
    result = yamllines.load(text, yamlreader.resolve_plain)
    if result is not yamllines.UNREAD:
        assert repr(result) == _outcome(text), text
    return result


@SETTINGS
@given(st.lists(st.sampled_from(TRICKY), max_size=14))
def test_a_text_it_reads_is_read_as_the_safe_loader_reads_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    _agrees(text + "\n")
    _agrees("k: " + text + "\n")
    _agrees("items:\n- " + text + "\n")
    _agrees("a:\n  b: " + text + "\nc: 1\n")


strings = st.one_of(
    st.text(max_size=20),
    st.lists(st.sampled_from(TRICKY), max_size=6).map("".join),
)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | strings,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=25,
)


@SETTINGS
@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["{}", "+{}", "0{}", "-0{}", "{}_1", "{}e5", "{}E+5", "{}e-05"]),
)
def test_numbers_as_recorded_answers_write_them_read_as_the_safe_loader_reads_them(
    number: float, form: str
) -> None:
    """Floats (log-probabilities, embeddings) take a short way past PyYAML's resolver: the
    values are still the safe loader's, for every way a float or a look-alike is written."""
    for written in (json.dumps(number), repr(number), f"{number:.3e}", f"{number:f}"):
        text = form.format(written.lstrip("-") if form.startswith(("+", "0", "-0")) else written)
        assert _agrees(f"k: {text}\n") is not yamllines.UNREAD or not text[:1].isdigit()
        _agrees(f"items:\n- {text}\n- -{text}\n")


@SETTINGS
@given(st.lists(values, min_size=1, max_size=3))
def test_what_the_writer_writes_reads_back_the_same(items: list[Any]) -> None:
    _agrees("items:\n" + "".join(sequence_items(items)) + "version: 1\n")


def _item(n: int) -> dict[str, Any]:
    return {
        "request": {
            "method": "POST",
            "url": f"http://127.0.0.1:9/v1/chat/completions?n={n}",
            "headers": {"content-type": "application/json", "x-request-id": f"req_{n}"},
            "json": {
                "model": "gpt-4o",
                "messages": [{"role": "user", "content": f"question {n}\nwith two lines"}],
            },
        },
        "response": {
            "status": 200,
            "headers": {"content-type": "text/event-stream"},
            "events": [
                {"data": {"delta": "Hi", "n": [1, 2.5, None, True], "empty": "", "nested": [[1, 2], []]}}
            ],
            "timing": Flow({"headers": 0.012, "chunks": [0.1, 0.25]}),
        },
        "recorded": "2026-11-24T06:00:00Z",
    }


def test_the_cassette_layout_is_read_here_and_not_left_to_libyaml() -> None:
    text = "interactions:\n" + "".join(sequence_items([_item(n) for n in range(3)])) + "version: 1\n"
    result = _agrees(text)
    assert result is not yamllines.UNREAD
    assert result == yaml.load(text, Loader=SAFE)


@pytest.mark.parametrize(
    "text",
    [
        "a: |\n  one\n\n  two\n\n\nb: 1\n",
        "a: |-\n  one\n   two\nb: 1\n",
        "a: |+\n  one\n\n\nb: 1\n",
        "a: |+\n  one\n\n",
        "a: |\n\n  after a blank line\n",
        "- |\n  in a list\n- x\n",
        "a:\n- 1\n- - 2\n  - 3\n- k: v\n  k2: [1, {x: y}]\nb: {}\nc: []\n",
        'a: "tab\\there \\x41 \\u00e9 \\/ \\"q\\""\n"quoted key": yes\nNo: off\n',
        "a: 1\na: 2\nb:\nc: ''\n",
        "# a comment\na: 1 # a note\n",
        "a: 1\n  # indented comment\nb: 2\n",
        "a: x\n  continued\n",
        "a: b: c\n",
        "a:\n  b: 1\n c: 2\n",
        "a:\n- 1\n  - 2\n",
        "key : v\n",
        "a: 12:30\nb: 0x1F\nc: 1_000\nd: .inf\ne: ~\nf: -.5\ng: 1e3\n",
        "a: 2024-01-01\n",
        "- - - x\n",
        "a: {b: [1, 2,], c: 3}\n",
        "a: [1, [2, [3]]]\nb: {'x': 1}\n",
        "a: |2\n  x\n",
        "a:   spaced\n",
        "a: trailing \n",
        "a: http://x#y\n",
        "é: 1\n",
        "a: 'single'\n",
        "a: 'it''s: #1'\n'k''1': ''\n'b': '  '\nc: 'x\ty'\nd: 'open\n",
        "- '*/*'\n- 'a' b\n",
        "---\na: 1\n",
        "a: 1\n---\nb: 2\n",
    ],
)
def test_hand_edited_layouts_are_read_as_the_safe_loader_reads_them(text: str) -> None:
    _agrees(text)


def test_a_comment_or_blank_line_between_items_keeps_the_fast_path() -> None:
    text = "interactions:\n# reviewed\n- a: 1\n\n  b: |\n    x\n\n- a: 2\nversion: 1\n"
    assert _agrees(text) == {"interactions": [{"a": 1, "b": "x\n"}, {"a": 2}], "version": 1}


def test_single_quoted_scalars_as_pyyaml_writes_them_are_read_here() -> None:
    text = yaml.safe_dump({"accept": ["*/*"], "n": "1", "q": "it's", "x: y": "#z"}, allow_unicode=True)
    assert "'" in text
    assert _agrees(text) == yaml.safe_load(text)


def test_deep_nesting_is_left_to_the_event_reader() -> None:
    assert yamllines.load("- " * 5000 + "x\n", yamlreader.resolve_plain) is yamllines.UNREAD
    assert (
        yamllines.load("a: " + "[" * 5000 + "]" * 5000 + "\n", yamlreader.resolve_plain) is yamllines.UNREAD
    )


def test_a_text_read_in_pieces_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    items = [_item(n) for n in range(4)]
    items[2]["request"]["json"]["messages"].append({"role": "user", "content": "a\n- b\n\n- c\n"})
    text = "interactions:\n" + "".join(sequence_items(items)) + "version: 1\n"
    whole = _agrees(text)
    monkeypatch.setattr(yamllines, "_PIECE", 10)  # cut before every item
    assert _agrees(text) == whole != yamllines.UNREAD
