"""Shortcuts that must give exactly the answer of the longer road they skip (issue 21).

- ``bail.certain_bail``: when it says the token pass would stop having rewritten nothing but
  spacing, it must be right (json_repair then reads the text itself, as it would anyway);
- the direct json_repair parser must answer as ``json_repair.loads``;
- the fenced-block and prose quick paths must give what the full pipeline gives;
- ``bail.bare_word_bail`` must say exactly where the pass stops on a leading bare word, and the
  quick path must then answer as the pipeline does;
- valid values side by side (``{"a": 1}, {"b": 2}``) must stop the token pass, since the quick
  path gives up on them without running it.

Checked on every input of the three data sets, on cut and spliced variants of them, and on
seeded random token soup.
"""

from __future__ import annotations

import functools
import json
import random
import re
from typing import Any

import json_repair
import pytest
from peer_suites import NO_VALUE, attempt, load_suite
from repair_corpus import load_cases

from promptvcr.repair import DEFAULT_TAGS, Job, RepairError, parse, run
from promptvcr.repair.fastpath import finite
from promptvcr.repair.job import NOTHING
from promptvcr.repair.locate.fences import fenced_blocks
from promptvcr.repair.locate.spans import json_spans
from promptvcr.repair.measure import source_size, text_size
from promptvcr.repair.no_loss import _kept_size, _lost
from promptvcr.repair.pipeline import DEFAULT_STEPS
from promptvcr.repair.quick import (
    _lone_value,
    _stops_after_first,
    _whole_text_value,
    fenced_value,
    prose_value,
    quick_value,
)
from promptvcr.repair.tokens.bail import bare_word_bail, certain_bail
from promptvcr.repair.tokens.token_pass import normalize
from promptvcr.repair.upstream import forget, source_for_upstream, upstream_value

_SOUP = [
    *'{}[]:, \n"',
    *('"a"', '"b c"', '"x "', '"\\n"', '"\\u00e9"', '"q\\"r"', '""', '"lorem "', '"un', '"a\\q"'),
    *("1", "-2", "0", "01", "1.5", "2.", ".5", "1e5", "true", "false", "null", "True", "None"),
    *("x", "key", "value", "/", "/3", "//c\n", "#", "...", "(", ")", "'s'", "1_0", "e", "-"),
    *(";", "\u201c", "tru", "$a", "_b", "\\", ", b: ", ":,", ": }", '"""'),
    *("1.1.1", "10-20", "2024-01-15", "1e5e", "0.5e", "1.", "-0", "12abc", "1+2"),
]

_INSERTS = ["x", "a1", "/3", " foo", ".5", "_1", "-2", "\u00e9"]


@functools.cache
def dataset_texts() -> tuple[str, ...]:
    texts = [case["input"] for case in load_cases()]
    texts += [case["input"] for suite in ("json_repair", "jsonrepair_js") for case in load_suite(suite)]
    return tuple(texts)


def variants(seed: int, count: int) -> list[str]:
    """Cuts and splices of the data sets, and random token soup behind an opening bracket."""
    rng = random.Random(seed)
    texts = list(dataset_texts())
    texts += [block.text for text in dataset_texts() for block in fenced_blocks(text)]
    texts += [text[s.start : s.end] for text in dataset_texts() for s in json_spans(text) if s.valid]
    found = []
    for text in texts:
        found.append(text[: rng.randrange(len(text) + 1)])
        at = rng.randrange(len(text) + 1)
        found.append(text[:at] + rng.choice(_INSERTS) + text[at:])
    for _ in range(count):
        soup = "".join(rng.choice(_SOUP) for _ in range(rng.randint(1, 12)))
        found.append(rng.choice(["{", "[", '{"k": ', "[1, ", '{"a": [', " {", ""]) + soup)
    return found


def _stops_unchanged(text: str) -> bool:
    normalized = normalize(text)
    return (
        normalized.stopped_at < len(text)
        and not normalized.strings
        and source_for_upstream(text, normalized) is text
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_certain_bail_is_never_wrong(seed: int) -> None:
    texts = [*dataset_texts(), *variants(seed, 20_000)]
    predicted = [text for text in texts if certain_bail(text)]
    assert len(predicted) > 1000  # it does recognise the common shapes
    assert [text for text in predicted if not _stops_unchanged(text)] == []


def test_certain_bail_recognises_the_common_shapes() -> None:
    for text in (
        '{"key": "v"alue"}',
        '{"name": "John", "city": New York}',
        '[ "lorem "ipsum" sic"]',
        '{"key": 1/3}',
        '{"a": "first, b: 1}',
        '{"key": , "key2": "value2"}',
        '{"a": 1, "b": [}',
    ):
        assert certain_bail(text), text
    for text in ('{"key": "value"', "{'a': 1}", '{"a": 1,}', '{"a": "x", "b" "y"}', '{"a" 1 "b"x}', "[1, [2"):
        assert not certain_bail(text), text


def _upstream_loads(text: str) -> Any:
    return json_repair.loads(text, skip_json_loads=True)


def test_direct_parser_answers_as_json_repair_loads() -> None:
    for text in dataset_texts():
        forget()
        ours = attempt(upstream_value, text)
        theirs = attempt(_upstream_loads, text)
        if theirs is NO_VALUE or (theirs == "" and '""' not in text and "''" not in text):
            assert ours is NO_VALUE or ours is NOTHING, text
        else:
            assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True), text


