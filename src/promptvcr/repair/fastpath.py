"""Step 1: valid JSON is returned exactly as ``json.loads`` reads it.

This runs first so that well-formed output, by far the common case, costs one ``json.loads``
call and never meets a heuristic that could change it.
"""

from __future__ import annotations

import json

from .job import Job


def decode_valid(job: Job) -> Job:
    """Set ``job.value`` when the whole text already is JSON."""
    if job.done:
        return job
    try:
        value = json.loads(job.text)
    except ValueError:
        return job
    return job._replace(value=value)
