"""Turn broken raw LLM output into the JSON value it meant.

``parse(text, schema=..., tags=...)`` returns the value; ``repair(...)`` returns it as JSON
text; both raise ``RepairError``. ``stream_stable=True`` reads a prefix of output still
streaming in, so that a longer prefix never rewrites what a shorter one returned. The work is
done by ``DEFAULT_STEPS``, a tuple of plain ``Job -> Job`` functions that can be replaced or
extended via ``steps=``.
"""

from __future__ import annotations

from . import upstream as upstream  # first: a missing json_repair fails here, saying how to install it
from .choose import choose
from .extract import extract
from .failure import RepairError
from .fastpath import decode_valid
from .job import NOTHING, Candidate, Job, Step
from .pipeline import DEFAULT_STEPS, parse, repair, run
from .schema_steps import coerce_types, repair_keys
from .syntax import repair_syntax
from .tags import DEFAULT_TAGS

__all__ = [
    "DEFAULT_STEPS",
    "DEFAULT_TAGS",
    "NOTHING",
    "Candidate",
    "Job",
    "RepairError",
    "Step",
    "choose",
    "coerce_types",
    "decode_valid",
    "extract",
    "parse",
    "repair",
    "repair_keys",
    "repair_syntax",
    "run",
]
