"""Just enough JSON Schema to steer a repair: load, resolve ``$ref``, check a value's shape.

A full validator (``jsonschema``) would be another dependency and answers a different
question. Repair only needs "which properties does this object have", "what is inside this
array" and "does this candidate roughly fit", so that is all this module knows.
"""

from __future__ import annotations

from typing import Any

from ..job import JSONValue, Schema

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def load_schema(schema: object) -> Schema | None:
    """Accept a JSON-schema dict or anything with pydantic's ``model_json_schema()``.

    Duck typing keeps pydantic optional: it is never imported here.
    """
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    to_schema = getattr(schema, "model_json_schema", None)
    if callable(to_schema):
        produced = to_schema()
        if isinstance(produced, dict):
            return produced
    raise TypeError(
        f"schema must be a JSON-schema dict or a class with model_json_schema(), got {type(schema).__name__}"
    )


def resolve(node: Any, root: Schema) -> Schema:
    """Follow local ``$ref`` pointers (``#/$defs/Name``) until a concrete subschema remains."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        ref: str = node["$ref"]
        target: Any = root
        if not ref.startswith("#"):
            return {}
        for part in ref[1:].split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        node = target
        seen += 1
    return node if isinstance(node, dict) else {}


def is_type(value: JSONValue, type_name: str) -> bool:
    """JSON's idea of a type: ``True`` is not an integer, ``1.0`` is a number."""
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    if type_name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(type_name, (object,)))


def declared_types(node: Schema) -> list[str]:
    """The ``type`` keyword as a list (it may be a string, a list or absent)."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def branches(node: Schema, root: Schema) -> list[Schema]:
    """The alternatives of ``anyOf``/``oneOf``, resolved; pydantic writes ``Optional`` this way."""
    found: list[Schema] = []
    for keyword in ("anyOf", "oneOf"):
        options = node.get(keyword)
        if isinstance(options, list):
            found.extend(resolve(option, root) for option in options)
    return found


def merged_object(node: Schema, root: Schema) -> Schema:
    """Fold ``allOf`` parts into one node so properties declared in pieces are all seen."""
    parts = node.get("allOf")
    if not isinstance(parts, list):
        return node
    merged: Schema = {k: v for k, v in node.items() if k != "allOf"}
    properties: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = list(merged.get("required") or [])
    for part in parts:
        piece = merged_object(resolve(part, root), root)
        properties.update(piece.get("properties") or {})
        required.extend(piece.get("required") or [])
        for key, value in piece.items():
            merged.setdefault(key, value)
    merged["properties"] = properties
    merged["required"] = required
    return merged


def subschema_for(value: JSONValue, node: Any, root: Schema) -> Schema:
    """The concrete schema node that applies to ``value``, choosing among ``anyOf`` by type."""
    concrete = merged_object(resolve(node, root), root)
    options = [merged_object(option, root) for option in branches(concrete, root)]
    if not options:
        return concrete
    for option in options:
        if any(is_type(value, t) for t in declared_types(option)):
            return option
    for option in options:
        if not declared_types(option):
            return option
    return concrete


def conforms(value: JSONValue, node: Any, root: Schema, depth: int = 0) -> bool:
    """A loose fit test used to choose between candidate values.

    Checks types, required properties and array items, recursively. It deliberately ignores
    formats, lengths and patterns: the question is "is this the value the schema describes",
    not "is it perfect".
    """
    if depth > 64:
        return True
    node = merged_object(resolve(node, root), root)
    options = branches(node, root)
    if options and not any(conforms(value, option, root, depth + 1) for option in options):
        return False
    types = declared_types(node)
    if types and not any(is_type(value, t) for t in types):
        return False
    enum = node.get("enum")
    if isinstance(enum, list) and value not in enum:
        return False
    if isinstance(value, dict):
        required = node.get("required") or []
        if any(name not in value for name in required):
            return False
        properties = node.get("properties") or {}
        for name, child in properties.items():
            if name in value and not conforms(value[name], child, root, depth + 1):
                return False
        return True
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, dict):
            return all(conforms(item, items, root, depth + 1) for item in value)
    return True
