"""Rename object keys to the schema's property names, on the parsed value.

Models drift on key spelling (``"original requirements"`` for ``"Original Requirements"``).
Doing this on the parsed value, key by key, means a value that happens to contain the same
words is never touched, which is what text replacement gets wrong.
"""

from __future__ import annotations

import re
from typing import Any

from ..job import JSONValue, Schema
from .schema import subschema_for

_NOT_ALNUM = re.compile(r"[\W_]+")


def _loose(name: str) -> str:
    """Case, spaces, dashes and underscores ignored: ``First_Name`` ~ ``first name``."""
    return _NOT_ALNUM.sub("", name.casefold())


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Levenshtein distance, giving up (returning ``limit + 1``) once it cannot be within limit."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _near_miss_limit(name: str) -> int:
    """Allow one typo per eight characters; short keys get none (``id`` vs ``ip`` is no typo)."""
    return len(name) // 8


def canonical_key(key: str, properties: dict[str, Any], taken: set[str]) -> str:
    """The schema property ``key`` was meant to be, or ``key`` itself when none is clear.

    Tries exact case-insensitive equality first, then equality ignoring separators, then a
    small edit distance; a tier only counts when exactly one free property matches, so an
    ambiguous key keeps its spelling.
    """
    if key in properties:
        return key
    free = [name for name in properties if name not in taken]
    folded = key.casefold()
    for matches in (
        lambda name: name.casefold() == folded,
        lambda name: _loose(name) == _loose(key),
    ):
        hits = [name for name in free if matches(name)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            return key
    loose_key = _loose(key)
    limit = _near_miss_limit(loose_key)
    if limit:
        hits = [name for name in free if _edit_distance(loose_key, _loose(name), limit) <= limit]
        if len(hits) == 1:
            return hits[0]
    return key


def fix_keys(value: JSONValue, node: Any, root: Schema, depth: int = 0) -> JSONValue:
    """Return ``value`` with keys renamed to the schema's names, recursively.

    Key order is kept. Keys the schema does not know keep their spelling; a key is never
    renamed onto a property that is already present.
    """
    if depth > 64 or not isinstance(value, (dict, list)):
        return value
    schema = subschema_for(value, node, root)
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [fix_keys(item, items, root, depth + 1) for item in value]
        return value
    properties: dict[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    if not properties and not isinstance(extra, dict):
        return value
    taken = {key for key in value if key in properties}
    renamed: dict[str, JSONValue] = {}
    for key, item in value.items():
        name = canonical_key(key, properties, taken) if properties else key
        if name != key:
            taken.add(name)
        if name in renamed:
            name = key
        child = properties.get(name, extra if isinstance(extra, dict) else None)
        renamed[name] = fix_keys(item, child, root, depth + 1) if child is not None else item
    return renamed
