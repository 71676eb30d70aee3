"""The quick path for the common broken output: one value the token pass reads to its end.

Most broken output is a single JSON value with a slip in it (a trailing comma, Python
literals, single quotes). When the token pass reads the whole text with certainty, there is
nothing for extraction or selection to decide, so ``parse`` answers without building a
``Job``. The no-loss guarantee still holds: when the value holds fewer letters and digits than
the text, json_repair reads the text as well and the value with more data wins.
"""

from __future__ import annotations

import re

from .fastpath import DECODER, without_trailing_commas
from .job import NOTHING, JSONValue
from .measure import text_size, value_size
from .token_pass import normalize, restore
from .upstream import upstream_value

_LONE_QUOTE = re.compile(r"""\s*["']\s*\Z""")


def quick_value(text: str) -> JSONValue:
    """The value of ``text`` when the token pass reads all of it, else ``NOTHING``."""
    value = without_trailing_commas(text)
    if value is not NOTHING:
        return value
    normalized = normalize(text)
    if normalized.stopped_at != len(text) or not normalized.text.strip():
        return NOTHING
    try:
        value = restore(DECODER.decode(normalized.text), normalized.strings)
    except ValueError:
        return NOTHING
    if value == "" and _LONE_QUOTE.match(text):
        return NOTHING  # a lone quote is no value
    ours = value_size(value)
    if ours >= text_size(text):
        return value
    theirs = upstream_value(text)
    if theirs is not NOTHING and value_size(theirs) > ours:
        return theirs
    return value
