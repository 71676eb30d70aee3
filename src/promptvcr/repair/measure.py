"""How much of the input's data a value holds: the yardstick of the no-loss guarantee.

Data is counted as letters and digits: in keys, strings and numbers, and the spelling of
``true``/``false``/``null``. Punctuation, quotes and whitespace are syntax, not data. Two
repairs of one text can then be compared without agreeing on structure.
"""

from __future__ import annotations

import re

from .job import JSONValue

_NOT_DATA = re.compile(r"[\W_]+")
_NON_FINITE = frozenset(("NaN", "Infinity", "-Infinity"))  # json_repair's spelling of our null
_LITERAL_SIZE = {None: 4, True: 4, False: 5}


def text_size(text: str) -> int:
    """Letters and digits in ``text``."""
    return len(_NOT_DATA.sub("", text))


def _member_size(key: str, item: JSONValue) -> int:
    """A key counts only with a value: ``{"b": ""}`` from ``{"b": `` holds no data."""
    size = value_size(item)
    return size + text_size(key) if size or item != "" else 0


def value_size(value: JSONValue) -> int:
    """Letters and digits that ``value`` holds, keys included."""
    if isinstance(value, str):
        return 4 if value in _NON_FINITE else text_size(value)
    if isinstance(value, dict):
        return sum(_member_size(str(key), item) for key, item in value.items())
    if isinstance(value, list):
        return sum(value_size(item) for item in value)
    if value is None or isinstance(value, bool):
        return _LITERAL_SIZE[value]
    return text_size(repr(value))
