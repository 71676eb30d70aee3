"""Rebuilding a parsed body with some strings replaced, sharing every part that did not change."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["map_strings"]


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string value (not to keys); the same object
    when nothing changed, so a rule that finds nothing to do costs one walk and no copy."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        new: dict[str, Any] | None = None
        for k, v in value.items():
            mapped = map_strings(v, change)
            if mapped is not v:
                if new is None:
                    new = dict(value)
                new[k] = mapped
        return value if new is None else new
    if isinstance(value, (list, tuple)):  # tuples: the (name, value) pairs of a form body
        items: list[Any] | None = None
        for i, v in enumerate(value):
            mapped = map_strings(v, change)
            if mapped is not v:
                if items is None:
                    items = list(value)
                items[i] = mapped
        if items is None:
            return value
        return tuple(items) if isinstance(value, tuple) else items
    return value
