"""Comparing what the SDK made of a replayed response with what it makes of the recorded one.

The reference is the same SDK call served the recorded bytes straight from a transport,
so any difference is promptvcr's: its storage, re-encoding or replay. The *facts* (texts,
tool calls, token counts) are read from the recorded body itself and must all appear in
the SDK's result, so that an equality of two empty results cannot pass for a success.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterator
from typing import Any

from promptvcr.cassettes.eventstream import decode_frames
from promptvcr.cassettes.eventstream import is_event_stream as is_aws_event_stream
from promptvcr.cassettes.models import Response
from promptvcr.cassettes.sse import parse_events

__all__ = ["dump", "facts", "leaf_values", "missing_facts"]

#: Fields whose values say what the model answered: text, tool calls, usage.
FACT_KEYS = frozenset(
    {
        "content",
        "text",
        "arguments",
        "name",
        "input",
        "partial_json",
        "delta",
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "input_tokens",
        "output_tokens",
        "promptTokenCount",
        "candidatesTokenCount",
        "totalTokenCount",
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "embedding",
        "values",
    }
)
_IGNORED_ATTRIBUTES = frozenset({"sdk_http_response", "sdkHttpResponse"})


def dump(value: Any) -> Any:
    """A plain, comparable form of an SDK result: models as JSON-mode dicts, streams as lists."""
    if hasattr(value, "model_dump"):
        data = value.model_dump(mode="json", by_alias=True)
        return (
            {k: v for k, v in data.items() if k not in _IGNORED_ATTRIBUTES}
            if isinstance(data, dict)
            else data
        )
    if isinstance(value, dict):
        return {str(k): dump(v) for k, v in value.items() if k not in _IGNORED_ATTRIBUTES}
    if isinstance(value, (list, tuple)):
        return [dump(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    return repr(value)


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, str(k))
    elif isinstance(value, list):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            yield key, tuple(value)  # an embedding: one fact, not a thousand
            return
        for v in value:
            yield from _walk(v, key)
    else:
        yield key, value


def leaf_values(value: Any) -> set[Any]:
    found: set[Any] = set()
    for _, leaf in _walk(value):
        found.add(json.dumps(leaf, sort_keys=True) if isinstance(leaf, (list, tuple)) else leaf)
    return found


def _response_documents(response: Response) -> list[Any]:
    content = response.content
    if not content:
        return []
    if is_aws_event_stream(response.content_type):
        frames = decode_frames(content) or []
        return [f["json"] for f in frames if isinstance(f.get("json"), (dict, list))]
    if response.is_event_stream:
        try:
            events = parse_events(content.decode("utf-8"))
        except UnicodeDecodeError:
            return []
        return [e.get("data") for e in events if isinstance(e.get("data"), (dict, list))]
    try:
        return [json.loads(content)]
    except (ValueError, UnicodeDecodeError):
        return []


def facts(response: Response) -> set[Any]:
    """Texts, tool-call arguments and token counts the recorded response holds."""
    found: set[Any] = set()
    for document in _response_documents(response):
        for key, leaf in _walk(document):
            if key not in FACT_KEYS or leaf in (None, "", 0) or isinstance(leaf, bool):
                continue
            if isinstance(leaf, (str, int, float)):
                found.add(leaf)
            elif isinstance(leaf, tuple):
                found.add(json.dumps(list(leaf), sort_keys=True))
    return found


def _as_base64_float32(result: Any) -> set[str]:
    """Every vector of the result as base64 little-endian float32: how an SDK that asks for
    ``encoding_format: base64`` (voyageai, openai) received the embedding it hands back as
    numbers. A vector decoded from float32 packs back to exactly the recorded bytes."""
    packed = set()
    for _, leaf in _walk(result):
        if isinstance(leaf, tuple):
            try:
                packed.add(base64.b64encode(struct.pack(f"<{len(leaf)}f", *leaf)).decode("ascii"))
            except (struct.error, OverflowError):
                continue
    return packed


def missing_facts(response: Response, result: Any) -> list[Any]:
    """Recorded facts that the SDK's result does not hold anywhere."""
    have = leaf_values(result)
    missing = [f for f in facts(response) if f not in have]
    if any(isinstance(f, str) for f in missing):
        packed = _as_base64_float32(result)
        missing = [f for f in missing if f not in packed]
    return sorted(missing, key=repr)
