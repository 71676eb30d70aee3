"""Placeholders that hide strings from json_repair, and putting the strings back.

json_repair trims whitespace at the end of strings when it has to repair anything; the token
pass swaps such strings for placeholders made of private-use characters, and ``restore`` puts
the real strings back into the parsed value.
"""

from __future__ import annotations

import re

from ..job import JSONValue

# Inputs that contain these characters themselves get no placeholders.
MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
_PLACEHOLDER = re.compile(MARK_OPEN + r"(\d+)" + MARK_CLOSE)


def restore(value: JSONValue, strings: dict[str, str]) -> JSONValue:
    """Put the strings behind placeholders back into a parsed value."""
    if not strings:
        return value
    if isinstance(value, str):
        if value in strings:
            return strings[value]
        if MARK_OPEN in value:
            return _PLACEHOLDER.sub(lambda m: strings.get(m.group(), m.group()), value)
        return value
    if isinstance(value, dict):
        return {restore(key, strings): restore(item, strings) for key, item in value.items()}
    if isinstance(value, list):
        return [restore(item, strings) for item in value]
    return value
