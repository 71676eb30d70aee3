"""OpenAI chat completions (``/chat/completions``, also every OpenAI-compatible API): a
``chat.completion`` body, or ``chat.completion.chunk`` events ending in ``[DONE]``.

Thinking goes in ``reasoning_content`` (as DeepSeek and the compatible APIs send it; OpenAI
itself never returns reasoning here); the usage chunk comes when the request asked for it
with ``stream_options.include_usage``, as OpenAI does.
"""

from __future__ import annotations

from typing import Any

from ..cassettes.models import Response
from ..cassettes.sse import Event
from .rendering import Turn, argument_pieces, json_response, sse_response, text_pieces

__all__ = ["render_chat"]

_FINISH = {"refusal": "stop"}


def _usage(turn: Turn) -> dict[str, Any]:
    usage = turn.usage
    return {
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.total,
        "prompt_tokens_details": {"cached_tokens": usage.cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.thinking,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _envelope(turn: Turn, obj: str) -> dict[str, Any]:
    return {
        "id": turn.make_id("chatcmpl-", length=29),
        "object": obj,
        "created": turn.created,
        "model": turn.model,
        "service_tier": "default",
        "system_fingerprint": turn.make_id("fp_", length=10),
    }


def _message(turn: Turn) -> dict[str, Any]:
    reply = turn.reply
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text if reply.text or not (reply.tool_calls or reply.refusal) else None,
        "refusal": reply.refusal,
        "annotations": [],
    }
    if reply.thinking is not None:
        message["reasoning_content"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": turn.make_id("call_", n),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for n, call in enumerate(reply.tool_calls)
        ]
    return message


def _body(turn: Turn) -> dict[str, Any]:
    choice = {
        "index": 0,
        "message": _message(turn),
        "logprobs": None,
        "finish_reason": _FINISH.get(turn.finish, turn.finish),
    }
    return {**_envelope(turn, "chat.completion"), "choices": [choice], "usage": _usage(turn)}


def _deltas(turn: Turn) -> list[dict[str, Any]]:
    reply = turn.reply
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    deltas += [{"reasoning_content": piece} for piece in text_pieces(reply.thinking or "")]
    deltas += [{"content": piece} for piece in text_pieces(reply.text or "")]
    deltas += [{"refusal": piece} for piece in text_pieces(reply.refusal or "")]
    for n, call in enumerate(reply.tool_calls):
        first = {"index": n, "id": turn.make_id("call_", n), "type": "function"}
        deltas.append({"tool_calls": [{**first, "function": {"name": call.name, "arguments": ""}}]})
        deltas += [
            {"tool_calls": [{"index": n, "function": {"arguments": piece}}]}
            for piece in argument_pieces(call.arguments)
        ]
    return deltas


def _events(turn: Turn) -> list[Event]:
    options = turn.body.get("stream_options")
    with_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    envelope = _envelope(turn, "chat.completion.chunk")
    tail: dict[str, Any] = {"usage": None} if with_usage else {}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {"data": {**envelope, "choices": [choice], **tail}}

    events = [chunk(delta) for delta in _deltas(turn)]
    events.append(chunk({}, _FINISH.get(turn.finish, turn.finish)))
    if with_usage:
        events.append({"data": {**envelope, "choices": [], "usage": _usage(turn)}})
    events.append({"data": "[DONE]"})
    return events


def render_chat(turn: Turn) -> Response:
    return sse_response(turn, _events(turn)) if turn.stream else json_response(turn, _body(turn))
