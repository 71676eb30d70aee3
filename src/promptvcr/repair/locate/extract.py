"""Step 2: find the stretches of text that may hold the answer.

Looks through three wrappers, outermost first: tag pairs (``[CONTENT]``…), Markdown fences,
then prose around bare JSON. Each stretch found becomes a ``Candidate``; choosing between
several is the selection step's job, not this one's.
"""

from __future__ import annotations

import re

from ..failure import RepairError
from ..job import Candidate, Job
from .fences import fenced_blocks
from .spans import Span, json_spans
from .tags import Region, any_opener, has_json, tagged_regions

MEMBER_BEFORE = re.compile(r"""["'\u201d\u2019]\s*[:\uff1a]\s*\Z""")
THINKING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_SEPARATORS = re.compile(r"[\s,]*")
_LOOSE_VALUE = re.compile(
    r"""[\[{(]|\A\s*(?:["'\u201c\u2018]|[-+]?\.?\d|true\b|false\b|null\b|none\b)|["'\u201d\u2019]\s*[:\uff1a]""",
    re.I,
)


def looks_like_json(text: str) -> bool:
    return _LOOSE_VALUE.search(text) is not None


def _valid_and_adjacent(text: str, found: list[Span]) -> list[Span]:
    """The valid spans, and broken ones that touch them (``{"a": 1}[1, True]``): prose braces go."""
    kept = []
    for index, span in enumerate(found):
        before = found[index - 1] if index else None
        after = found[index + 1] if index + 1 < len(found) else None
        touches = (
            before is not None and before.valid and _SEPARATORS.fullmatch(text, before.end, span.start)
        ) or (after is not None and after.valid and _SEPARATORS.fullmatch(text, span.end, after.start))
        if span.valid or touches:
            kept.append(span)
    return kept


def _spans(region: Region, origin: str) -> list[Candidate]:
    """Candidates inside one region: its bracketed values, or the region itself."""
    found = json_spans(region.text)
    if found and MEMBER_BEFORE.search(region.text, 0, found[0].start):
        found = []  # '"a": [1], "b": 2': the bracket is a member's value, the braces are missing
    if found and any(span.valid for span in found):
        found = _valid_and_adjacent(region.text, found)
    if not found:
        if not looks_like_json(region.text):
            return []
        return [Candidate(region.text.strip(), region.start, region.end, origin)]
    base = region.start
    return [
        Candidate(region.text[s.start : s.end], base + s.start, base + s.end, origin, not s.valid)
        for s in found
    ]


def _in_region(region: Region, origin: str) -> list[Candidate]:
    """Candidates in a region, looking inside its fences first when it has any."""
    candidates: list[Candidate] = []
    for block in fenced_blocks(region.text):
        shifted = Region(block.text, region.start + block.start, region.start + block.end)
        candidates.extend(_spans(shifted, "fence" if origin == "text" else origin))
    return candidates or _spans(region, origin)


def find_candidates(text: str, tags: tuple[tuple[str, str], ...]) -> list[Candidate]:
    """All candidates in ``text``: the tagged ones when a tag pair is present, else the rest."""
    if tags and any_opener(tags).search(text) is None:
        tags = ()
    for pair in tags:
        regions = tagged_regions(text, pair)
        found = [c for region in regions if has_json(region.text) for c in _in_region(region, "tag")]
        if found:
            return found
    if THINKING.search(text):  # a reasoning model's drafts count only when nothing follows
        drafts_hidden = THINKING.sub(lambda m: " " * len(m.group()), text)
        found = _in_region(Region(drafts_hidden, 0, len(text)), "text")
        if found:
            return found
    return _in_region(Region(text, 0, len(text)), "text")


def extract(job: Job) -> Job:
    """Fill ``job.candidates``; fail when the text holds nothing that looks like JSON."""
    if job.done:
        return job
    text = job.text
    if not text.strip():
        raise RepairError("extract", "the input is empty", text)
    candidates = find_candidates(text, job.tags)
    if not candidates:
        raise RepairError("extract", "no JSON value found in the text", text)
    return job._replace(candidates=tuple(candidates))
