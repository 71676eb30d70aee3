"""The pipeline: a tuple of plain ``Job -> Job`` functions, run in order.

To change the behaviour, pass your own ``steps``: drop one, wrap one, or add your own
function anywhere in ``DEFAULT_STEPS``. A step that has nothing to do returns the job
unchanged (most return early once ``job.done``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from .choose import choose
from .failure import RepairError
from .fastpath import DECODER, decode_valid, finite
from .job import NOTHING, Job, JSONValue, Step, TagPair
from .locate.extract import extract
from .locate.fences import without_orphan_closer
from .locate.tags import DEFAULT_TAGS
from .no_loss import keep_upstream_data
from .quick import quick_value
from .schemas.schema import load_schema
from .schemas.schema_steps import coerce_types, repair_keys
from .tokens.syntax import repair_syntax
from .upstream import forget

DEFAULT_STEPS: tuple[Step, ...] = (
    decode_valid,
    extract,
    repair_syntax,
    choose,
    keep_upstream_data,
    repair_keys,
    coerce_types,
)
"""The steps ``parse`` runs unless told otherwise, in order."""

_AFTER_FAST_PATH = DEFAULT_STEPS[1:]


def run(job: Job, steps: Sequence[Step] = DEFAULT_STEPS) -> Job:
    """Run ``steps`` over ``job``; any failure surfaces as a ``RepairError`` naming the step."""
    for step in steps:
        try:
            job = step(job)
        except RepairError:
            raise
        except Exception as error:  # a bug in a step, possibly a user's: say which one
            name = getattr(step, "__name__", repr(step))
            raise RepairError(name, f"{type(error).__name__}: {error}", job.text) from error
    if not job.done:
        raise RepairError("pipeline", "no step produced a value (is a parsing step missing?)", job.text)
    return job


def parse(
    text: str,
    *,
    schema: object = None,
    tags: TagPair | None = None,
    steps: Sequence[Step] = DEFAULT_STEPS,
    stream_stable: bool = False,
) -> JSONValue:
    """Return the JSON value that raw model output ``text`` was meant to be.

    ``schema`` is a JSON-schema dict or a pydantic model class; it renames keys to its
    property names, converts explicitly typed values and decides between candidate values.
    ``tags`` is the pair the prompt asked for, e.g. ``("[CONTENT]", "[/CONTENT]")``; by default
    the common pairs in ``DEFAULT_TAGS`` are looked for. ``stream_stable`` is json_repair's
    option of that name, for output read while it streams in: ``text`` is a prefix of what is
    still arriving, so a string it ends inside is kept as far as it got (whitespace, commas and
    brackets included, an unfinished escape left out) and a newline before a closing quote is
    kept, so that a longer prefix does not rewrite what a shorter one returned. Without it, a
    string cut off at the end loses its trailing whitespace and a one-line string its raw
    newline before the closing quote, as json_repair does. Raises ``RepairError`` with the
    stage that failed and an excerpt of the input.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() needs the model output as str, got {type(text).__name__}")
    if tags is None:
        pairs = DEFAULT_TAGS
    elif len(tags) == 2 and all(isinstance(tag, str) and tag for tag in tags):
        pairs = ((tags[0], tags[1]),)
    else:
        raise TypeError(f"tags must be an (opening, closing) pair of strings, got {tags!r}")
    if steps is DEFAULT_STEPS and schema is None:
        try:  # valid JSON, the common case: one json.loads and no Job at all
            return DECODER.decode(text)
        except ValueError as error:  # 'Extra data': a valid value, then more text
            valid_first = getattr(error, "msg", "") == "Extra data"
        forget(stream_stable)
        stripped = without_orphan_closer(text)
        if stripped is not text:
            text = stripped
            try:  # '{"a": 1}```': valid once the stray fence is gone
                return finite(DECODER.decode(text), text)
            except ValueError:
                pass
        value = quick_value(text, pairs, valid_first, stream_stable)
        if value is not NOTHING:
            return finite(value, text)
        steps = _AFTER_FAST_PATH
    forget(stream_stable)
    job = Job(text=text, schema=load_schema(schema), tags=pairs, stream_stable=stream_stable)
    return finite(run(job, steps).value, text)


def repair(
    text: str,
    *,
    schema: object = None,
    tags: TagPair | None = None,
    steps: Sequence[Step] = DEFAULT_STEPS,
    indent: int | None = None,
    stream_stable: bool = False,
) -> str:
    """Like ``parse`` but return canonical JSON text (UTF-8 characters kept, not escaped).

    The text is always valid JSON: ``NaN`` and ``Infinity`` become ``null``.
    """
    value = parse(text, schema=schema, tags=tags, steps=steps, stream_stable=stream_stable)
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:  # a custom step let a NaN through
        return json.dumps(finite(value, "nan"), ensure_ascii=False, indent=indent, allow_nan=False)
