"""Parallel tool calls: the results that answer one model turn match as a set, keyed by call id.

Real case: an agent asks for several tools in one turn and the application runs them
concurrently (pydantic-ai and openai-agents gather them with asyncio); the results come
back, and are sent back, in whatever order the tools finished, so a replay sends the same
results in another order than the recording and missed (mastra#17737, Kludex/cassetter#27).
The call id says which result answers which call, which is all the order meant; so a run
of consecutive results (OpenAI ``role: tool`` messages, Responses ``function_call_output``
items, Anthropic ``tool_result`` blocks, Gemini ``functionResponse`` parts) is put in the
order of its call ids, which :func:`.ids.tool_call_ids` (run before) numbered by the order
of the calls. A result sent under another call's id still differs: the pairing counts.
Where each API keeps its results is :data:`..conversation.APIS`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..conversation import ResultShape, api_for
from ..parts import KeyParts

__all__ = ["parallel_tool_results"]

#: Bytes with fewer than two of these (``call_id`` is in ``tool_call_id``) hold fewer than two
#: tool results, nothing to order: the rule then costs three byte counts, no walk.
_MARKERS = (b"call_id", b"tool_use_id", b"functionResponse")


def _result(item: Any, shape: ResultShape) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if shape.wrapper is not None:
        inner = item.get(shape.wrapper)
        return inner if isinstance(inner, dict) else None
    if shape.marker is not None and item.get(shape.marker[0]) == shape.marker[1]:
        return item
    return None


def _order(items: list[Any], shape: ResultShape) -> list[Any] | None:
    """``items`` with each run of consecutive results sorted by call id (then tool name);
    ``None`` when already in that order."""

    def key(item: Any) -> tuple[str, str]:
        result = _result(item, shape) or {}
        call_id, name = result.get(shape.call_id), result.get(shape.name) if shape.name else ""
        return (call_id if isinstance(call_id, str) else "", name if isinstance(name, str) else "")

    out, changed, start = list(items), False, 0
    while start < len(out):
        end = start
        while end < len(out) and _result(out[end], shape) is not None:
            end += 1
        if end - start > 1:
            run = sorted(out[start:end], key=key)
            if any(a is not b for a, b in zip(run, out[start:end], strict=True)):
                out[start:end], changed = run, True
        start = end + 1 if end == start else end
    return out if changed else None


def parallel_tool_results(parts: KeyParts) -> KeyParts:
    """Each run of consecutive tool results in the order of their call ids.

    Real case: pydantic-ai runs the tools of one model turn concurrently and sends their
    results in the order they finished (see the module)."""
    body = parts.body
    raw = parts.raw
    if (raw and sum(raw.count(marker) for marker in _MARKERS) < 2) or not isinstance(body, dict):
        return parts
    api = api_for(parts.path)
    if api is None or not isinstance(conversation := body.get(api.conversation), list):
        return parts
    new = conversation
    for shape in api.results:
        if shape.inside is None:
            new = _order(new, shape) or new
            continue
        items = []
        for item in new:
            inner = item.get(shape.inside) if isinstance(item, dict) else None
            ordered = _order(inner, shape) if isinstance(inner, list) else None
            items.append(item if ordered is None else {**item, shape.inside: ordered})
        if any(a is not b for a, b in zip(items, new, strict=True)):
            new = items
    return parts if new is conversation else replace(parts, body={**body, api.conversation: new})
