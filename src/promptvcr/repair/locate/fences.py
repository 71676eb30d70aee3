"""Find the bodies of Markdown code fences (three backticks or ``~~~``), opened or not.

Fences can be inline (```` ```json {"a": 1} ``` ````), unclosed (output cut off), or contain
a fence inside a JSON string; the closing fence is chosen by ``closers.pick_closer``. A fence
*opening* inside a JSON string (``{"a": "```json"``) is part of the string, not Markdown.
"""

from __future__ import annotations

import re

from ..remembered import last_answer
from .closers import inside_string, pick_closer
from .tags import Region

_OPENING = re.compile(r"(`{3,}|~{3,})[ \t]*([A-Za-z][\w+.-]*)?")
_LABEL_ONLY = re.compile(r"[ \t]*(?=\r?\n|\Z)")
_BRACKET = re.compile(r"[{\[]")


def _in_json_string(text: str, position: int, at: int) -> bool:
    """Whether ``at`` lies inside a string of a JSON value that opened after ``position``."""
    bracket = _BRACKET.search(text, position, at)
    return bracket is not None and inside_string(text, bracket.start(), at)


def fenced_blocks(text: str) -> list[Region]:
    """Bodies of the fenced blocks in ``text``, in order (language label removed).

    The blocks of the last text asked about are kept (callers must not change the list): the
    quick path looks first, and extraction looks again at the same text object when the quick
    path had to give up.
    """
    if "```" not in text and "~~~" not in text:
        return []
    return _find_blocks(text)


@last_answer
def _find_blocks(text: str) -> list[Region]:
    blocks: list[Region] = []
    position = 0
    scan_from = 0  # where the JSON string state is known: after the last real block
    while True:
        opening = _OPENING.search(text, position)
        if opening is None:
            return blocks
        if _in_json_string(text, scan_from, opening.start()):
            position = opening.end()  # {"a": "```"}: a fence only outside JSON strings
            continue
        fence = opening.group(1)[0] * 3
        start = opening.end()
        label = opening.group(2)
        if label and not _LABEL_ONLY.match(text, start) and label.lower() not in ("json", "jsonc", "json5"):
            # ```{"a": 1}``` has no label: what looked like one was the start of the content.
            start = opening.start(2)
        closers = [(m.start(), m.end()) for m in re.finditer(re.escape(fence) + "+", text[start:])]
        closers = [(begin + start, end + start) for begin, end in closers]
        content_end, resume = pick_closer(text, start, closers)
        blocks.append(Region(text[start:content_end], start, content_end))
        position = scan_from = max(resume, start + 1)


def without_orphan_closer(text: str) -> str:
    """``{"a": "b}```'``: a closing fence with no opening one ends the output; it is not data."""
    if text.endswith("```") and text.count("```") == 1 and text[:1] != "`":
        return text[:-3]
    return text
