"""How much of the input's data a value holds: the yardstick of the no-loss guarantee.

Data is counted as letters and digits: in keys, strings and numbers, and the spelling of
``true``/``false``/``null``. Punctuation, quotes and whitespace are syntax, not data. Two
repairs of one text can then be compared without agreeing on structure.
"""

from __future__ import annotations

import re
from collections import Counter

from .job import JSONValue

_NOT_DATA = re.compile(r"[\W_]+")
_ASCII_NOT_DATA = bytes(code for code in range(128) if not chr(code).isalnum())
_NON_FINITE = frozenset(("NaN", "Infinity", "-Infinity"))  # json_repair's spelling of our null
_WORD = re.compile(r"[^\W_]+")
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.S)
_LITERAL_WORD = {None: "null", True: "true", False: "false"}
_LITERAL_SIZE = {None: 4, True: 4, False: 5}


def text_size(text: str) -> int:
    """Letters and digits in ``text``."""
    if text.isascii():  # bytes.translate deletes the rest at C speed, many times the regex's
        return len(text) if text.isalnum() else len(text.encode("ascii").translate(None, _ASCII_NOT_DATA))
    return len(_NOT_DATA.sub("", text))


def source_size(text: str) -> int:
    """Letters and digits in JSON-like source text, escape sequences left out: the ``n`` of
    ``\\n`` is syntax, and counting it would make every value with a newline look short."""
    return text_size(_ESCAPE.sub("", text)) if "\\" in text else text_size(text)


def words(value: JSONValue) -> Counter[str]:
    """The words (runs of letters and digits) that ``value`` holds, keys included, counted."""
    found: Counter[str] = Counter()
    _collect(value, found)
    return found


def _collect(value: JSONValue, found: Counter[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(_WORD.findall(str(key)))
            _collect(item, found)
    elif isinstance(value, list):
        for item in value:
            _collect(item, found)
    elif value is None or isinstance(value, bool):
        found[_LITERAL_WORD[value]] += 1
    else:
        found.update(_WORD.findall(value if isinstance(value, str) else repr(value)))


def richer(ours: JSONValue, theirs: JSONValue, dropped: str = "") -> bool:
    """Whether ``theirs`` holds data ``ours`` lost: words ``ours`` lacks (other than syntax the
    token pass left out on purpose, ``dropped``) and more letters and digits in all."""
    if value_size(theirs) <= value_size(ours):
        return False
    return bool(words(theirs) - words(ours) - Counter(_WORD.findall(dropped)))


def value_size(value: JSONValue) -> int:
    """Letters and digits that ``value`` holds, keys included.

    A key counts only with a value: ``{"b": ""}`` from ``{"b": `` holds no data.
    """
    if isinstance(value, str):
        return 4 if value in _NON_FINITE else text_size(value)
    if isinstance(value, dict):
        total = 0
        for key, item in value.items():
            size = value_size(item)
            if size or item != "":
                total += size + text_size(key if isinstance(key, str) else str(key))
        return total
    if isinstance(value, list):
        total = 0
        for item in value:
            total += value_size(item)
        return total
    if value is None or value is True or value is False:
        return _LITERAL_SIZE[value]
    if type(value) is int:
        return len(str(value)) - (value < 0)
    return text_size(repr(value))
