"""Turn broken raw LLM output into the JSON value it meant.

``parse(text, schema=..., tags=...)`` returns the value; ``repair(...)`` returns it as JSON
text; both raise ``RepairError``. ``stream_stable=True`` reads a prefix of output still
streaming in, so that a longer prefix never rewrites what a shorter one returned. The work is
done by ``DEFAULT_STEPS``, a tuple of plain ``Job -> Job`` functions that can be replaced or
extended via ``steps=``.

The steps in order: :mod:`.fastpath` (valid JSON as it is), :mod:`.locate` (where the answer
may be), :mod:`.tokens` (text to a value), :mod:`.choose` (one answer of several),
:mod:`.schemas` (key names and types the schema declares), with :mod:`.no_loss` checking the
result against json_repair alone (:mod:`.upstream`, its one door; :mod:`.measure`, the
yardstick); :mod:`.quick` is the short way for the common broken output. :mod:`.job` is what
passes from step to step, :mod:`.pipeline` runs them, :mod:`.failure` is the one error.
"""

from __future__ import annotations

from . import upstream as upstream  # first: a missing json_repair fails here, saying how to install it
from .choose import choose
from .failure import RepairError
from .fastpath import decode_valid
from .job import NOTHING, Candidate, Job, Step
from .locate.extract import extract
from .locate.tags import DEFAULT_TAGS
from .pipeline import DEFAULT_STEPS, parse, repair, run
from .schemas.schema_steps import coerce_types, repair_keys
from .tokens.syntax import repair_syntax

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
