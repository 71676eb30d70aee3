"""Find where JSON values start and end inside prose.

Valid values are found exactly with ``json.JSONDecoder.raw_decode``. A broken value is
recognised by a plausible start (``{"``, ``[1``, ``{key:`` …) and runs to its matching
bracket, or to the end of the text when it was cut off. ``{placeholders}`` in prose are
neither, so they are skipped.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from ..remembered import last_answer

_DECODER = json.JSONDecoder()
_OPENERS = re.compile(r"[{\[]")
_PLAUSIBLE_OBJECT = re.compile(
    r"""\{\s*(?:["'\u201c\u2018}]|\{|\[|[\w$-]+\s*[:\uff1a]|/[/*]|\#|\Z)""",
)
_PLAUSIBLE_ARRAY = re.compile(
    r"""\[\s*(?:["'\u201c\u2018\[\]{(]|[-+.]?\d|(?:true|false|null|none)\b|\Z)""",
    re.I,
)
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)|[{}\[\]]', re.S)
_MORE_MEMBERS = re.compile(r"""\s*,\s*["'\u201c]?[\w $-]*["'\u201d]?\s*[:\uff1a]""")
_CONTINUES = re.compile(r"\s*[,:}\]]")


class Span(NamedTuple):
    """Where a value sits in the text, and whether it already parses as JSON."""

    start: int
    end: int
    valid: bool


_last_end: tuple[str, int, int] = ("", -1, 0)


def matching_end(text: str, start: int) -> int:
    """End of the bracketed value opening at ``start``: its matching bracket, or end of text.

    The answer for the last text and start asked about is kept: the quick path and extraction
    both ask about the value that opens the text.
    """
    global _last_end
    last_text, last_start, last_end = _last_end
    if text is last_text and start == last_start:
        return last_end
    end = _matching_end(text, start)
    _last_end = (text, start, end)
    return end


def _matching_end(text: str, start: int) -> int:
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text, start):
        char = match.group()
        if len(char) > 1:
            continue  # a string or a comment
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return match.end()
    return len(text)


def json_spans(text: str) -> list[Span]:
    """Top-level JSON containers in ``text``, valid or plausibly broken, left to right.

    A valid value followed by ``, "key":`` is not complete (``{"a": 1}, "b": 2}``), so it is
    reported as broken. A broken value whose brackets balance early but which is followed by
    more JSON punctuation (``[{"a": 1}}, {...}]``) runs to the end of the text: where it ends
    is json_repair's call, not ours.

    The spans of the last text asked about are kept (callers must not change the list): the
    quick path looks first, and extraction looks again at the same text object when the quick
    path had to give up.
    """
    return _find_spans(text)


@last_answer
def _find_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    position = 0
    while True:
        opening = _OPENERS.search(text, position)
        if opening is None:
            return spans
        start = opening.start()
        try:
            _, end = _DECODER.raw_decode(text, start)
        except ValueError:
            end = -1
        if end > 0 and not _MORE_MEMBERS.match(text, end):
            spans.append(Span(start, end, True))
            position = end
            continue
        pattern = _PLAUSIBLE_OBJECT if opening.group() == "{" else _PLAUSIBLE_ARRAY
        if end < 0 and not pattern.match(text, start):
            position = start + 1
            continue
        end = matching_end(text, start)
        if _CONTINUES.match(text, end):
            end = len(text)
        spans.append(Span(start, end, False))
        position = end
