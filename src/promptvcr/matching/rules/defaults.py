"""An empty value an SDK sends as a default matches its absence.

Real case (opentelemetry-instrumentation-ollama 0.62.4): the suite was recorded by a client
that sent ``options: {}``, ``keep_alive: null`` and ``format: ""``; the next release of the
client leaves them out, and every cassette missed. An empty value (``null``, ``{}``, ``[]``,
``""``) asks for nothing a provider does not do without it, so a field holding one is left
out of the key, at any depth of an object (a container left empty by that too). Anything
else still counts: ``false``, ``0`` or ``true`` against an absent field (a provider's default
is not always false), a changed number or string, a non-empty object; and an empty item of
a list keeps its place (``["", "a"]`` is not ``["a"]``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..parts import KeyParts

__all__ = ["EMPTY", "empty_defaults"]

#: Text of a JSON body that may hold an empty value: without any, the body is left as it is
#: (most bodies: one search in C instead of a walk).
_MAY_BE_EMPTY = re.compile(rb'null|\{\s*\}|\[\s*\]|""')


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (dict, list, str)) and not value)


#: The empty values (see above); ``False`` and ``0`` are not among them.
EMPTY: tuple[Any, ...] = (None, {}, [], "")


def _without_empty(value: Any) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            new = _without_empty(item)
            if _is_empty(new):
                changed = True
                continue
            out[key] = new
            changed = changed or new is not item
        return out if changed else value
    if isinstance(value, list):
        items = [_without_empty(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


def empty_defaults(parts: KeyParts) -> KeyParts:
    """A JSON object body without the fields whose value is empty, at any depth of an object.

    Real case: opentelemetry-instrumentation-ollama 0.62.4's cassettes hold ``options: {}``,
    ``keep_alive: null`` and ``format: ""``, which the next ollama client leaves out; every
    request missed. ``false``, ``0`` and ``true`` still count (see the module)."""
    body = parts.body
    raw = parts.raw
    if not isinstance(body, dict) or (raw[:1] == b"{" and _MAY_BE_EMPTY.search(raw) is None):
        return parts
    new = _without_empty(body)
    return parts if new is body else replace(parts, body=new)
