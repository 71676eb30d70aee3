"""Credential fields of a JSON body, where a name's meaning is known (see :mod:`.names`).

One walk, three uses: recording replaces each with its placeholder (:mod:`.byname`),
masking collects the values a request sent (:mod:`.masking`), matching leaves them out of a
key (:mod:`promptvcr.matching.rules.redacted`). A field is read by name at the top of a
body and in :data:`.names.CREDENTIAL_CONTAINERS`; deeper in a request by the strict rule;
never inside what a model or a tool produced (:data:`.names.MODEL_PLACES`) nor below the top
of an answer. A JSON document inside a request's string field (a configuration sent as text)
is read the same way, and a value found there is replaced inside the string, every other
byte kept: the string is never parsed and written again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .names import DEEP, NONE, TOP, reading_of, reads_field

__all__ = ["DROP", "walk_fields"]

#: What ``on_field`` returns to leave a field out (matching's use).
DROP: Any = object()

#: Largest string read as a JSON document for its fields.
_MAX_DOCUMENT = 1024 * 1024


def _scalar(value: Any) -> bool:
    """A value a credential field holds as itself (a container under it is searched)."""
    return value is not None and not isinstance(value, (dict, list, bool))


def walk_fields(
    document: Any,
    on_field: Callable[[str, Any], Any],
    *,
    request: bool,
    on_string: Callable[[str], str] | None = None,
) -> Any:
    """``document`` with each credential field's value replaced by ``on_field(name, value)``
    (:data:`DROP` leaves the field out), and each other string by ``on_string(text)``;
    ``document`` itself (not a copy) when nothing changed."""
    return _walk(document, "", TOP, request, on_field, on_string)


def _walk(
    value: Any,
    parent: str,
    reading: str,
    request: bool,
    on_field: Callable[[str, Any], Any],
    on_string: Callable[[str], str] | None,
) -> Any:
    if isinstance(value, str):
        if request and reading != NONE:
            value = _in_string(value, on_field)
        return on_string(value) if on_string is not None else value
    if isinstance(value, list):
        items = [_walk(item, parent, reading, request, on_field, on_string) for item in value]
        items = [item for item in items if item is not DROP]
        same = len(items) == len(value) and all(new is old for new, old in zip(items, value, strict=True))
        return value if same else items
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    changed = False
    for key, item in value.items():
        if reads_field(key, parent, reading) and _scalar(item):
            new = on_field(key, item)
        else:
            child = reading_of(key, reading, request=request)
            new = _walk(item, key if isinstance(key, str) else "", child, request, on_field, on_string)
        if new is DROP:
            changed = True
            continue
        out[key] = new
        changed = changed or new is not item
    return out if changed else value


def _in_string(text: str, on_field: Callable[[str, Any], Any]) -> str:
    """A JSON document in a request's string field with its credential values replaced in
    place (read as :data:`.names.DEEP`: no short name counts in it)."""
    if not text or text.lstrip()[:1] not in ("{", "[") or len(text) > _MAX_DOCUMENT:
        return text
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return text
    found: list[tuple[str, str]] = []

    def collect(name: str, value: Any) -> Any:
        if isinstance(value, str):
            new = on_field(name, value)
            if new is DROP:  # matching: the same text whatever the value
                new = "<redacted>"
            if isinstance(new, str) and new != value:
                found.append((json.dumps(value, ensure_ascii=False)[1:-1], new))
        return value

    _walk(document, "", DEEP, True, collect, None)
    for escaped, replacement in found:
        text = text.replace(f'"{escaped}"', json.dumps(replacement, ensure_ascii=False))
    return text
