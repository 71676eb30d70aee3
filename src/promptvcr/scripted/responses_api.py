"""OpenAI Responses (``/responses``): a ``response`` body, or its typed events from
``response.created`` to ``response.completed`` (``response.incomplete`` for an answer cut by
``length`` or ``content_filter``), each with its ``sequence_number``.

Output items come in the order OpenAI sends them: the reasoning (its summary), the message
(``output_text`` or ``refusal``), then one ``function_call`` per tool call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..cassettes.models import Response
from ..cassettes.sse import Event
from .rendering import Turn, argument_pieces, json_response, sse_response, text_pieces

__all__ = ["render_responses"]

_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def _usage(turn: Turn) -> dict[str, Any]:
    usage = turn.usage
    return {
        "input_tokens": usage.input,
        "input_tokens_details": {"cached_tokens": usage.cached},
        "output_tokens": usage.output,
        "output_tokens_details": {"reasoning_tokens": usage.thinking},
        "total_tokens": usage.total,
    }


def _response(turn: Turn, output: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The response object; ``output=None`` for the one that opens a stream."""
    body = turn.body
    reason = _INCOMPLETE.get(turn.finish)
    status = "in_progress" if output is None else "incomplete" if reason else "completed"
    return {
        "id": turn.make_id("resp_", length=50),
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": {"reason": reason} if reason and output is not None else None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": turn.model,
        "output": output or [],
        "parallel_tool_calls": True,
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None if output is None else _usage(turn),
        "user": None,
        "metadata": {},
    }


def _items(turn: Turn) -> list[dict[str, Any]]:
    """The output items, complete."""
    reply, items = turn.reply, []
    if reply.thinking is not None:
        summary = [{"type": "summary_text", "text": reply.thinking}]
        items.append({"id": turn.make_id("rs_", length=50), "type": "reasoning", "summary": summary})
    if reply.text or reply.refusal is not None or not (items or reply.tool_calls):
        content: list[dict[str, Any]] = []
        if reply.text or reply.refusal is None:
            content.append(
                {"type": "output_text", "annotations": [], "logprobs": [], "text": reply.text or ""}
            )
        if reply.refusal is not None:
            content.append({"type": "refusal", "refusal": reply.refusal})
        message_id = turn.make_id("msg_", length=50)
        items.append(
            {
                "id": message_id,
                "type": "message",
                "status": "completed",
                "content": content,
                "role": "assistant",
            }
        )
    for n, call in enumerate(reply.tool_calls):
        items.append(
            {
                "id": turn.make_id("fc_", n, length=50),
                "type": "function_call",
                "status": "completed",
                "arguments": call.arguments,
                "call_id": turn.make_id("call_", n),
                "name": call.name,
            }
        )
    return items


def _started(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as ``response.output_item.added`` shows it, before any delta."""
    if item["type"] == "reasoning":
        return {**item, "summary": []}
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    return {**item, "status": "in_progress", "arguments": ""}


def _empty(part: dict[str, Any]) -> dict[str, Any]:
    return {**part, "text": ""} if part["type"] == "output_text" else {**part, "refusal": ""}


def _item_events(index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The events of one output item, without their sequence numbers."""
    at = {"item_id": item["id"], "output_index": index}
    yield {"type": "response.output_item.added", "output_index": index, "item": _started(item)}
    if item["type"] == "reasoning":
        for n, part in enumerate(item["summary"]):
            where = {**at, "summary_index": n}
            yield {"type": "response.reasoning_summary_part.added", **where, "part": {**part, "text": ""}}
            for piece in text_pieces(part["text"]):
                yield {"type": "response.reasoning_summary_text.delta", **where, "delta": piece}
            yield {"type": "response.reasoning_summary_text.done", **where, "text": part["text"]}
            yield {"type": "response.reasoning_summary_part.done", **where, "part": part}
    elif item["type"] == "message":
        for n, part in enumerate(item["content"]):
            where = {**at, "content_index": n}
            yield {"type": "response.content_part.added", **where, "part": _empty(part)}
            if part["type"] == "output_text":
                for piece in text_pieces(part["text"]):
                    yield {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
                yield {"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []}
            else:
                for piece in text_pieces(part["refusal"]):
                    yield {"type": "response.refusal.delta", **where, "delta": piece}
                yield {"type": "response.refusal.done", **where, "refusal": part["refusal"]}
            yield {"type": "response.content_part.done", **where, "part": part}
    else:
        for piece in argument_pieces(item["arguments"]):
            yield {"type": "response.function_call_arguments.delta", **at, "delta": piece}
        yield {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]}
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def _events(turn: Turn) -> list[Event]:
    items = _items(turn)
    opening = _response(turn, None)
    closing = _response(turn, items)
    done = "response.completed" if closing["status"] == "completed" else "response.incomplete"
    datas = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
        *(event for index, item in enumerate(items) for event in _item_events(index, item)),
        {"type": done, "response": closing},
    ]
    return [
        {"event": data["type"], "data": {"type": data["type"], "sequence_number": n, **data}}
        for n, data in enumerate(datas)
    ]


def render_responses(turn: Turn) -> Response:
    if turn.stream:
        return sse_response(turn, _events(turn))
    return json_response(turn, _response(turn, _items(turn)))
