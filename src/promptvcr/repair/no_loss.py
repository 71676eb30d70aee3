"""Step 5: never return less of the input's data than json_repair alone returns.

Our extraction and token pass are right more often than json_repair, but a heuristic that
misreads a text can drop a member. So when there is any sign that data was left behind (a
candidate whose value holds fewer letters and digits than its text, a candidate that did not
parse, or JSON punctuation with letters or digits touching a candidate from outside)
json_repair reads the whole text too, and its value stands when it holds words that the values
we extracted lack, other than syntax the token pass left out on purpose (comments, ``ObjectId``,
``undefined``), and more letters and digits in all. Choosing one of several values (a
correction, a later block) is a judgement, not a loss.
"""

from __future__ import annotations

import re

from .fastpath import DECODER
from .job import NOTHING, Candidate, Job
from .measure import richer, source_size, value_size
from .tokens.token_pass import normalize
from .upstream import known_value, upstream_value

_DATA = re.compile(r"[^\W_]")  # a letter or digit: without one, nothing outside can be lost
_CONTINUES_AFTER = re.compile(r"""\s*[,"'\]}:]""")
_CONTINUES_BEFORE = re.compile(r"""["'\]}][\s]*[:,]?\s*\Z""")
_LETTER = re.compile(r"[A-Za-z]")
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def continued(text: str, candidates: tuple[Candidate, ...]) -> bool:
    """Whether JSON punctuation touches a candidate from outside (``{"a": 1}, "b": 2}``)."""
    covered = sorted(candidates, key=lambda c: c.start)
    for index, candidate in enumerate(covered):
        after = covered[index + 1].start if index + 1 < len(covered) else len(text)
        gap = text[candidate.end : after]
        if _DATA.search(gap) and _CONTINUES_AFTER.match(gap):
            return True  # '{"a": 1}, "b": 2}'; a mere ', ' before the next candidate is not
        before = covered[index - 1].end if index else 0
        if _DATA.search(text, before, candidate.start) and _CONTINUES_BEFORE.search(
            text, before, candidate.start
        ):
            return True
    return False


def _tagged(job: Job) -> bool:
    return any(candidate.origin == "tag" for candidate in job.candidates)


def _kept_size(text: str) -> int:
    """Letters and digits of ``text`` outside the syntax the token pass leaves out on purpose."""
    dropped = normalize(text).dropped
    return source_size(text) - (source_size(dropped) if dropped else 0)


def _lost(size: int, text: str) -> bool:
    """Whether a value of ``size`` letters and digits holds less than ``text`` once the syntax
    the token pass leaves out is discounted (``size < _kept_size(text)``).

    In valid JSON the pass can leave out only literals (``true``, ``NaN``), which are letters
    outside strings: when the value falls short even of the text without any of those, the
    answer is known without running the pass (``{"b": 1, "b": 1}``, a duplicate key).
    """
    total = source_size(text)
    if size >= total:
        return False
    if _is_json(text) and size < total - len(_LETTER.findall(_JSON_STRING.sub("", text))):
        return True
    return size < _kept_size(text)


def _is_json(text: str) -> bool:
    try:
        DECODER.decode(text)
    except ValueError:
        return False
    return True


def may_have_lost(job: Job) -> bool:
    """Whether anything suggests data was left behind (cheap: no parsing)."""
    if len(job.parsed) < len(job.candidates):
        return True
    tagged = False
    for candidate, value in job.parsed:
        if candidate.origin == "upstream":
            return False  # the value already is json_repair's
        size = value_size(value)
        if _lost(size, candidate.text):
            return True
        tagged = tagged or candidate.origin == "tag"
    # With tags, the prompt said where the answer is: text outside them is prose.
    return not tagged and continued(job.text, job.candidates)


def _already_theirs(job: Job) -> bool:
    """Whether the one value is json_repair's own value of the text it would read here: it
    cannot be richer than itself (the certain-bail path of ``{"a": 1}, "b": }``)."""
    if len(job.parsed) != 1:
        return False
    candidate, value = job.parsed[0]
    theirs = known_value(candidate.text if _tagged(job) else job.text)
    return theirs is not NOTHING and value is theirs


def keep_upstream_data(job: Job) -> Job:
    """Replace ``job.value`` with json_repair's when ours would lose data it keeps."""
    if not job.parsed or _already_theirs(job) or not may_have_lost(job):
        return job
    if _tagged(job):  # json_repair reads what the tags hold, not the prose around them
        if len(job.parsed) != 1:
            return job
        theirs = upstream_value(job.parsed[0][0].text)
    else:
        theirs = upstream_value(job.text)
    if theirs is NOTHING:
        return job
    values = [value for _, value in job.parsed]
    ours = values if len(values) > 1 else values[0]
    if value_size(theirs) <= value_size(ours):
        return job  # not richer, whatever the pass left out: no need to run it to know
    dropped = " ".join(normalize(candidate.text).dropped for candidate, _ in job.parsed)
    if richer(ours, theirs, dropped):
        return job._replace(value=theirs)
    return job