def _pipeline(text: str) -> Any:
    forget()
    return run(Job(text=text, schema=None, tags=DEFAULT_TAGS), DEFAULT_STEPS[1:]).value


def _valid_values() -> list[str]:
    """Every valid JSON text of the data sets, stripped: the values the generators wrap."""
    values = []
    for text in dataset_texts():
        try:
            json.loads(text)
        except ValueError:
            continue
        values.append(text.strip())
    return values


def _fenced_and_prose_texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    values = _valid_values()
    prose = ["", "Here it is:\n", "Sure! ", "Note: {x}\n", "}", "]", " {}", "[1]", ', "b": 2}', "a, b: "]
    prose += ["<think>x</think>", "[CONTENT]", '"q": 1,', "~~~\n"]
    fences = ["```json\n{}\n```", "```\n{}\n```", "```json {} ```", "~~~\n{}\n~~~", "```{}```"]
    fences += ["```python\n{}\n```", "```json\n{}\n", "{}"]
    return [
        rng.choice(prose) + rng.choice(fences).replace("{}", rng.choice(values)) + rng.choice(prose)
        for _ in range(3000)
    ]


@pytest.mark.parametrize("seed", [1, 2])
def test_fenced_and_prose_quick_paths_give_the_pipelines_answer(seed: int) -> None:
    texts = [*dataset_texts(), *_fenced_and_prose_texts(seed)]
    answered = 0
    for text in texts:
        try:
            json.loads(text)
            continue  # valid JSON never reaches them
        except ValueError as error:
            valid_first = error.msg == "Extra data"
        forget()
        if "```" in text or "~~~" in text:
            quick = fenced_value(text, DEFAULT_TAGS)
        elif valid_first or (text.lstrip()[:1] not in ("{", "[") and ("{" in text or "[" in text)):
            quick = prose_value(text, DEFAULT_TAGS)
        else:
            continue
        if quick is NOTHING:
            continue
        answered += 1
        slow = attempt(_pipeline, text)
        assert json.dumps(quick, sort_keys=True) == json.dumps(slow, sort_keys=True, default=str), text
    assert answered > 1000


def test_parse_uses_fresh_memos_for_each_text() -> None:
    """Per-text memos serve the stages of one repair: an equal text later gets the same answer."""
    text = '{"key": "v"alue", "n": 1'
    assert parse(text) == parse((text + " ")[:-1]) == parse(text)


def _outcome(function: Any, text: str) -> str:
    """The value as canonical JSON, or the failing stage and message."""
    try:
        return json.dumps(function(text), sort_keys=True, default=str)
    except RepairError as error:
        return f"error: {error}"


@pytest.mark.parametrize("seed", [1, 2])
def test_bare_word_bail_knows_where_the_pass_stops(seed: int) -> None:
    rng = random.Random(seed)
    words = ["abc", "foo", "ES2020", "trueble", "`foo\u00b4", "x", "tru", "n", "undefined", "1x", "$a", "_b"]
    words += ["2e3.4", "0.0.1", "234..5", ".", "...", "-x", "+", "1.2.3", "2e", "-", "-Infinity", "+5", "01"]
    tails = ["", " [", " {", "\n2", ", b", ": 1", " bar", "(1)", '"', " ```json\n{}\n```", " <a>"]
    texts = [*dataset_texts(), *variants(seed, 5000)]
    texts += [rng.choice(["", " ", "\n"]) + rng.choice(words) + rng.choice(tails) for _ in range(3000)]
    predicted = 0
    for text in texts:
        at = bare_word_bail(text)
        if at < 0:
            continue
        predicted += 1
        normalized = normalize(text)
        assert (normalized.text, normalized.strings, normalized.stopped_at, normalized.dropped) == (
            text[at:],
            {},
            at,
            "",
        ), text
        # and the quick path then answers as the pipeline does
        forget()
        assert _outcome(lambda t: quick_value(t, DEFAULT_TAGS), text) in (
            _outcome(_pipeline, text),
            json.dumps(NOTHING, default=str),
        ), text
    assert predicted > 1000


