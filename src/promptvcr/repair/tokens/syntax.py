"""Step 3: turn each candidate's text into a value.

``json.loads`` first; then this package's own token pass (``normalize``) for what json_repair
lacks; then json_repair for the rest. A candidate that yields nothing is dropped; the step
fails only when none yields a value.
"""

from __future__ import annotations

import contextlib
import re

from ..failure import RepairError
from ..fastpath import DECODER, without_trailing_commas
from ..job import NOTHING, Candidate, Job, JSONValue
from ..upstream import source_for_upstream, upstream_value
from .bail import certain_bail
from .token_pass import normalize, restore


class _NoValue(Exception):
    def __init__(self, stopped_at: int) -> None:
        self.stopped_at = stopped_at


_LONE_QUOTE = re.compile(r"""\s*["']\s*\Z""")


def repair_text(text: str, known_broken: bool = False, stream_stable: bool = False) -> JSONValue:
    """The value ``text`` most plausibly encodes; raises ``_NoValue`` when there is none.

    Each stage runs only when the previous one could not finish: ``json.loads``, then
    ``json.loads`` without trailing commas (C speed, so large documents stay fast), then the
    token pass, then json_repair on what the token pass could not read with certainty.
    ``stream_stable`` is ``parse``'s option; json_repair takes it from ``upstream.forget``.
    """
    if not known_broken:
        try:
            return DECODER.decode(text)
        except ValueError:
            pass
    value: JSONValue = without_trailing_commas(text)
    if value is not NOTHING:
        return value
    if certain_bail(text):  # the pass would hand json_repair this very text
        value = upstream_value(text)
        if value is NOTHING:
            raise _NoValue(normalize(text, stream_stable).stopped_at)
        return value
    normalized = normalize(text, stream_stable)
    if not normalized.text.strip():
        raise _NoValue(normalized.stopped_at)
    if normalized.stopped_at == len(text):
        with contextlib.suppress(ValueError):
            value = DECODER.decode(normalized.text)
    if value is NOTHING:  # json_repair reads the rest (the whole text when nothing was rewritten)
        value = upstream_value(source_for_upstream(text, normalized))
    if value is NOTHING or (value == "" and _LONE_QUOTE.match(text)):
        raise _NoValue(normalized.stopped_at)  # a lone quote is no value
    return restore(value, normalized.strings)


def repair_syntax(job: Job) -> Job:
    """Fill ``job.parsed`` with ``(candidate, value)`` for every candidate that parses."""
    if job.done:
        return job
    parsed: list[tuple[Candidate, JSONValue]] = []
    failure: tuple[Candidate, int] | None = None
    for candidate in job.candidates:
        try:
            parsed.append((candidate, repair_text(candidate.text, candidate.known_broken, job.stream_stable)))
        except _NoValue as error:
            failure = failure or (candidate, error.stopped_at)
        except (ValueError, RecursionError, IndexError, TypeError):
            failure = failure or (candidate, 0)
    if not parsed:
        whole = Candidate(job.text, 0, len(job.text), "upstream")
        theirs = upstream_value(job.text)
        if theirs is not NOTHING:  # nothing of ours parsed: json_repair's value stands
            return job._replace(candidates=(whole,), parsed=((whole, theirs),))
        candidate, offset = failure or (Candidate(job.text, 0, len(job.text), "text"), 0)
        raise RepairError(
            "syntax",
            "the text around the JSON could not be repaired into a value",
            job.text,
            candidate.start + offset,
        )
    return job._replace(parsed=tuple(parsed))
