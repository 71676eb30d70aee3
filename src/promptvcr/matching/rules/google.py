"""Rules for Google's Gemini API and Vertex AI request bodies (protobuf JSON)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from ..parts import KeyParts
from ..select import for_families

__all__ = ["google_empty_config", "google_field_names", "google_repeated_tools", "google_schema_types"]

#: Fields whose value is user data (a ``Struct``, a JSON schema, labels): their keys are
#: names the user chose, never protobuf field names, and are left exactly as sent.
_OPAQUE = frozenset(
    {
        "args",
        "response",
        "parametersJsonSchema",
        "responseJsonSchema",
        "labels",
        "structValue",
        "default",
        "example",
    }
)


@lru_cache(maxsize=4096)
def _camel(name: str) -> str:
    if "_" not in name:
        return name
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _camelize(value: Any, properties: bool = False) -> Any:
    if isinstance(value, list):
        return [_camelize(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if properties:  # a schema's property names are the user's: keep them, walk their schemas
            out[key] = _camelize(item)
            continue
        name = _camel(key)
        if name in _OPAQUE:
            out[name] = item
        else:
            out[name] = _camelize(item, properties=name == "properties")
    return out


def _has_snake_keys(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            ("_" in k and not k.startswith("_")) or (k not in _OPAQUE and _has_snake_keys(v))
            for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_snake_keys(v) for v in value)
    return False


@for_families("google")
def google_field_names(parts: KeyParts) -> KeyParts:
    """Protobuf field names in lowerCamelCase: ``mime_type`` and ``mimeType`` are one field.

    Google's APIs parse JSON by the protobuf mapping, which accepts both the proto name
    and its lowerCamelCase form. Real case: the corpus's Gemini bodies say
    ``inlineData.mimeType`` and ``thinkingConfig.includeThoughts``, while google-genai
    3.x sends ``inline_data.mime_type`` and ``include_thoughts`` for the same call
    (``google-gla/test_google_model_document_url_input``). Names the user chose (function
    ``args``, schema ``properties``, ``labels``) are left as they are.
    """
    body = parts.body
    if not isinstance(body, dict) or not _has_snake_keys(body):
        return parts
    return replace(parts, body=_camelize(body))


@for_families("google")
def google_repeated_tools(parts: KeyParts) -> KeyParts:
    """A single ``tools`` object is the one-element list of it.

    Real case: older pydantic-ai sent ``"tools": {"function_declarations": [...]}`` and
    Gemini accepted it (``google-gla/test_multiple_agent_tool_calls``); google-genai sends
    the list form of the same tool.
    """
    body = parts.body
    if isinstance(body, dict) and isinstance(body.get("tools"), dict):
        return replace(parts, body={**body, "tools": [body["tools"]]})
    return parts


def _without_empty(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v != {}}


@for_families("google")
def google_empty_config(parts: KeyParts) -> KeyParts:
    """An empty ``generationConfig`` (or other top-level config message) is no config.

    An empty protobuf message sets no field, so the server applies its defaults either
    way. Real case: pydantic-ai sent ``"generationConfig": {}``
    (``google-gla/test_google_image_or_text_output``), google-genai omits it, and older
    pydantic-ai sent nothing where newer code sends ``{}``.
    """
    body = parts.body
    if not isinstance(body, dict):
        return parts
    config = body.get("generationConfig")
    cleaned = _without_empty(body)
    if isinstance(config, dict) and config:
        inner = _without_empty(config)
        if len(inner) != len(config):
            cleaned["generationConfig"] = inner
            if not inner:
                del cleaned["generationConfig"]
    if len(cleaned) == len(body) and cleaned.get("generationConfig") is config:
        return parts
    return replace(parts, body=cleaned)


def _upper_types(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_upper_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.upper()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _upper_types(s) for name, s in value.items()}
        elif key in ("enum", "required", "propertyOrdering"):
            out[key] = value
        else:
            out[key] = _upper_types(value)
    return out


def _schemas(value: Any) -> Any:
    """Every OpenAPI ``Schema`` of a body (function ``parameters``/``response``, the
    ``responseSchema``) with its ``type`` enum names upper-cased."""
    if isinstance(value, list):
        return [_schemas(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {
        k: (_upper_types(v) if k in ("parameters", "responseSchema", "response_schema") else _schemas(v))
        for k, v in value.items()
    }


@for_families("google")
def google_schema_types(parts: KeyParts) -> KeyParts:
    """OpenAPI schema types compared as the enum names Gemini defines (``STRING``).

    The ``Type`` enum of Gemini's ``Schema`` is parsed case-insensitively by the API.
    Real case: older pydantic-ai sent ``"type": "string"`` (``google-gla/
    test_multiple_agent_tool_calls``), google-genai sends ``"STRING"`` for the same tool.
    ``parametersJsonSchema`` is JSON Schema, where case matters, and is not touched.
    """
    body = parts.body
    if not isinstance(body, dict) or ("tools" not in body and "generationConfig" not in body):
        return parts
    new = _schemas(body)
    return parts if new == body else replace(parts, body=new)
