"""Step 3: turn each candidate's text into a value.

``json.loads`` first; then this package's own token pass (``normalize``) for what json_repair
lacks; then json_repair for the rest. A candidate that yields nothing is dropped; the step
fails only when none yields a value.
"""

from __future__ import annotations

import json

import json_repair

from .errors import RepairError
from .job import Candidate, Job, JSONValue
from .normalize import normalize, restore


class _NoValue(Exception):
    def __init__(self, stopped_at: int) -> None:
        self.stopped_at = stopped_at


def repair_text(text: str) -> JSONValue:
    """The value ``text`` most plausibly encodes; raises ``ValueError`` when there is none."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    normalized = normalize(text)
    if not normalized.text.strip():
        raise _NoValue(normalized.stopped_at)
    try:
        value = json.loads(normalized.text)
    except ValueError:
        value = json_repair.loads(normalized.text, skip_json_loads=True)
        if value == "" and '""' not in normalized.text:
            raise _NoValue(normalized.stopped_at) from None
    return restore(value, normalized.strings)


def repair_syntax(job: Job) -> Job:
    """Fill ``job.parsed`` with ``(candidate, value)`` for every candidate that parses."""
    if job.done:
        return job
    parsed: list[tuple[Candidate, JSONValue]] = []
    failure: tuple[Candidate, int] | None = None
    for candidate in job.candidates:
        try:
            parsed.append((candidate, repair_text(candidate.text)))
        except _NoValue as error:
            failure = failure or (candidate, error.stopped_at)
        except (ValueError, RecursionError, IndexError, TypeError):
            failure = failure or (candidate, 0)
    if not parsed:
        candidate, offset = failure or (Candidate(job.text, 0, len(job.text), "text"), 0)
        raise RepairError(
            "syntax",
            "the text around the JSON could not be repaired into a value",
            job.text,
            candidate.start + offset,
        )
    return job._replace(parsed=tuple(parsed))