def _side_by_side_texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    values = [value for value in _valid_values() if value[:1] in ("{", "[")]
    gaps = ["", " ", "\n", ",", ", ", ",\n", "\n\n", " // c\n", ";", ",\u200b", "\u200b"]
    nexts = [*values, '"key2": "v"}', "'x'", "abc", ": 1", "}", "]", "\u201cq\u201d", "# c", "/* c */", ""]
    return [
        rng.choice(["", " ", "\n"]) + rng.choice(values) + rng.choice(gaps) + rng.choice(nexts) + tail
        for tail in ("", "", "\n", ",", " done", "}", ', "x": 1}')
        for _ in range(300)
    ]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_valid_value_then_another_stops_the_token_pass(seed: int) -> None:
    """The quick path gives up on them at once, or answers as the pipeline does: the pass
    could not have read them whole."""
    checked = 0
    for text in [*dataset_texts(), *_side_by_side_texts(seed)]:
        try:
            json.loads(text)
            continue
        except ValueError as error:
            if error.msg != "Extra data":
                continue
        if not _stops_after_first(text, json_spans(text)):
            continue
        checked += 1
        assert normalize(text).stopped_at < len(text), text
        assert not (certain_bail(text) and _lone_value(text, DEFAULT_TAGS)), text
        forget()
        quick = _outcome(lambda t: quick_value(t, DEFAULT_TAGS, True), text)
        assert quick in ('"NOTHING"', _outcome(_pipeline, text)), text
    assert checked > 1000


@pytest.mark.parametrize("seed", [1, 2])
def test_whole_text_quick_path_gives_the_pipelines_answer(seed: int) -> None:
    """``{"a": 1}, "b": 2}``: one broken value that extraction takes whole."""
    answered = 0
    for text in [*dataset_texts(), *variants(seed, 5000)]:
        forget()
        quick = _outcome(lambda t: _whole_text_value(t, DEFAULT_TAGS, False), text)
        if quick == '"NOTHING"':
            continue
        answered += 1
        assert quick == _outcome(_pipeline, text), text
    assert answered > 300


def test_no_loss_bound_for_valid_json_agrees_with_the_token_pass() -> None:
    """``no_loss._lost`` skips the token pass on valid JSON when a value falls short even of
    the text without its literals: it must say what the pass-based count says, at every size."""
    texts = list(dataset_texts())
    texts += [block.text for text in dataset_texts() for block in fenced_blocks(text)]
    texts += [text[s.start : s.end] for text in dataset_texts() for s in json_spans(text) if s.valid]
    texts += ['{"b": 1, "b": 1}', '{"k": [true, null, NaN, -Infinity]}', '[1e5, "x"]', '"true"']
    checked = 0
    for text in texts:
        try:
            json.loads(text)
        except ValueError:
            continue
        total = source_size(text)
        for size in range(total + 2):
            assert _lost(size, text) == (size < total and size < _kept_size(text)), (size, text)
        checked += 1
    assert checked > 100


def test_finite_looks_for_nan_and_infinity_as_before() -> None:
    """``fastpath.finite`` finds ``nan``/``inf`` in any case with a cheap scan first."""
    rng = random.Random(5)
    texts = [*dataset_texts(), "NaN", "-Infinity", "xINF", "Ann", "info", "iNf", "nAn", "Christian", "nnnan"]
    texts += ["".join(rng.choice("nNaAiIfF x") for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    for text in texts:
        marker = [float("nan")]
        assert (finite(marker, text) is marker) == (re.search("nan|inf", text, re.I) is None), text


def test_text_size_counts_letters_and_digits_as_the_regex_does() -> None:
    rng = random.Random(9)
    alphabet = [chr(code) for code in range(128)] + ["\u00e9", "\u6771", "\u0663", "_", "\u00b2"]
    texts = [*dataset_texts(), "".join(chr(code) for code in range(128))]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(3000)]
    for text in texts:
        assert text_size(text) == len(re.sub(r"[\W_]+", "", text)), text


def test_certain_bail_on_a_top_level_number_or_literal_then_more() -> None:
    """'1\\n2', 'null x': the pass reads the first value and stops at the next, unchanged."""
    rng = random.Random(4)
    firsts = ["1", "-2.5", "true", "null", "0", "1e5", "false", "01", "1.", "True", "nan"]
    nexts = ["2", "x", '"a"', "[1]", "{", "]", "}", ":", "(", "\u201c", "-", ".5", "tru", "N", "$"]
    nexts += ["\u00e9", "1,2", "abc def", ",2", "// c", "# c", ";", "\u200b2", "/* c */ 2", "\uff0c2"]
    texts = [
        rng.choice(["", " ", "\n"])
        + rng.choice(firsts)
        + rng.choice([" ", "\n", "  \t", ""])
        + rng.choice(nexts)
        for _ in range(5000)
    ]
    predicted = [text for text in texts if certain_bail(text)]
    assert len(predicted) > 1000
    assert [text for text in predicted if not _stops_unchanged(text)] == []
