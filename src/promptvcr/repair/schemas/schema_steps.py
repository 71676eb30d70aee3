"""Steps 5 and 6: make the chosen value match the schema's key names and declared types."""

from __future__ import annotations

from ..job import Job
from .coerce import coerce
from .keys import fix_keys


def repair_keys(job: Job) -> Job:
    """Rename keys to the schema's property names (case and near-misses), recursively."""
    if job.schema is None or not job.done:
        return job
    return job._replace(value=fix_keys(job.value, job.schema, job.schema))


def coerce_types(job: Job) -> Job:
    """Convert values whose type the schema states and the model got wrong."""
    if job.schema is None or not job.done:
        return job
    return job._replace(value=coerce(job.value, job.schema, job.schema))
