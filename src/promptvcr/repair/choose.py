"""Step 4: choose the answer when the text held more than one value.

The order of the rules follows the corpus README: identical duplicates are one value; the
schema decides when it can (one candidate fits, or an array schema over one object per block
or line); then tagged blocks win in order of appearance; a model that says it is correcting
itself is believed (last block); values separated only by commas or newlines are a list
that lost its brackets; otherwise the first value.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from .failure import RepairError
from .job import Candidate, Job, JSONValue, Schema
from .schemas.keys import fix_keys
from .schemas.schema import conforms, declared_types, resolve

_CORRECTION = re.compile(
    r"\b(?:correct(?:ed|ion|ing)?|mistake|error|wrong|oops|sorry|actually|instead|wait|fix(?:ed)?|updated?|revised?)\b",
    re.I,
)
_ONLY_SEPARATORS = re.compile(r"[\s,]*\Z")


_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=repr)
# One encoder for all: ``json.dumps`` with options builds a new one on every call.


def _fingerprint(value: JSONValue) -> str:
    """Equality that treats ``1`` and ``true`` as different, like JSON does."""
    return _ENCODER.encode(value)


def _distinct(parsed: tuple[tuple[Candidate, JSONValue], ...]) -> list[tuple[Candidate, JSONValue]]:
    seen: set[str] = set()
    kept: list[tuple[Candidate, JSONValue]] = []
    for candidate, value in parsed:
        key = _fingerprint(value)
        if key not in seen:
            seen.add(key)
            kept.append((candidate, value))
    return kept


def _empty(value: JSONValue) -> bool:
    return isinstance(value, (dict, list)) and not value


def _shape(value: JSONValue) -> tuple[str, frozenset[str]]:
    """A value's structure: an object's keys, or those of an array's first object."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return "objects", frozenset(value[0])
    if isinstance(value, dict):
        return "object", frozenset(value)
    return "scalar", frozenset()


def _fits(value: JSONValue, node: Any, root: Schema) -> bool:
    return conforms(fix_keys(value, node, root), node, root)


def _gaps(text: str, chosen: list[tuple[Candidate, JSONValue]]) -> list[str]:
    return [text[a.end : b.start] for (a, _), (b, _) in itertools.pairwise(chosen)]


def choose_value(
    text: str, parsed: tuple[tuple[Candidate, JSONValue], ...], schema: Schema | None
) -> JSONValue:
    """The value the model meant among ``parsed`` (see the module docstring for the rules)."""
    if len(parsed) == 1:
        return parsed[0][1]
    options = _distinct(parsed)
    filled = [option for option in options if not _empty(option[1])]
    if not filled:
        return options[0][1]  # '[]{}'
    if len(filled) < len(options):
        options = filled  # '{"a": 1}, []': an empty container next to data is noise
        if len(options) == 1:
            return options[0][1]
    if len(options) == 1:
        return options[0][1]
    if schema is not None:
        root = resolve(schema, schema)
        fitting = [option for option in options if _fits(option[1], root, schema)]
        items = root.get("items")
        if not fitting and "array" in declared_types(root) and isinstance(items, dict):
            values = [value for _, value in parsed]
            if all(_fits(value, items, schema) for value in values):
                return values
        if len(fitting) == 1:
            return fitting[0][1]
        options = fitting or options
    if options[0][0].origin == "tag":
        return options[0][1]
    gaps = _gaps(text, options)
    if any(_CORRECTION.search(gap) for gap in gaps):
        return options[-1][1]
    shapes = [_shape(value) for _, value in options]
    if (
        shapes[0][0] != "scalar"
        and all(shape == shapes[0] for shape in shapes)
        and all(not gap for gap in gaps)
    ):
        return options[-1][1]  # '[{"k": 1}][{"k": 2}]': the same structure rewritten at once
    if len(options) == 2 and shapes[0][0] == shapes[1][0] != "scalar" and shapes[0][1] < shapes[1][1]:
        return options[-1][1]  # the later block is a more complete version of the first
    kinds = [type(value) for _, value in options]
    if len(set(kinds)) == len(kinds) and not set(kinds) - {dict, list}:
        return [value for _, value in options]  # an object and an array: two parts, not drafts
    if all(_ONLY_SEPARATORS.match(gap) for gap in _gaps(text, list(parsed))):
        return [value for _, value in parsed]
    return options[0][1]


def choose(job: Job) -> Job:
    """Set ``job.value`` from ``job.parsed``."""
    if job.done:
        return job
    if not job.parsed:
        reason = "no parsed candidates to choose from (did a custom step drop them?)"
        raise RepairError("choose", reason, job.text)
    return job._replace(value=choose_value(job.text, job.parsed, job.schema))
