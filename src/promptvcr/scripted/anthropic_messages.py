"""Anthropic messages (``/v1/messages``): a ``message`` body, or the events from
``message_start`` to ``message_stop``: a ``content_block_start``, its deltas
(``thinking_delta`` then ``signature_delta``, ``text_delta``, ``input_json_delta``) and a
``content_block_stop`` per block, a ``ping`` after the first, then ``message_delta`` with the
stop reason and the usage.

Anthropic has no refusal field: a refusal is its text, with ``stop_reason: refusal``.
"""

from __future__ import annotations

import json
from typing import Any

from ..cassettes.models import Response
from ..cassettes.sse import Event
from .rendering import Turn, argument_pieces, json_response, sse_response, text_pieces

__all__ = ["render_anthropic"]

_STOP = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
    "refusal": "refusal",
}


def _usage(turn: Turn, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": turn.usage.input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": turn.usage.cached,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def _blocks(turn: Turn) -> list[dict[str, Any]]:
    reply, blocks = turn.reply, list[dict[str, Any]]()
    if reply.thinking is not None:
        signature = turn.make_id("sig", length=64)
        blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
    text = "".join(part for part in (reply.text, reply.refusal) if part)
    if text or not (blocks or reply.tool_calls):
        blocks.append({"type": "text", "text": text})
    for n, call in enumerate(reply.tool_calls):
        blocks.append(
            {"type": "tool_use", "id": turn.make_id("toolu_", n), "name": call.name, "input": dict(call.args)}
        )
    return blocks


def _message(
    turn: Turn, content: list[dict[str, Any]], stop: str | None, output_tokens: int
) -> dict[str, Any]:
    return {
        "model": turn.model,
        "id": turn.make_id("msg_"),
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": _usage(turn, output_tokens),
    }


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    kind = block["type"]
    if kind == "thinking":
        start = {**block, "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in text_pieces(block["thinking"])]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        start = {**block, "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in text_pieces(block["text"])]
    else:
        start = {**block, "input": {}}
        arguments = (
            json.dumps(block["input"], ensure_ascii=False, separators=(",", ":")) if block["input"] else ""
        )
        deltas = [{"type": "input_json_delta", "partial_json": ""}]
        deltas += [
            {"type": "input_json_delta", "partial_json": piece} for piece in argument_pieces(arguments)
        ]
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _events(turn: Turn) -> list[Event]:
    stop = _STOP.get(turn.finish, turn.finish)
    datas: list[dict[str, Any]] = [{"type": "message_start", "message": _message(turn, [], None, 1)}]
    for index, block in enumerate(_blocks(turn)):
        events = _block_events(index, block)
        datas += events[:1] + ([{"type": "ping"}] if index == 0 else []) + events[1:]
    usage = {
        k: v
        for k, v in _usage(turn, turn.usage.output).items()
        if k not in ("cache_creation", "service_tier")
    }
    datas.append(
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage}
    )
    datas.append({"type": "message_stop"})
    return [{"event": data["type"], "data": data} for data in datas]


def render_anthropic(turn: Turn) -> Response:
    if turn.stream:
        return sse_response(turn, _events(turn))
    stop = _STOP.get(turn.finish, turn.finish)
    return json_response(turn, _message(turn, _blocks(turn), stop, turn.usage.output))
