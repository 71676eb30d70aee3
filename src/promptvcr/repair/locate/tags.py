"""Find the content between tag pairs such as ``[CONTENT]`` … ``[/CONTENT]``.

Models lower-case the tags, drop the ``/`` or the ``]`` of the closing tag, write ``[\\CONTENT]``,
mention the tags in prose before using them, or stop before the closing tag. Matching is
therefore by tag *name* with tolerant punctuation rather than by exact strings.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from ..job import TagPair
from .closers import pick_closer

DEFAULT_TAGS: tuple[TagPair, ...] = (
    ("[CONTENT]", "[/CONTENT]"),
    ("[JSON]", "[/JSON]"),
    ("[ANSWER]", "[/ANSWER]"),
    ("[OUTPUT]", "[/OUTPUT]"),
    ("<json>", "</json>"),
    ("<output>", "</output>"),
    ("<answer>", "</answer>"),
)
"""Tag pairs looked for when the caller names none."""

_BRACKETED = re.compile(r"\A\s*([\[<{(])\s*/?\s*([^\]>})/\\\s]+?)\s*([\]>})])\s*\Z")
_JSONISH = re.compile(r"""[\[{]|["'\u201c\u2018][^\n]*?["'\u201d\u2019]\s*[:\uff1a]""")


class Region(NamedTuple):
    """Text between an opening tag and its (possibly missing or mangled) closing tag."""

    text: str
    start: int
    end: int


@lru_cache(maxsize=256)
def _patterns(pair: TagPair) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Tolerant regexes for the opening and closing tag of ``pair``.

    For bracketed tags the name decides; spaces, case, a ``\\`` for ``/`` and a missing final
    bracket are forgiven. Other tags are matched literally, ignoring case.
    """
    opening, closing = pair
    shape = _BRACKETED.match(opening)
    if shape is None:
        return re.compile(re.escape(opening), re.I), re.compile(re.escape(closing), re.I)
    left, name, right = (re.escape(part) for part in shape.groups())
    opener = re.compile(rf"{left}\s*{name}\s*{right}", re.I)
    closer = re.compile(rf"{left}\s*[/\\]\s*{name}\s*(?:{right})?", re.I)
    return opener, closer


@lru_cache(maxsize=64)
def any_opener(pairs: tuple[TagPair, ...]) -> re.Pattern[str]:
    """One regex for the opening tags of all ``pairs``: a single search rules them all out."""
    return re.compile("|".join(f"(?:{_patterns(pair)[0].pattern})" for pair in pairs) or "(?!)", re.I)


def has_json(text: str) -> bool:
    """Whether a tagged stretch looks like it holds JSON rather than prose about the tags."""
    return _JSONISH.search(text) is not None


def tagged_regions(text: str, pair: TagPair) -> list[Region]:
    """Every stretch of ``text`` that ``pair`` encloses and that looks like JSON, in order.

    An opening tag followed by prose and another opening tag ("wrap it in a [CONTENT] tag:
    [CONTENT] {...}") is taken as a mention, not a block: its stretch holds no JSON and is
    skipped. A second opening tag also counts as the closing tag, since models often write
    ``[CONTENT]`` twice instead of ``[CONTENT]``…``[/CONTENT]``.
    """
    opener, closer = _patterns(pair)
    opens = [(m.start(), m.end()) for m in opener.finditer(text)]
    if not opens:
        return []
    marks = sorted(opens + [(m.start(), m.end()) for m in closer.finditer(text)])
    open_set = set(opens)
    regions: list[Region] = []
    position = 0
    for mark in marks:
        if mark not in open_set or mark[0] < position:
            continue
        content_start = mark[1]
        later = [m for m in marks if m[0] >= content_start]
        content_end, resume = pick_closer(text, content_start, later)
        content = text[content_start:content_end]
        if has_json(content):
            regions.append(Region(content, content_start, content_end))
            position = resume
    return regions
