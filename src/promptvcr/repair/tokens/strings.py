"""Decode the body of a string literal the way a model that wrote it meant it.

JSON escapes keep their meaning; an escaped quote of the string's own kind (``\\'`` inside
``'...'``) is just that quote; any other backslash (``\\d``, ``\\(``, ``C:\\Users``) is kept
literally, because it was part of a regex, a LaTeX formula or a Windows path. Raw newlines
and tabs stay as they are (the model meant them), with one exception, ``without_layout_newline``.
"""

from __future__ import annotations

import json
import re

_ESCAPE_OR_QUOTE = re.compile(r'\\(u[0-9a-fA-F]{4}|.)|"', re.S)
_JSON_ESCAPES = frozenset('"\\/bfnrt')
_LAX_DECODER = json.JSONDecoder(strict=False)  # raw control characters allowed: they are kept


def _rewrite(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if escaped is None:
        return '\\"'
    if len(escaped) == 5 or escaped in _JSON_ESCAPES:
        return match.group()
    if escaped in "'`\u201c\u201d\u201e\u2018\u2019\xab\xbb":
        return escaped
    return "\\\\" + escaped


def decode_body(body: str) -> str:
    """The string value of a literal's body (the text between its quotes)."""
    if "\\" not in body and '"' not in body:
        return body
    trailing = len(body) - len(body.rstrip("\\"))
    if trailing % 2:
        body = body[:-1]  # output cut off right after a backslash
    decoded: str = _LAX_DECODER.decode('"' + _ESCAPE_OR_QUOTE.sub(_rewrite, body) + '"')
    return decoded


def without_layout_newline(body: str) -> str:
    r"""``body`` without the raw newlines before its closing quote when it is otherwise one line.

    ``"a": "x [1,2]\n",``: a one-line value whose closing quote went on the next line is layout,
    as json_repair reads it. A multi-line value keeps its final newline (code such as
    ``"def f():\n    return 1\n"``, a poem): there it ends the value's last line. Escaped
    ``\n`` is data and never trimmed; only the raw body (the text between the quotes) is read.
    """
    if body[-1:] != "\n":
        return body
    line = body.rstrip("\r\n")
    return body if "\n" in line else line
