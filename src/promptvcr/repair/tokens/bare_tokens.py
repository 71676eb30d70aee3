"""Bare tokens of the token pass: numbers as models write them, and function-call wrappers.

``2.``, ``.5``, ``-``, ``2e`` (cut off) and ``+5`` are numbers a model meant; ``0789`` is not
a number JSON can hold (the leading zero matters: a zip code, an id), so it stays a string.
``NumberLong("2")``, ``ObjectId("1")`` and JSONP's ``callback(...)`` wrap a value: the name
is dropped and the parentheses hold the value.
"""

from __future__ import annotations

import re
from json.encoder import encode_basestring

# A number or literal ends at punctuation, or at whitespace before the next value ([1 2 3]).
END = r"""(?=[\s\ufeff\u200b\xa0]*(?:[,:}\])\uff0c\uff1a/#;]|\Z)|\s+[-.\d"'{\[tfnTFN])"""
NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?" + END)
LITERAL = re.compile(r"(?:true|false|null|none|undefined|nan|-?infinity)" + END, re.I)
PARTIAL_LITERAL = re.compile(r"([A-Za-z]{1,4})\s*\Z")
LITERALS = {"true": "true", "false": "false", "null": "null", "none": "null", "undefined": "null"}
LITERALS.update(dict.fromkeys(("nan", "infinity", "-infinity"), "null"))  # not JSON numbers
_LAX_NUMBER = re.compile(r"([-+]?)(\d*)(\.\d*)?([eE][-+]?(\d*))?" + END)
_CALL = re.compile(r"[A-Za-z_$][\w$.]*(?=\()")


def lax_number(text: str, index: int) -> tuple[str, int] | None:
    """JSON for the loosely written number at ``index`` and where it ends, or ``None``."""
    match = _LAX_NUMBER.match(text, index)
    if match is None:
        return None
    sign, whole, fraction, exponent, exponent_digits = match.groups()
    fraction = fraction or ""
    if not whole and len(fraction) < 2:
        if sign == "-" and not fraction and not exponent:
            return "0", match.end()  # '-' cut off before its digits
        return None
    if len(whole) > 1 and whole.startswith("0"):
        return encode_basestring(match.group()), match.end()
    number = ("-" if sign == "-" else "") + (whole or "0")
    number += fraction if len(fraction) > 1 else ".0" if fraction else ""  # '2.' meant a float
    if exponent_digits:
        number += exponent[: len(exponent) - len(exponent_digits)] + exponent_digits
    return number, match.end()


def call_name_end(text: str, index: int) -> int:
    """End of a function name wrapping a value (``ObjectId(``), or -1."""
    match = _CALL.match(text, index)
    return match.end() if match else -1


def loose_value(text: str, index: int) -> tuple[str, int, str] | None:
    """The bare token at ``index`` that is not a JSON number, or ``None`` when it is no value.

    Returns the JSON to write for it, where it ends, and the syntax left out (kept for the
    no-loss check): a loose number (``2.``), a literal of another language (``True``,
    ``undefined``: its spelling is left out), a literal cut off at the end of the text
    (``fals``) when it can mean one literal only, or a call name (``ObjectId(``: no JSON, as
    the parentheses hold the value).
    """
    lax = lax_number(text, index)
    if lax:
        return lax[0], lax[1], ""
    call = call_name_end(text, index)
    if call > 0:
        return "", call, text[index:call]
    literal = LITERAL.match(text, index)
    if literal:
        return LITERALS[literal.group().lower()], literal.end(), literal.group()
    partial = PARTIAL_LITERAL.match(text, index)
    if partial:
        word = partial.group(1).lower()
        meant = {LITERALS[full] for full in LITERALS if full.startswith(word)}
        if len(meant) == 1:
            return meant.pop(), len(text), word
    return None
