"""The shape of a response, to compare a scripted rendering with real recorded traffic.

Text, ids, numbers and timestamps are left out: what is compared is which fields exist
(:func:`field_paths`) and, for streams, which events come in which order (:func:`sequence`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptvcr.cassettes.models import Interaction, Response
from promptvcr.cassettes.sse import parse_events
from promptvcr.files import persister


def field_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (``a.b``, ``a[].b`` for the items of a list)."""
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            paths.add(path)
            paths |= field_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            paths |= field_paths(item, prefix + "[]")
    return paths


def events(response: Response) -> list[dict[str, Any]]:
    assert response.is_event_stream, response.headers
    return parse_events(response.content.decode())


def body(response: Response) -> Any:
    return json.loads(response.content)


def kind(event: dict[str, Any]) -> str:
    """What an event is, without its content: its type, and the kind of block, delta or item it holds."""
    data = event.get("data")
    if not isinstance(data, dict):
        return str(data)  # [DONE]
    if data.get("object") == "chat.completion.chunk":
        return _chat_chunk(data)
    if "candidates" in data:  # Gemini: the event that closes the answer says why it finished
        finished = any("finishReason" in candidate for candidate in data["candidates"])
        return "candidate:finish" if finished else "candidate"
    name = event.get("event") or "data"
    for key in ("content_block", "delta", "item", "part"):
        inner = data.get(key)
        if isinstance(inner, dict) and "type" in inner:
            return f"{name}:{inner['type']}"
    return str(name)


def sequence(stream: list[dict[str, Any]]) -> list[str]:
    """The kinds of the events in order, a run of the same kind (deltas) counted once."""
    kinds: list[str] = []
    for event in stream:
        current = kind(event)
        if not kinds or kinds[-1] != current:
            kinds.append(current)
    return kinds


def recorded(corpus: Path, name: str, position: int) -> Interaction:
    return persister.load(corpus / name).interactions[position]


def _chat_chunk(data: dict[str, Any]) -> str:
    if not data["choices"]:
        return "chunk:usage"
    choice = data["choices"][0]
    if choice.get("finish_reason"):
        return "chunk:finish"
    delta = choice.get("delta") or {}
    return (
        "chunk:role"
        if "role" in delta
        else "chunk:" + ",".join(sorted(k for k in delta if delta[k] is not None))
    )
