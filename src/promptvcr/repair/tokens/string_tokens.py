"""Read one string literal of any quote kind, and say where it ends.

Split from the token pass: deciding where a string ends is the one judgement call the pass
makes, so it lives on its own. ``ends`` (a pattern for what may follow the closing quote) is
how the caller says whether the string is a key, a value or a top-level value.
``cut_off_value`` reads a string the text ended inside, in either of json_repair's modes.
"""

from __future__ import annotations

import re

from .strings import decode_body

_DOUBLE_BODY = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+', re.S)
_SMART_CLOSE = {"\u201c": "\u201d", "\u2018": "\u2019"}
_STRAY_CLOSER_LINE = re.compile(r"\n[ \t]*[}\]][ \t]*,?[ \t]*\n\s*\Z")
_KEY_AHEAD = re.compile(r'"[^"\n]*"[ \t]*:')
# An escape cut off, or the first half of a surrogate pair whose second half never came.
_HIGH_SURROGATE = r"\\u[dD][89abAB][0-9a-fA-F]{2}"
_PARTIAL_ESCAPE = re.compile(rf"(?:{_HIGH_SURROGATE})?\\u[0-9a-fA-F]{{0,3}}\Z|{_HIGH_SURROGATE}\\?\Z")
_TRAILING_CLOSERS = re.compile(r"[\s\]})]*\Z")


_COLON = re.compile(r"\s*[:\uff1a]")

# What may follow a string's closing quote, by where the string stands. Being strict here is
# what lets the pass notice an unescaped quote inside a string and leave it to json_repair.
_SP = r"[\s\ufeff\u200b\xa0]*"
KEY_END = re.compile(_SP + r"""(?:[:\uff1a,}]|(?=["'\u201c\u2018\d\[{-]))""")  # or a value: ':' forgotten
TOP_END = re.compile(_SP + r"(?:[:\uff1a]|\Z)")
_THEN_QUOTE = r"|[\s\ufeff\u200b\xa0]+[\"'\u201c\u2018]"  # a missing comma before the next string
# In an object, the string after a missing comma must be a key ('"a": "x"\n"b": 1').
_THEN_KEY = r"""|[\s\ufeff\u200b\xa0]+["'\u201c\u2018][^"'\n]*["'\u201d\u2019][ \t]*[:\uff1a]"""

# A string literal whose body is its value: no backslash, no raw control character, no quote
# of another kind, not the opening of a triple-quoted string. ``read_string`` and
# ``decode_body`` would read such a body as itself, so the pass may take it without them.
PLAIN_STRING = {
    '"': re.compile(r'"(?!"")([^"\\\x00-\x1f]*+)"'),
    "'": re.compile(r"""'(?!'')([^'"\\\x00-\x1f]*+)'"""),
    "\u201c": re.compile(r'\u201c([^\u201d"\\\x00-\x1f]*+)\u201d'),
    "\u2018": re.compile(r'\u2018([^\u2019"\\\x00-\x1f]*+)\u2019'),
}


def value_end(closer: str, in_object: bool) -> re.Pattern[str]:
    """What may follow a value's closing quote in a container that ``closer`` closes."""
    then = _THEN_KEY if in_object else _THEN_QUOTE
    return re.compile(_SP + r"(?:[,\uff0c" + re.escape(closer) + r"]|/[/*]|#|\Z)" + then)


Read = tuple[str, int, bool]
"""The raw text between the quotes, where reading resumes, and False when the text ended inside
the string. A plain tuple: a NamedTuple costs a Python-level call per string read."""


def read_string(text: str, start: int, ends: re.Pattern[str]) -> Read | None:
    """Read the string literal at ``start``, or return ``None`` when unsure where it ends.

    ``ends`` says what may follow the closing quote.
    """
    quote = text[start]
    if text.startswith(quote * 3, start) and quote in "\"'":
        close = text.find(quote * 3, start + 3)
        if close < 0:
            return None
        return text[start + 3 : close], close + 3, True
    if quote == '"':
        end = _DOUBLE_BODY.match(text, start + 1).end()  # type: ignore[union-attr]
        if end >= len(text) or text[end] != '"':
            return text[start + 1 :], len(text), False
        if ends.match(text, end + 1):
            return text[start + 1 : end], end + 1, True
        return before_stray_closer(text, start, end)
    closing = _SMART_CLOSE.get(quote, quote)
    search = start + 1
    while True:
        end = text.find(closing, search)
        if end < 0:
            if closing in text[start + 1 :] or "\n" in text[start + 1 :]:
                return None
            return text[start + 1 :], len(text), False
        if text[end - 1] != "\\" and ends.match(text, end + 1):
            return text[start + 1 : end], end + 1, True
        if search == start + 1 and _COLON.match(text, end + 1):
            return None  # "['a': {...}]": a key where a value belongs; json_repair's call
        search = end + 1


def before_stray_closer(text: str, start: int, quote_at: int) -> Read | None:
    r"""A multi-line value whose closing quote is missing, followed by a stray bracket line.

    ``"spec": "line\n  more\n}\n"next": 1``: the quote at ``quote_at`` opens the next key, so
    the value ended before the line holding only ``}``, and that bracket is noise. Anything
    else is left to json_repair.
    """
    stray = _STRAY_CLOSER_LINE.search(text, start + 1, quote_at)
    if stray is None or not _KEY_AHEAD.match(text, quote_at):
        return None
    return text[start + 1 : stray.start() + 1], quote_at, True


def cut_off_value(body: str, wanted: str, stream_stable: bool) -> tuple[str, str]:
    """The value of a string that the text ended inside, and the partial escape left out of it.

    ``wanted`` is the closers the open containers need. When the text ends with exactly those
    (``["value]}``), the closing quote was forgotten: the string ends before them. Otherwise the
    output was cut off, and the string is read as json_repair reads it in the same mode:
    trailing whitespace trimmed and a final backslash kept as one; or, under ``stream_stable``
    (the text is a prefix of output still arriving), kept as far as it got, whitespace included,
    and closers too, as the next piece may continue the string. An unfinished escape (``\\u00``,
    or ``\\ud83d`` still waiting for its second half) is left out in both modes.
    """
    # Cheap tests first: the closers end the body, and every partial escape holds a backslash.
    ends_in_closer = bool(wanted) and not stream_stable and body.rstrip()[-1:] in ("]", "}", ")")
    tail = _TRAILING_CLOSERS.search(body) if ends_in_closer else None
    if tail and "".join(tail.group().split()) == wanted:
        body = body[: tail.start()]
    partial = _PARTIAL_ESCAPE.search(body) if "\\" in body else None
    if partial:
        body = body[: partial.start()]
    value = decode_body(body)
    if not stream_stable:
        if (len(body) - len(body.rstrip("\\"))) % 2:
            value += "\\"  # '"val\\': json_repair keeps the backslash the output ended with
        value = value.rstrip()
    return value, partial.group() if partial else ""
