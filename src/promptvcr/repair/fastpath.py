"""Step 1: valid JSON is returned exactly as ``json.loads`` reads it.

This runs first so that well-formed output, by far the common case, costs one ``json.loads``
call and never meets a heuristic that could change it.
"""

from __future__ import annotations

import json
import math
import re

from .job import NOTHING, Job, JSONValue

DECODER = json.JSONDecoder(parse_constant=lambda _: None)
"""``json.loads`` except that ``NaN``/``Infinity``, which are not JSON, become ``null``."""
LAX_DECODER = json.JSONDecoder(parse_constant=lambda _: None, strict=False)
"""The same, with raw control characters allowed inside strings (they are kept)."""

_NON_FINITE = re.compile(r"nan|inf", re.I)
_MAYBE_NON_FINITE = re.compile(r"[nNiI][aAnN][nNfF]")
# Matches wherever _NON_FINITE does, and scans several times faster (no case folding).
# A whole string literal (kept), or a comma before a closing bracket (dropped).
_TRAILING_COMMA = re.compile(r",\s*[}\]]")
_STRING_OR_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,(?=\s*[}\]])', re.S)
_last_failure = ""


def without_trailing_commas(text: str) -> JSONValue:
    """The value of ``text`` once commas before closing brackets are dropped, else ``NOTHING``.

    Regular expressions and ``json.loads`` only: a large document with one slip costs about
    two ``json.loads`` instead of a token pass in Python.
    """
    global _last_failure
    if text is _last_failure or _TRAILING_COMMA.search(text) is None:
        return NOTHING
    fixed = _STRING_OR_TRAILING_COMMA.sub(r"\1", text)
    try:  # a raw newline before a quote may be layout to trim (strings.py): the token pass decides
        return (DECODER if '\n"' in fixed else LAX_DECODER).decode(fixed)
    except ValueError:
        _last_failure = text  # the syntax step asks again about the same text
        return NOTHING


def decode_valid(job: Job) -> Job:
    """Set ``job.value`` when the whole text already is JSON."""
    if job.done:
        return job
    try:
        value = DECODER.decode(job.text)
    except ValueError:
        return job
    return job._replace(value=value)


def finite(value: JSONValue, text: str) -> JSONValue:
    """``value`` with any ``NaN``/``Infinity`` (json_repair keeps them) turned into ``null``."""
    maybe = _MAYBE_NON_FINITE.search(text)
    if maybe is None or _NON_FINITE.search(text, maybe.start()) is None:
        return value
    return _finite(value)


def _finite(value: JSONValue) -> JSONValue:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value
