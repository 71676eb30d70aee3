"""Convert values whose type the schema states explicitly and the model got wrong.

Only unambiguous conversions: a numeric string where an integer is declared, a JSON text
where an object is declared (double-encoded output), a one-element list around the object
the schema asks for. Anything else is left for the caller's validator to report.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..job import JSONValue, Schema
from .schema import declared_types, is_type, subschema_for

_INTEGER = re.compile(r"\s*[-+]?\d+\s*\Z")
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*\Z")


def _decoded(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _to_type(value: JSONValue, wanted: str) -> JSONValue:
    """One conversion towards ``wanted``, or ``value`` unchanged when it would be a guess."""
    if wanted in ("object", "array") and isinstance(value, str):
        decoded = _decoded(value)
        return decoded if is_type(decoded, wanted) else value
    if wanted == "object" and isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        return value[0]
    if wanted == "array" and isinstance(value, dict):
        return [value]
    if wanted == "integer" and isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    if wanted == "number" and isinstance(value, str) and _NUMBER.match(value):
        number = float(value)
        return int(number) if _INTEGER.match(value) else number
    if wanted == "boolean" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if wanted == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    return value


def coerce(value: JSONValue, node: Any, root: Schema, depth: int = 0) -> JSONValue:
    """Return ``value`` with explicit-type mismatches converted, recursively."""
    if depth > 64:
        return value
    schema = subschema_for(value, node, root)
    types = declared_types(schema)
    if len(types) == 1 and not is_type(value, types[0]):
        value = _to_type(value, types[0])
    if isinstance(value, dict):
        properties: dict[str, Any] = schema.get("properties") or {}
        if not properties:
            return value
        return {
            key: coerce(item, properties[key], root, depth + 1) if key in properties else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [coerce(item, items, root, depth + 1) for item in value]
    return value
