"""Finding the candidate stretches: tags, fences and JSON inside prose."""

from __future__ import annotations

import pytest

from promptvcr.repair import DEFAULT_TAGS, Job, RepairError, extract
from promptvcr.repair.locate.extract import find_candidates
from promptvcr.repair.locate.fences import fenced_blocks
from promptvcr.repair.locate.spans import json_spans
from promptvcr.repair.locate.tags import tagged_regions

CONTENT = ("[CONTENT]", "[/CONTENT]")


def texts(text: str, tags: tuple[tuple[str, str], ...] = DEFAULT_TAGS) -> list[str]:
    return [candidate.text.strip() for candidate in find_candidates(text, tags)]


@pytest.mark.parametrize(
    "text",
    [
        '[CONTENT]\n{"a": 1}\n[/CONTENT]',
        '[content]{"a": 1}[/content]',
        '[CONTENT] {"a": 1} [CONTENT]',  # closing tag without its slash
        '[CONTENT]\n{"a": 1}\n[/CONTENT',  # without its bracket
        '[CONTENT]\n{"a": 1}\n[\\CONTENT]',  # with a backslash
        '[CONTENT]\n{"a": 1}\n[/ CONTENT]',
        'Put it in a [CONTENT] tag:\n[CONTENT]\n{"a": 1}\n[/CONTENT]',  # the tag mentioned first
        'Use [CONTENT] and [/CONTENT].\n[CONTENT]\n{"a": 1}\n[/CONTENT]',
    ],
)
def test_tags_are_found_however_mangled(text: str) -> None:
    assert [region.text.strip() for region in tagged_regions(text, CONTENT)] == ['{"a": 1}']


def test_a_missing_closing_tag_runs_the_block_to_the_end() -> None:
    assert texts('[CONTENT]\n{"a": 1}\n\nThat is all.', (CONTENT,)) == ['{"a": 1}']


def test_a_closing_tag_inside_a_json_string_does_not_end_the_block() -> None:
    text = '[CONTENT]{"s": "write [/CONTENT] at the end"}[/CONTENT]'
    assert texts(text, (CONTENT,)) == ['{"s": "write [/CONTENT] at the end"}']


def test_custom_tag_pairs_and_angle_brackets() -> None:
    assert texts('[ANSWER]\n{"v": 1}\n[/ANSWER]', (("[ANSWER]", "[/ANSWER]"),)) == ['{"v": 1}']
    assert texts('<json>{"v": 1}</json> done') == ['{"v": 1}']


def test_tagged_blocks_win_over_json_in_the_prose() -> None:
    text = '[CONTENT]\n{"v": "pass"}\n[/CONTENT]\nThe input was {"v": "unknown"}.'
    assert texts(text, (CONTENT,)) == ['{"v": "pass"}']


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('~~~json\n{"a": 1}\n~~~', '{"a": 1}'),
        ('```json {"a": 1} ```', '{"a": 1}'),
        ('````{"a": 1}```', '{"a": 1}'),
        ('```json\n{"a": 1, "b": [1,', '{"a": 1, "b": [1,'),  # never closed
        ("```javascript\n{a: 1}\n```", "{a: 1}"),
        ('```json\n{"c": "```py\\nx\\n```"}\n```', '{"c": "```py\\nx\\n```"}'),  # a fence inside a string
    ],
)
def test_fenced_blocks(text: str, body: str) -> None:
    assert [block.text.strip() for block in fenced_blocks(text)] == [body]


def test_prose_around_json() -> None:
    assert texts('Sure! Here it is:\n{"a": 1}\nAnything else?') == ['{"a": 1}']
    assert texts('I used {placeholders} here. Output:\n{"t": "Hi {name}"}') == ['{"t": "Hi {name}"}']
    assert texts('{"ok": 1}\nbecause {reasons}.') == ['{"ok": 1}']
    assert texts("Results:\n[1, 2, 3]\nSorted.") == ["[1, 2, 3]"]


def test_a_broken_value_runs_to_its_matching_bracket_or_to_the_end() -> None:
    assert texts('Here: {"a": [1, 2} and more') == ['{"a": [1, 2} and more']
    assert texts('Here: {"a": {"b": 1}} then words') == ['{"a": {"b": 1}}']
    spans = json_spans('{"a": 1}, "b": 2}')
    assert [(span.start, span.end, span.valid) for span in spans] == [(0, 17, False)]


def test_several_values_are_all_candidates() -> None:
    assert texts('{"a": 1}\n{"a": 2}') == ['{"a": 1}', '{"a": 2}']
    assert texts('```json\n{"a": 1}\n```\nor\n```json\n{"a": 2}\n```') == ['{"a": 1}', '{"a": 2}']


def test_members_without_braces_are_one_candidate() -> None:
    assert texts('"a": [1], "b": 2') == ['"a": [1], "b": 2']


def test_extract_step_reports_text_without_json() -> None:
    with pytest.raises(RepairError) as caught:
        extract(Job(text="I'm sorry, I cannot help with that."))
    assert caught.value.stage == "extract"
    assert "cannot help" in str(caught.value)
    with pytest.raises(RepairError, match="empty"):
        extract(Job(text="  \n"))
