"""Choose which of several possible closing markers really ends a block.

A closing tag or fence can also appear *inside* the JSON (``"use [/CONTENT] to end"``), and
the real one can be missing. Shared by the tag and fence finders so both make the same call.
"""

from __future__ import annotations

import json
import re

_QUOTE_OR_ESCAPE = re.compile(r'["\\]')


def inside_string(text: str, start: int, stop: int) -> bool:
    """Whether ``stop`` falls inside a double-quoted string, scanning from ``start``."""
    inside = False
    index = start
    while True:
        match = _QUOTE_OR_ESCAPE.search(text, index, stop)
        if match is None:
            return inside
        if match.group() == "\\":
            index = match.end() + 1
            continue
        inside = not inside
        index = match.end()


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def pick_closer(text: str, start: int, closers: list[tuple[int, int]]) -> tuple[int, int]:
    """Return ``(content_end, resume_at)`` for a block whose content begins at ``start``.

    ``closers`` are ``(begin, end)`` spans of possible closing markers after ``start``. The
    first one that leaves valid JSON before it wins; failing that, the first one outside a
    string; failing that, the last one; with none at all the block runs to the end of text.
    """
    if not closers:
        return len(text), len(text)
    for begin, end in closers:
        if _parses(text[start:begin]):
            return begin, end
    for begin, end in closers:
        if not inside_string(text, start, begin):
            return begin, end
    return closers[-1]
